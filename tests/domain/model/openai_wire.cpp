// The OpenAI wire format as pure functions: bodies, responses, statuses,
// Retry-After, prices and the guard verdict.

#include "domain/model/openai_wire.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

using namespace candor;
using namespace candor::domain;

namespace {

boost::json::object body_of(const chat_spec& spec) {
  return boost::json::parse(make_chat_body(spec)).as_object();
}

constexpr auto schema = R"({"type":"object","properties":{"route":)"
                        R"({"type":"string"}},"required":["route"],)"
                        R"("additionalProperties":false})";

} // namespace

BOOST_AUTO_TEST_SUITE(openai_wire)

BOOST_AUTO_TEST_CASE(a_schema_becomes_structured_output) {
  chat_spec spec;
  spec.model = "m1";
  spec.system = "sys";
  spec.user = "<question>q</question>";
  spec.max_tokens = 42;
  spec.schema_name = "router";
  spec.schema = schema;
  auto b = body_of(spec);
  BOOST_CHECK_EQUAL(b.at("model").as_string(), "m1");
  BOOST_CHECK_EQUAL(b.at("max_tokens").as_int64(), 42);
  auto& msgs = b.at("messages").as_array();
  BOOST_REQUIRE_EQUAL(msgs.size(), 2u);
  BOOST_CHECK_EQUAL(msgs[0].at("role").as_string(), "system");
  BOOST_CHECK_EQUAL(msgs[0].at("content").as_string(), "sys");
  BOOST_CHECK_EQUAL(msgs[1].at("content").as_string(),
                    "<question>q</question>");
  auto& fmt = b.at("response_format").as_object();
  BOOST_CHECK_EQUAL(fmt.at("type").as_string(), "json_schema");
  BOOST_CHECK_EQUAL(fmt.at("json_schema").at("name").as_string(), "router");
  BOOST_CHECK(fmt.at("json_schema").at("strict").as_bool());
  BOOST_CHECK(fmt.at("json_schema").at("schema").at("required").is_array());
}

BOOST_AUTO_TEST_CASE(json_object_mode_puts_the_schema_in_the_prompt) {
  chat_spec spec;
  spec.model = "m1";
  spec.system = "sys";
  spec.schema = schema;
  spec.response_format = "json_object";
  auto b = body_of(spec);
  BOOST_CHECK_EQUAL(b.at("response_format").at("type").as_string(),
                    "json_object");
  std::string sys{b.at("messages").as_array()[0].at("content").as_string()};
  BOOST_CHECK(sys.rfind("sys", 0) == 0);
  BOOST_CHECK(sys.find("\"additionalProperties\":false") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_schema_means_plain_text) {
  chat_spec spec;
  spec.model = "m1";
  auto b = body_of(spec);
  BOOST_CHECK(!b.contains("response_format"));
}

BOOST_AUTO_TEST_CASE(responses_are_parsed_with_usage) {
  auto r = parse_chat_response(
    R"({"model":"x","choices":[{"message":{"role":"assistant",)"
    R"("content":"hi"},"finish_reason":"length"}],)"
    R"("usage":{"prompt_tokens":12,"completion_tokens":3}})");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->text, "hi");
  BOOST_CHECK_EQUAL(r->finish_reason, "length");
  BOOST_CHECK_EQUAL(r->tokens_in, 12);
  BOOST_CHECK_EQUAL(r->tokens_out, 3);
  auto no_usage
    = parse_chat_response(R"({"choices":[{"message":{"content":"a"}}]})");
  BOOST_REQUIRE(no_usage);
  BOOST_CHECK_EQUAL(no_usage->tokens_in, -1);
  BOOST_CHECK_EQUAL(no_usage->finish_reason, "stop");
  for (auto bad : {"", "[]", "{}", R"({"choices":[]})",
                   R"({"choices":[{"message":{"content":null}}]})",
                   R"({"choices":[{"message":"x"}]})"}) {
    auto r2 = parse_chat_response(bad);
    BOOST_CHECK_MESSAGE(!r2, bad);
    if (!r2)
      BOOST_CHECK(r2.err().code == ec::llm_parse_failed);
  }
}

BOOST_AUTO_TEST_CASE(statuses_decide_retry_or_next_model) {
  BOOST_CHECK(classify_status(200) == status_action::ok);
  for (int s : {408, 429, 500, 502, 503, 504})
    BOOST_CHECK_MESSAGE(classify_status(s) == status_action::retry, s);
  for (int s : {400, 401, 403, 404, 422})
    BOOST_CHECK_MESSAGE(classify_status(s) == status_action::next_model, s);
}

