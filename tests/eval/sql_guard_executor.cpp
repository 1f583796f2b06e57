// `candor sql-guard` with its executor layer: each statement also runs in a
// real sandboxed executor process, and that layer's own verdict is shown.

#include "eval/sql_guard_tool.hpp"

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "tests/support/sales_db.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
namespace json = boost::json;

namespace {

const std::string& shared_db() {
  return test::shared_sales_db();
}

std::vector<json::object> run_tool(const std::string& input,
                                   int64_t deadline_ms = 5000,
                                   const std::string& catalog_path = {}) {
  eval::guard_tool_options opts;
  data::executor_settings exec;
  exec.executable = data::default_executor_binary();
  exec.catalog_path = catalog_path;
  opts.executor = exec;
  opts.deadline_ms = deadline_ms;
  std::istringstream in{input};
  std::ostringstream out;
  auto res = eval::run_sql_guard_tool(in, out, shared_db(), opts);
  BOOST_REQUIRE_MESSAGE(res.ok(), (res.ok() ? "" : res.err().message));
  std::vector<json::object> lines;
  std::istringstream text{out.str()};
  std::string line;
  while (std::getline(text, line))
    lines.push_back(json::parse(line).as_object());
  return lines;
}

std::string line_for(const std::string& id, const std::string& sql) {
  json::object obj;
  obj["id"] = id;
  obj["sql"] = sql;
  return json::serialize(obj) + "\n";
}

std::string str(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : std::string{"null"};
}

const json::object& executor_layer(const json::object& line) {
  return line.at("layers").at("executor").as_object();
}

} // namespace

BOOST_AUTO_TEST_SUITE(eval_sql_guard_executor)

BOOST_AUTO_TEST_CASE(each_layer_reports_its_own_verdict) {
  auto lines = run_tool(
    line_for("ok", "SELECT channel, count(*) FROM orders GROUP BY channel")
    + line_for("pii", "SELECT email FROM customers")
    + line_for("overflow", "SELECT sum(9223372036854775807) FROM orders"));
  BOOST_REQUIRE_EQUAL(lines.size(), 3u);
  // Allowed everywhere; the executor ran it.
  BOOST_CHECK_EQUAL(str(lines[0].at("verdict")), "allow");
  auto& ok = executor_layer(lines[0]);
  BOOST_CHECK_EQUAL(str(ok.at("verdict")), "allow");
  BOOST_CHECK_GT(ok.at("rowCount").as_int64(), 0);
  // No rule and no message are null, like every other layer's (they were
  // [null]: json::value{nullptr} is an array).
  BOOST_CHECK(ok.at("rule").is_null());
  BOOST_CHECK(ok.at("message").is_null());
  // Personal data: the authorizer decides, and the executor's own
  // authorizer refuses it too.
  BOOST_CHECK_EQUAL(str(lines[1].at("verdict")), "block");
  BOOST_CHECK_NE(str(lines[1].at("layer")), "sql_executor");
  auto& pii = executor_layer(lines[1]);
  BOOST_CHECK_EQUAL(str(pii.at("verdict")), "block");
  BOOST_CHECK_EQUAL(str(pii.at("rule")), "sql_failed");
  // Passes the policy and the authorizer, fails at run time: the executor
  // is the blocking layer.
  BOOST_CHECK_EQUAL(str(lines[2].at("verdict")), "block");
  BOOST_CHECK_EQUAL(str(lines[2].at("layer")), "sql_executor");
  BOOST_CHECK_NE(str(lines[2].at("reason")).find("overflow"),
                 std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_statement_killed_at_the_deadline_does_not_stop_the_run) {
  auto lines = run_tool(
    line_for("slow", "SELECT count(*) FROM orders o JOIN orders p ON "
                     "p.total_cents + o.total_cents = 7 JOIN orders q ON "
                     "q.total_cents = p.total_cents")
      + line_for("next", "SELECT count(*) FROM regions"),
    300);
  BOOST_REQUIRE_EQUAL(lines.size(), 2u);
  auto& slow = executor_layer(lines[0]);
  BOOST_CHECK_EQUAL(str(slow.at("verdict")), "block");
  BOOST_CHECK_EQUAL(str(slow.at("rule")), "sql_timeout");
  // A fresh executor serves the next statement.
  BOOST_CHECK_EQUAL(str(executor_layer(lines[1]).at("verdict")), "allow");
}

// The executor takes its allowlist from the catalog it is given (--catalog
// FILE, sql.catalog), not from the built-in one: with orders.order_number
// withheld by a catalog of one's own, its authorizer refuses the column.
BOOST_AUTO_TEST_CASE(the_executor_reads_the_catalog_it_is_given) {
  test::temp_dir dir;
  auto doc = json::parse([] {
    std::ifstream in{data::catalog::default_path()};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }());
  for (auto& t : doc.at("tables").as_array()) {
    auto& table = t.as_object();
    if (table.at("name").as_string() != "orders")
      continue;
    auto& cols = table.at("columns").as_array();
    for (auto it = cols.begin(); it != cols.end(); ++it)
      if (it->as_object().at("name").as_string() == "order_number") {
        cols.erase(it);
        break;
      }
    table["denied_columns"] = json::array{
      json::object{{"name", "order_number"}, {"reason", "withheld here"}}};
  }
  auto path = dir.file("own-catalog.json");
  std::ofstream{path} << json::serialize(doc);
  BOOST_REQUIRE(data::catalog::load(path).ok());
  const auto sql = line_for("num", "SELECT order_number FROM orders LIMIT 1");
  auto built_in = run_tool(sql);
  BOOST_REQUIRE_EQUAL(built_in.size(), 1u);
  BOOST_TEST(str(executor_layer(built_in[0]).at("verdict")) == "allow");
  auto own = run_tool(sql, 5000, path);
  BOOST_REQUIRE_EQUAL(own.size(), 1u);
  BOOST_TEST(str(executor_layer(own[0]).at("verdict")) == "block",
             json::serialize(own[0]));
}

BOOST_AUTO_TEST_SUITE_END()
