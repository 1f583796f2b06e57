// JSON text as candor writes it: Boost.JSON's output except for doubles,
// which keep their shortest round-trip decimal form instead of exponent
// form, and non-finite numbers, which become null.

#include "domain/json_text.hpp"
#include "domain/types.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/test/unit_test.hpp>

namespace json = boost::json;
using candor::domain::json_text;

BOOST_AUTO_TEST_SUITE(domain_json_text)

BOOST_AUTO_TEST_CASE(doubles_are_written_in_plain_decimal_form) {
  BOOST_TEST(json_text(json::value(44.799)) == "44.799");
  BOOST_TEST(json_text(json::value(0.0)) == "0.0");
  BOOST_TEST(json_text(json::value(-0.0)) == "0.0");
  BOOST_TEST(json_text(json::value(1.5)) == "1.5");
  BOOST_TEST(json_text(json::value(100.0)) == "100.0");
  BOOST_TEST(json_text(json::value(-2.25)) == "-2.25");
  BOOST_TEST(json_text(json::value(5.385e-05)) == "5.385e-05");
  // Boost.JSON itself writes these in exponent form.
  BOOST_TEST(json::serialize(json::value(44.799)) == "4.4799E1");
}

BOOST_AUTO_TEST_CASE(non_finite_numbers_become_null) {
  BOOST_TEST(json_text(json::value(std::numeric_limits<double>::infinity()))
             == "null");
  BOOST_TEST(json_text(json::value(std::nan(""))) == "null");
}

BOOST_AUTO_TEST_CASE(every_double_reads_back_exactly) {
  for (double x : {0.0, 1.0, 100.0, 0.1, 1.0 / 3.0, 123456789.123, 1e-300,
                   1.7976931348623157e308, 4.9e-324, 0.0001, 2.5e20}) {
    auto back = json::parse(json_text(json::value(x)));
    BOOST_TEST_REQUIRE(back.is_double(), x); // a double stays a double
    BOOST_TEST(back.as_double() == x, x);
  }
}

BOOST_AUTO_TEST_CASE(strings_are_escaped_like_boost_json) {
  std::string nasty = "quote \" backslash \\ slash / nl \n tab \t cr \r";
  nasty += std::string{"\x01\x1f", 2};
  nasty += " bell \b ff \f utf8 \xc3\xa9 \xe2\x82\xac";
  json::value v(nasty);
  BOOST_TEST(json_text(v) == json::serialize(v));
  BOOST_TEST(json::parse(json_text(v)).as_string() == nasty);
}

BOOST_AUTO_TEST_CASE(documents_match_boost_json_apart_from_doubles) {
  auto doc = json::parse(R"({"a":[1,-2,18446744073709551615,true,false,null],
    "b":{"c":"d","e":[],"f":{}},"g":"h\u0000i","k":-9223372036854775808})");
  BOOST_TEST(json_text(doc) == json::serialize(doc));
  BOOST_TEST(json_text(doc.as_object()) == json::serialize(doc));
  BOOST_TEST(json_text(doc.at("a").as_array()) == json::serialize(doc.at("a")));
  auto with_double = json::parse(R"({"p50":44.799,"rows":[[1,2.5]]})");
  BOOST_TEST(json_text(with_double) == R"({"p50":44.799,"rows":[[1,2.5]]})");
}

BOOST_AUTO_TEST_CASE(every_escape_at_every_position) {
  // Strings are scanned 8 bytes at a time: put each byte that needs an
  // escape (and a few that do not) at every offset of strings of every
  // length around the word size; the text must be Boost.JSON's.
  std::string specials{"\"\\\b\f\n\r\t\x01\x1f\x7f/ \xc3\xa9~"};
  specials.push_back('\0');
  for (size_t len = 1; len <= 20; ++len)
    for (size_t at = 0; at < len; ++at)
      for (char c : specials) {
        std::string text(len, 'a');
        text[at] = c;
        json::value v(text);
        BOOST_TEST_CONTEXT("length " << len << ", byte " << int(c) << " at "
                                     << at) {
          BOOST_TEST(json_text(v) == json::serialize(v));
        }
      }
}