BOOST_AUTO_TEST_CASE(retry_after_in_seconds_or_as_a_date) {
  auto now = std::chrono::system_clock::from_time_t(784111777); // 1994-11-06
  BOOST_CHECK_EQUAL(retry_after_ms("2", now), 2000);
  BOOST_CHECK_EQUAL(retry_after_ms(" 0 ", now), 0);
  BOOST_CHECK_EQUAL(retry_after_ms("100000", now, 30000), 30000);
  BOOST_CHECK_EQUAL(retry_after_ms("Sun, 06 Nov 1994 08:49:47 GMT", now),
                    10000);
  BOOST_CHECK_EQUAL(retry_after_ms("Sun, 06 Nov 1994 08:49:27 GMT", now), 0);
  BOOST_CHECK_EQUAL(retry_after_ms("", now), -1);
  BOOST_CHECK_EQUAL(retry_after_ms("-3", now), -1);
  BOOST_CHECK_EQUAL(retry_after_ms("soon", now), -1);
  // More digits than 64 bits hold: a long wait, so the cap (it was read as
  // "no Retry-After" and retried at once).
  BOOST_CHECK_EQUAL(retry_after_ms("99999999999999999999", now, 30000), 30000);
  BOOST_CHECK_EQUAL(retry_after_ms("-99999999999999999999", now, 30000), -1);
  // A date centuries away is the cap, not an overflow of the clock's
  // nanoseconds (found by tests/fuzz/openai_reply; its input is kept there).
  BOOST_CHECK_EQUAL(retry_after_ms("Wed, 21 Oct 2270 07:28:00 GMT", now, 30000),
                    30000);
  BOOST_CHECK_EQUAL(retry_after_ms("Mon, 01 Jan 1600 00:00:00 GMT", now), 0);
}

BOOST_AUTO_TEST_CASE(huge_usage_counts_are_capped) {
  // A hostile endpoint's counts must not overflow the sums (tokens, cost,
  // /stats): int64 max and 4e18 must not come through as they are.
  for (auto n :
       {"9223372036854775807", "4000000000000000000", "18446744073709551615"}) {
    auto r = parse_chat_response(
      std::string{R"({"choices":[{"message":{"content":"a"}}],"usage":)"}
      + R"({"prompt_tokens":)" + n + R"(,"completion_tokens":)" + n + "}}");
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->tokens_in, max_token_count);
    BOOST_CHECK_EQUAL(r->tokens_out, max_token_count);
    BOOST_CHECK(r->tokens_in + r->tokens_out > 0);
  }
}

BOOST_AUTO_TEST_CASE(prices_come_from_the_table_or_the_defaults) {
  BOOST_CHECK_GT(builtin_prices().size(), 0u);
  auto p = builtin_prices().lookup("gpt-4o-mini", {9, 9});
  BOOST_CHECK_CLOSE(p.input_per_mtok, 0.15, 1e-9);
  BOOST_CHECK_CLOSE(p.output_per_mtok, 0.60, 1e-9);
  auto unknown = builtin_prices().lookup("no-such-model", {1.5, 2.5});
  BOOST_CHECK_CLOSE(unknown.input_per_mtok, 1.5, 1e-9);
  BOOST_CHECK_CLOSE(unknown.output_per_mtok, 2.5, 1e-9);
  BOOST_CHECK(!price_table::parse(R"({"m":{"inputPerMTokUsd":-1,)"
                                  R"("outputPerMTokUsd":1}})"));
  BOOST_CHECK(!price_table::parse("[]"));
}

BOOST_AUTO_TEST_CASE(guard_replies_must_be_a_verdict) {
  BOOST_CHECK(parse_guard_reply("safe") == guard_verdict::safe);
  BOOST_CHECK(parse_guard_reply("  Safe.") == guard_verdict::safe);
  BOOST_CHECK(parse_guard_reply("UNSAFE: injection") == guard_verdict::unsafe);
  BOOST_CHECK(parse_guard_reply("unsafe") == guard_verdict::unsafe);
  BOOST_CHECK(parse_guard_reply("\nsafe\n") == guard_verdict::safe);
  BOOST_CHECK(parse_guard_reply("Unsafe. It asks for the system prompt.")
              == guard_verdict::unsafe);
  // "safe" passes a question only on its own: with anything after it the
  // reply is no verdict, and the question is blocked.
  for (auto bad :
       {"", "   ", "safely", "unsafety", "yes", "It is safe", "safe2", "saf",
        "safe, but actually this is unsafe", "safe\nunsafe",
        "safe-ish? no: unsafe", "safe_unsafe", "safe..",
        "safe. The user asks for the system prompt, "
        "which is unsafe."})
    BOOST_CHECK_MESSAGE(parse_guard_reply(bad) == guard_verdict::unparseable,
                        bad);
  BOOST_CHECK(parse_guard_reply(std::string_view{"safe\0unsafe", 11})
              == guard_verdict::unparseable);
}

BOOST_AUTO_TEST_SUITE_END()
