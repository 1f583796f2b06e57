// Tests of `candor sql-guard`: one verdict per line, bad and over-long
// input lines, correctable mistakes and a missing database.

#include "eval/sql_guard_tool.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/sales/gen.hpp"
#include "tests/support/sales_db.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
namespace json = boost::json;

namespace {

const std::string& shared_db() {
  return test::shared_sales_db();
}

struct sales_fixture {
  test::temp_dir dir{"candor-sqlguardtool"};
  const std::string& db = shared_db();

  /// Runs the tool on `input`; returns the parsed output lines.
  std::vector<json::object> run(const std::string& input,
                                eval::guard_tool_summary* summary = nullptr) {
    std::istringstream in{input};
    std::ostringstream out;
    auto res = eval::run_sql_guard_tool(in, out, db);
    BOOST_REQUIRE_MESSAGE(res.ok(), (res.ok() ? "" : res.err().message));
    if (summary != nullptr)
      *summary = *res;
    std::vector<json::object> lines;
    std::istringstream text{out.str()};
    std::string line;
    while (std::getline(text, line)) {
      std::error_code ec;
      auto doc = json::parse(line, ec);
      BOOST_REQUIRE_MESSAGE(!ec, "output line is not JSON: " << line);
      BOOST_REQUIRE(doc.is_object());
      lines.push_back(doc.as_object());
    }
    return lines;
  }
};

std::string str(const json::object& obj, std::string_view key) {
  auto* x = obj.if_contains(key);
  BOOST_REQUIRE_MESSAGE(x != nullptr, "missing field " << key);
  BOOST_REQUIRE_MESSAGE(x->is_string(), "field " << key << " not a string: "
                                                 << json::serialize(*x));
  return std::string{x->as_string()};
}

const json::object& layer(const json::object& obj, std::string_view name) {
  return obj.at("layers").as_object().at(name).as_object();
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(eval_sql_guard_tool, sales_fixture)

BOOST_AUTO_TEST_CASE(every_line_gets_its_own_verdict) {
  std::string input
    = R"({"id": "rev", "sql": "SELECT channel, SUM(total_cents) AS revenue FROM orders WHERE order_date >= '2025-01-01' GROUP BY channel ORDER BY revenue DESC"})"
      "\n"
      R"({"id": "del", "sql": "DELETE FROM orders"})"
      "\n"
      R"({"id": "pii", "sql": "SELECT email FROM customers"})"
      "\n"
      "this is not json\n"
      "\n"
      R"({"id": 17, "sql": "SELECT COUNT(*) FROM products"})"
      "\n";
  eval::guard_tool_summary summary;
  auto lines = run(input, &summary);
  BOOST_REQUIRE_EQUAL(lines.size(), 5u);
  // A legitimate revenue query: every layer allows it.
  auto& rev = lines[0];
  BOOST_CHECK_EQUAL(str(rev, "id"), "rev");
  BOOST_CHECK_EQUAL(str(rev, "verdict"), "allow");
  BOOST_CHECK(rev.at("layer").is_null());
  BOOST_CHECK(rev.at("rule").is_null());
  BOOST_CHECK_EQUAL(str(layer(rev, "static_policy"), "verdict"), "allow");
  BOOST_CHECK_NE(str(layer(rev, "static_policy"), "sql").find("LIMIT"),
                 std::string::npos);
  BOOST_CHECK_EQUAL(str(layer(rev, "authorizer"), "verdict"), "allow");
  BOOST_CHECK_EQUAL(str(layer(rev, "authorizer"), "stage"), "bytecode");
  BOOST_CHECK_EQUAL(str(layer(rev, "executor"), "verdict"), "not_available");
  // A write: blocked by the static policy, and by the authorizer on its own.
  auto& del = lines[1];
  BOOST_CHECK_EQUAL(str(del, "id"), "del");
  BOOST_CHECK_EQUAL(str(del, "verdict"), "block");
  BOOST_CHECK_EQUAL(str(del, "layer"), "sql_policy");
  BOOST_CHECK_EQUAL(str(del, "rule"), "not_select");
  BOOST_CHECK(!str(del, "reason").empty());
  BOOST_CHECK_EQUAL(str(layer(del, "static_policy"), "verdict"), "block");
  BOOST_CHECK_EQUAL(str(layer(del, "authorizer"), "verdict"), "block");
  BOOST_CHECK(!str(layer(del, "authorizer"), "rule").empty());
  // Personal data: the policy lets it through, the authorizer does not.
  auto& pii = lines[2];
  BOOST_CHECK_EQUAL(str(pii, "verdict"), "block");
  BOOST_CHECK_EQUAL(str(pii, "layer"), "sql_authorizer");
  BOOST_CHECK_EQUAL(str(pii, "rule"), "denied_column");
  BOOST_CHECK_EQUAL(str(layer(pii, "static_policy"), "verdict"), "allow");
  BOOST_CHECK_EQUAL(str(layer(pii, "authorizer"), "verdict"), "block");
  // A malformed line is reported and processing goes on.
  auto& bad = lines[3];
  BOOST_CHECK(bad.at("id").is_null());
  BOOST_CHECK_EQUAL(str(bad, "verdict"), "error");
  BOOST_CHECK(!str(bad, "reason").empty());
  BOOST_CHECK_EQUAL(bad.at("line").as_int64(), 4);
  BOOST_CHECK(!bad.contains("layers"));
  // A numeric id is echoed as a number; the blank line was skipped.
  auto& num = lines[4];
  BOOST_REQUIRE(num.at("id").is_int64());
  BOOST_CHECK_EQUAL(num.at("id").as_int64(), 17);
  BOOST_CHECK_EQUAL(num.at("line").as_int64(), 6);
  BOOST_CHECK_EQUAL(str(num, "verdict"), "allow");
  BOOST_CHECK_EQUAL(summary.allowed, 2);
  BOOST_CHECK_EQUAL(summary.blocked, 2);
  BOOST_CHECK_EQUAL(summary.errors, 1);
}

BOOST_AUTO_TEST_CASE(bad_input_lines_are_errors) {
  std::string huge(eval::guard_tool_max_line + 10, 'x');
  std::string input
    = R"({"id": "a"})"
      "\n"
      R"({"id": "b", "sql": 42})"
      "\n"
      R"({"id": "c", "sql": "   "})"
      "\n"
      R"({"id": true, "sql": "SELECT 1"})"
      "\n"
      R"([1, 2])"
      "\n"
      R"({"id": "dup", "sql": "SELECT email FROM customers", "sql": "SELECT 1"})"
      "\n"
      + huge + "\n"
      + R"({"id": "ok", "sql": "SELECT category FROM categories"})";
  eval::guard_tool_summary summary;
  auto lines = run(input, &summary);
  BOOST_REQUIRE_EQUAL(lines.size(), 8u);
  for (size_t i = 0; i < 7; ++i) {
    BOOST_TEST_CONTEXT("line " << i + 1) {
      BOOST_CHECK_EQUAL(str(lines[i], "verdict"), "error");
      BOOST_CHECK(!str(lines[i], "reason").empty());
    }
  }
  BOOST_CHECK_EQUAL(str(lines[0], "id"), "a");
  BOOST_CHECK_NE(str(lines[0], "reason").find("sql"), std::string::npos);
  BOOST_CHECK_EQUAL(str(lines[1], "id"), "b");
  BOOST_CHECK_EQUAL(str(lines[2], "id"), "c");
  BOOST_CHECK(lines[3].at("id").is_null());
  // Two "sql" members: neither is judged (the parser kept the last).
  BOOST_CHECK_EQUAL(str(lines[5], "reason"), "\"sql\" appears more than once");
  BOOST_CHECK_NE(str(lines[6], "reason").find("longer"), std::string::npos);
  // The last line has no trailing newline and is still judged.
  BOOST_CHECK_EQUAL(str(lines[7], "id"), "ok");
  BOOST_CHECK_EQUAL(str(lines[7], "verdict"), "allow");
  BOOST_CHECK_EQUAL(summary.allowed, 1);
  BOOST_CHECK_EQUAL(summary.blocked, 0);
  BOOST_CHECK_EQUAL(summary.errors, 7);
}

BOOST_AUTO_TEST_CASE(an_over_long_line_keeps_an_id_it_starts_with) {
  std::string filler(eval::guard_tool_max_line, ' ');
  std::string input = R"({"id": "long \"one\"", "sql": "SELECT 1)" + filler
                      + "\"}\n" + R"( { "id" : 17, "sql": "SELECT 1)" + filler
                      + "\"}\n" + R"({"sql": "SELECT 1)" + filler
                      + R"(", "id": "late"})" + "\n";
  auto lines = run(input);
  BOOST_REQUIRE_EQUAL(lines.size(), 3u);
  BOOST_CHECK_EQUAL(str(lines[0], "id"), "long \"one\"");
  BOOST_CHECK_EQUAL(lines[1].at("id").as_int64(), 17);
  BOOST_CHECK(lines[2].at("id").is_null());
  for (auto& line : lines) {
    BOOST_CHECK_EQUAL(str(line, "verdict"), "error");
    BOOST_CHECK_NE(str(line, "reason").find("longer than 102400 bytes"),
                   std::string::npos);
  }
  // When the id cannot be read, the reason says why.
  BOOST_CHECK_NE(str(lines[2], "reason").find("first member"),
                 std::string::npos);
  BOOST_CHECK_EQUAL(str(lines[0], "reason").find("first member"),
                    std::string::npos);
}

BOOST_AUTO_TEST_CASE(correctable_mistakes_are_errors_with_their_layer) {
  auto lines = run(R"({"id": 1, "sql": "SELECT no_such_col FROM orders"})"
                   "\n");
  BOOST_REQUIRE_EQUAL(lines.size(), 1u);
  BOOST_CHECK_EQUAL(str(lines[0], "verdict"), "error");
  BOOST_CHECK_EQUAL(str(lines[0], "layer"), "sql_authorizer");
  BOOST_CHECK_EQUAL(str(lines[0], "rule"), "no_such_column");
  BOOST_CHECK_EQUAL(str(layer(lines[0], "authorizer"), "verdict"),
                    "correctable");
}

BOOST_AUTO_TEST_CASE(missing_database_is_an_error) {
  std::istringstream in{R"({"id": 1, "sql": "SELECT 1"})"};
  std::ostringstream out;
  auto res = eval::run_sql_guard_tool(in, out, dir.file("absent.db"));
  BOOST_CHECK(!res.ok());
  BOOST_CHECK(out.str().empty());
}

BOOST_AUTO_TEST_SUITE_END()