BOOST_AUTO_TEST_CASE(the_streaming_writer_writes_what_json_text_writes) {
  // json_text_writer (the response and log writer): nested containers,
  // commas between members and elements only, every scalar kind, an empty
  // key, and a key longer than the writer's one-append buffer.
  std::string long_key(100, 'k');
  std::string out;
  candor::domain::json_text_writer w{out};
  w.begin_object();
  w.key("a");
  w.integer(-7);
  w.key("");
  w.string("x\"y");
  w.key(long_key);
  w.begin_array();
  w.null();
  w.boolean(true);
  w.boolean(false);
  w.begin_object();
  w.end_object();
  w.begin_array();
  w.end_array();
  w.begin_array();
  w.integer(1);
  w.integer(2);
  w.end_array();
  w.end_array();
  w.key("o");
  w.begin_object();
  w.key("r");
  w.real(2.5);
  w.key("s");
  w.string("");
  w.end_object();
  w.end_object();
  json::object expected{
    {"a", -7},
    {"", "x\"y"},
    {long_key, json::array{nullptr, true, false, json::object{}, json::array{},
                           json::array{1, 2}}},
    {"o", json::object{{"r", 2.5}, {"s", ""}}}};
  // json_text: Boost.JSON's text but for the double (tested above).
  BOOST_TEST(out == json_text(expected));
  BOOST_TEST(json::parse(out) == json::value(expected));
}

BOOST_AUTO_TEST_CASE(summed_costs_print_without_float_noise) {
  // Model-call costs add up with binary noise (0.1 + 0.2 is
  // 0.30000000000000004 in doubles); usage totals are rounded to a
  // trillionth of a dollar.
  candor::domain::llm_usage total;
  candor::domain::llm_usage call;
  call.cost_usd = 0.1;
  candor::domain::accumulate(total, call);
  call.cost_usd = 0.2;
  candor::domain::accumulate(total, call);
  BOOST_TEST(json_text(json::value(0.1 + 0.2)) != "0.3");
  BOOST_TEST(json_text(json::value(total.cost_usd)) == "0.3");
  BOOST_TEST(candor::domain::round_usd(1e-13) == 0.0);
  BOOST_TEST(candor::domain::round_usd(5.385e-05) == 5.385e-05);
  BOOST_TEST(candor::domain::round_usd(5.3849999999e-06) == 5.385e-06);
}

BOOST_AUTO_TEST_CASE(duplicate_members_are_found_with_their_path) {
  auto dup = [](std::string_view text) {
    // Only valid JSON is ever passed in.
    boost::system::error_code ec;
    boost::json::parse(text, ec);
    BOOST_REQUIRE_MESSAGE(!ec, text);
    return candor::domain::duplicate_member(text).value_or("(none)");
  };
  BOOST_TEST(dup(R"({})") == "(none)");
  BOOST_TEST(dup(R"([1, {"a": 1}, {"a": 2}])") == "(none)");
  BOOST_TEST(dup(R"({"a": 1, "b": {"a": 2}, "c": [{"a": 3}]})") == "(none)");
  // Braces, quotes, colons and commas inside strings are text.
  BOOST_TEST(dup(R"({"a": "x\"y, \"a\": {", "b": "}", "c": "[\"a\"]"})")
             == "(none)");
  BOOST_TEST(dup(R"({"a": 1, "a": 2})") == "a");
  BOOST_TEST(dup(R"({"http": {"port": 1, "threads": 2, "port": 3}})")
             == "http.port");
  BOOST_TEST(dup(R"({"items": [{"n": 1}, {"n": 2, "m": 0, "n": 3}]})")
             == "items[1].n");
  BOOST_TEST(dup(R"([[0], [1, {"x": {"y": 1, "y": 2}}]])") == "[1][1].x.y");
  // Names are compared unescaped; an escaped backslash ends no string.
  BOOST_TEST(dup(R"({"a": 1, "\u0061": 2})") == "a");
  BOOST_TEST(dup(R"({"a\\": 1, "a\u005c": 2})") == "a\\");
  BOOST_TEST(dup(R"({"a\\": 1, "a": 2})") == "(none)");
  // The first duplicate in text order is named.
  BOOST_TEST(dup(R"({"b": {"c": 1, "c": 2}, "b": 3})") == "b.c");
  BOOST_TEST(dup(R"({"": {"x": 1, "x": 2}})") == ".x");
  // A 1 MiB model reply can hold 100,000 names: each is compared with a
  // sorted neighbour, not with every earlier name.
  std::string big = "{";
  for (int i = 0; i < 100000; ++i)
    big += "\"k" + std::to_string(i) + "\":0,";
  BOOST_TEST(dup(big + "\"last\":1}") == "(none)");
  BOOST_TEST(dup(big + "\"k99999\":1}") == "k99999");
}

BOOST_AUTO_TEST_SUITE_END()
