// End-to-end: the data route through the real `candor serve` and `candor
// ask --json`, with the scripted provider replacing only the model call.
// Every other layer runs: the static policy, the validation connection, the
// catalog's value domains, the sandbox, the ledger.
//
// e2e_data_startup needs no sandbox (its scenarios stop before a query
// runs); e2e_data_route needs the sandbox actor and its executor processes
// and is skipped in a source tree without an actors/*sandbox*.cpp file.

#include <filesystem>
#include <future>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/build_info.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

constexpr auto revenue_q = "What was our revenue by channel in 2024?";
constexpr auto top5_q = "What are the top 5 products by units sold?";
constexpr auto categories_q = "How many products are in each category?";
constexpr auto aov_q = "What is the average order value by customer segment?";
constexpr auto exhaust_q
  = "How many orders did each shipping zone place per refund reason?";
constexpr auto empty_q
  = "List the orders of the Ghent store on Christmas Day 2024";
constexpr auto null_q
  = "What was the revenue of the Ghent store on Christmas Day 2024?";
constexpr auto write_q = "Remove all cancelled orders from the sales records";
constexpr auto pii_q = "Which email addresses do our customers use?";
constexpr auto tiktok_q = "What was our revenue on TikTok in 2024?";
constexpr auto abstain_q
  = "What profit margin do our competitors make on gravel bikes?";
constexpr auto heavy_q
  = "How many pairs of order lines have different quantities?";

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

struct started_server {
  server_process proc;
  explicit started_server(std::map<std::string, std::string> env = {},
                          bool generate_sales = false)
      : proc(std::move(env)) {
    if (generate_sales)
      proc.generate_sales();
    BOOST_REQUIRE_MESSAGE(proc.start(std::chrono::seconds{60}),
                          "server did not start:\n"
                            << proc.log());
  }

  json::object ask(std::string_view question) {
    http_client c{proc.port(), std::chrono::milliseconds{30000}};
    BOOST_REQUIRE(c.connected());
    auto r = c.ask(json::serialize(json::object{{"question", question}}));
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_MESSAGE(r->status == 200, r->status << " " << r->body);
    return parse_object(r->body);
  }

  json::object get(const std::string& target) {
    http_client c{proc.port()};
    BOOST_REQUIRE(c.connected());
    auto r = c.request("GET", target);
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_MESSAGE(r->status == 200, r->status << " " << r->body);
    return parse_object(r->body);
  }

  /// The SQL audit rows of one request, from /runs/{id}.
  json::array audit(const json::object& response) {
    auto id = std::string{response.at("requestId").as_string()};
    auto run = get("/runs/" + id);
    return run.at("sqlAudit").as_array();
  }
};

std::string str(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : std::string{};
}

int64_t llm_calls(const json::object& o) {
  return o.at("meta").as_object().at("llmCalls").as_int64();
}

/// The rows of `sql` run in-process on the same database, as JSON cells.
json::array expected_rows(const std::string& db_path, const std::string& sql) {
  auto db = data::open_read_only(db_path);
  BOOST_REQUIRE(db.ok());
  auto st = db->prepare(sql);
  BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.err().message));
  json::array rows;
  for (;;) {
    auto r = st->step();
    BOOST_REQUIRE(r.ok());
    if (*r != data::step_result::row)
      break;
    json::array row;
    for (int i = 0; i < st->column_count(); ++i) {
      switch (st->column_type(i)) {
        case SQLITE_INTEGER: row.push_back(st->column_int64(i)); break;
        case SQLITE_FLOAT: row.push_back(st->column_double(i)); break;
        case SQLITE_NULL: row.push_back(nullptr); break;
        default: row.push_back(json::value(st->column_text(i)));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

/// True when the source tree has the sandbox actor (any actors/*sandbox*.cpp).
bool sandbox_built() {
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(
         std::string{CANDOR_SOURCE_DIR} + "/actors", ec)) {
    auto name = e.path().filename().string();
    if (name.find("sandbox") != std::string::npos
        && e.path().extension() == ".cpp")
      return true;
  }
  return false;
}

/// Checks an answered data response against the database itself.
void check_answered(started_server& s, const json::object& o,
                    size_t expected_row_count) {
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "data");
  BOOST_REQUIRE_MESSAGE(o.at("status").as_string() == "answered",
                        json::serialize(o));
  BOOST_CHECK(o.at("blockedBy").is_null());
  auto& sql = o.at("sql").as_object();
  auto query = str(sql.at("query"));
  auto want = expected_rows(s.proc.data_dir() + "/sales.db", query);
  BOOST_CHECK_EQUAL(want.size(), expected_row_count);
  BOOST_CHECK_EQUAL(sql.at("rowCount").as_int64(),
                    static_cast<int64_t>(want.size()));
  BOOST_CHECK_EQUAL(json::serialize(sql.at("rows")), json::serialize(want));
  BOOST_CHECK_EQUAL(sql.at("truncated").as_bool(), false);
  auto& fu = o.at("followUpQuestions").as_array();
  BOOST_CHECK(fu.size() >= 1 && fu.size() <= 3);
  BOOST_CHECK_EQUAL(llm_calls(o), 3); // router, sql_generate, sql_answer
  auto audit = s.audit(o);
  BOOST_REQUIRE_EQUAL(audit.size(), 1u);
  auto& a = audit[0].as_object();
  BOOST_CHECK_EQUAL(a.at("verdict").as_string(), "allow");
  BOOST_CHECK_EQUAL(a.at("layer").as_string(), "executor");
  BOOST_CHECK_EQUAL(str(a.at("sql")), query);
  BOOST_CHECK_EQUAL(a.at("rows").as_int64(), static_cast<int64_t>(want.size()));
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_data_startup)

BOOST_AUTO_TEST_CASE(serve_creates_the_sales_database_and_reports_rows) {
  started_server s{{}, true};
  BOOST_CHECK(std::filesystem::exists(s.proc.data_dir() + "/sales.db"));
  auto log = s.proc.log();
  BOOST_CHECK(log.find("\"event\":\"sales_db_progress\"") != std::string::npos);
  BOOST_CHECK(log.find("\"event\":\"sales_db_ready\"") != std::string::npos);
  auto health = s.get("/health");
  auto& sales = health.at("sales").as_object();
  BOOST_CHECK_EQUAL(sales.size(), 10u);
  int64_t total = 0;
  for (auto& kv : sales)
    total += kv.value().as_int64();
  BOOST_CHECK_GE(total, 50000);
  // The counts are the database's own.
  auto db = data::open_read_only(s.proc.data_dir() + "/sales.db");
  BOOST_REQUIRE(db.ok());
  BOOST_CHECK_EQUAL(sales.at("orders").as_int64(),
                    *db->query_int64("SELECT count(*) FROM orders"));
  BOOST_CHECK_EQUAL(sales.at("customer_contacts").as_int64(),
                    *db->query_int64("SELECT count(*) FROM "
                                     "customer_contacts"));
}

BOOST_AUTO_TEST_CASE(catalog_mismatch_stops_startup) {
  auto dir = make_temp_dir("candor-data-mismatch");
  auto seeded = run_candor({"seed", "--data-dir", dir});
  BOOST_REQUIRE_EQUAL(seeded.exit_code, 0);
  {
    auto db = data::database::open(dir + "/sales.db");
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(!db->exec("CREATE TABLE loyalty_points (customer_id "
                            "INTEGER, points INTEGER)"));
  }
  auto r = run_candor({"serve", "--port", "0", "--data-dir", dir});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(r.err.find("loyalty_points") != std::string::npos);
  BOOST_CHECK(r.err.find("conf/catalog.json") != std::string::npos);
  r = run_candor({"ask", revenue_q, "--json", "--data-dir", dir});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(r.out.empty());
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(write_attempt_is_blocked_by_the_policy) {
  started_server s;
  auto o = s.ask(write_q);
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "data");
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "blocked");
  BOOST_CHECK_EQUAL(o.at("blockedBy").as_string(), "sql_policy");
  auto& g = o.at("guardrail").as_object();
  BOOST_CHECK_EQUAL(g.at("layer").as_string(), "sql_policy");
  BOOST_CHECK_EQUAL(str(g.at("reasons").as_array().at(0)),
                    "sql_policy:not_select");
  // Router and sql_generate only: a violation never goes back to the model.
  BOOST_CHECK_EQUAL(llm_calls(o), 2);
  auto& sql = o.at("sql").as_object();
  BOOST_CHECK(str(sql.at("query")).find("DELETE") == 0);
  BOOST_CHECK_EQUAL(sql.at("corrections").as_int64(), 0);
  auto audit = s.audit(o);
  BOOST_REQUIRE_EQUAL(audit.size(), 1u);
  BOOST_CHECK_EQUAL(audit[0].at("verdict").as_string(), "block");
  BOOST_CHECK_EQUAL(audit[0].at("layer").as_string(), "sql_policy");
  // Nothing was written.
  auto db = data::open_read_only(s.proc.data_dir() + "/sales.db");
  BOOST_REQUIRE(db.ok());
  BOOST_CHECK_GT(*db->query_int64("SELECT count(*) FROM orders WHERE status "
                                  "= 'cancelled'"),
                 0);
}

BOOST_AUTO_TEST_CASE(personal_data_is_blocked_by_the_authorizer) {
  started_server s;
  auto o = s.ask(pii_q);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "blocked");
  BOOST_CHECK_EQUAL(o.at("blockedBy").as_string(), "sql_authorizer");
  BOOST_CHECK_EQUAL(llm_calls(o), 2);
  BOOST_CHECK(o.at("sql").as_object().at("rows").as_array().empty());
  BOOST_CHECK(str(o.at("answer")).find("@") == std::string::npos);
  auto audit = s.audit(o);
  BOOST_REQUIRE_EQUAL(audit.size(), 1u);
  BOOST_CHECK_EQUAL(audit[0].at("layer").as_string(), "sql_authorizer");
  BOOST_CHECK(str(audit[0].at("reason")).find("denied_column")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(value_outside_the_domain_is_refused_with_the_values) {
  started_server s;
  auto o = s.ask(tiktok_q);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK(o.at("blockedBy").is_null());
  auto answer = str(o.at("answer"));
  BOOST_CHECK(answer.find("tiktok") != std::string::npos);
  BOOST_CHECK(answer.find("'web', 'marketplace', 'retail', 'partner'")
              != std::string::npos);
  BOOST_CHECK_EQUAL(llm_calls(o), 2);
  auto audit = s.audit(o);
  BOOST_REQUIRE_EQUAL(audit.size(), 1u);
  BOOST_CHECK_EQUAL(audit[0].at("layer").as_string(), "catalog_domain");
}

BOOST_AUTO_TEST_CASE(abstention_and_exhausted_corrections_via_cli) {
  auto dir = make_temp_dir("candor-data-cli");
  auto r = run_candor({"ask", abstain_q, "--json", "--data-dir", dir});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  auto o = parse_object(r.out);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK(o.at("sql").is_null());
  BOOST_CHECK_EQUAL(llm_calls(o), 2);
  BOOST_CHECK(str(o.at("answer")).find("did not guess") != std::string::npos);

  r = run_candor({"ask", exhaust_q, "--json", "--data-dir", dir});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  o = parse_object(r.out);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "error");
  auto& sql = o.at("sql").as_object();
  BOOST_CHECK_EQUAL(sql.at("corrections").as_int64(), 3);
  BOOST_CHECK(str(sql.at("originalQuery")).find("o.shipping_zone")
              != std::string::npos);
  BOOST_CHECK(str(sql.at("query")).find("o.zone") != std::string::npos);
  BOOST_CHECK(str(sql.at("lastError")).find("no such column")
              != std::string::npos);
  // router + generate + 3 corrections; the 4th visit gives up without one.
  BOOST_CHECK_EQUAL(llm_calls(o), 5);
  bool warned = false;
  for (auto& w : o.at("warnings").as_array())
    warned = warned || w.as_string() == "sql_corrections_exhausted";
  BOOST_CHECK(warned);
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(every_rejected_statement_is_audited) {
  started_server s;
  auto o = s.ask(exhaust_q);
  auto audit = s.audit(o);
  // The first query and three corrections, each refused as correctable.
  BOOST_REQUIRE_EQUAL(audit.size(), 4u);
  for (auto& a : audit) {
    BOOST_CHECK_EQUAL(a.at("verdict").as_string(), "correctable");
    BOOST_CHECK_EQUAL(a.at("layer").as_string(), "sql_authorizer");
  }
  BOOST_CHECK(str(audit[0].at("sql")).find("o.shipping_zone")
              != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(e2e_data_route, *boost::unit_test::precondition(
                                        [](boost::unit_test::test_unit_id) {
                                          return sandbox_built();
                                        }))

BOOST_AUTO_TEST_CASE(answered_revenue_by_channel_and_top_products) {
  started_server s;
  auto o = s.ask(revenue_q);
  check_answered(s, o, 4);
  BOOST_CHECK(str(o.at("answer")).find("5,587,865.59") != std::string::npos);
  auto& sql = o.at("sql").as_object();
  // LIMIT 200 added, 4 rows returned: nothing was cut.
  BOOST_CHECK(!sql.at("limitApplied").as_bool());
  BOOST_CHECK(sql.at("originalQuery").is_null());
  o = s.ask(top5_q);
  check_answered(s, o, 5);
  BOOST_CHECK(!o.at("sql").as_object().at("limitApplied").as_bool());
}

BOOST_AUTO_TEST_CASE(corrected_once_keeps_the_original_query) {
  started_server s;
  auto o = s.ask(aov_q);
  BOOST_REQUIRE_EQUAL(o.at("status").as_string(), "answered");
  auto& sql = o.at("sql").as_object();
  BOOST_CHECK_EQUAL(sql.at("corrections").as_int64(), 1);
  BOOST_CHECK(str(sql.at("originalQuery")).find("o.order_value")
              != std::string::npos);
  BOOST_CHECK(str(sql.at("query")).find("o.total_cents") != std::string::npos);
  auto want
    = expected_rows(s.proc.data_dir() + "/sales.db", str(sql.at("query")));
  BOOST_CHECK_EQUAL(json::serialize(sql.at("rows")), json::serialize(want));
  BOOST_CHECK_EQUAL(llm_calls(o), 4); // router, generate, correct, answer
  auto audit = s.audit(o);
  BOOST_REQUIRE_EQUAL(audit.size(), 2u);
  BOOST_CHECK_EQUAL(audit[0].at("verdict").as_string(), "correctable");
  BOOST_CHECK_EQUAL(audit[1].at("verdict").as_string(), "allow");
}

BOOST_AUTO_TEST_CASE(zero_rows_and_null_rows_are_no_results) {
  started_server s;
  for (auto q : {empty_q, null_q}) {
    auto o = s.ask(q);
    BOOST_CHECK_EQUAL(o.at("status").as_string(), "no_results");
    auto answer = str(o.at("answer"));
    BOOST_CHECK(answer.find("zero rows may also mean the query missed the "
                            "question")
                != std::string::npos);
    auto& sql = o.at("sql").as_object();
    BOOST_CHECK(answer.find(str(sql.at("query"))) != std::string::npos);
    // No model call for sql_answer: router and sql_generate only.
    BOOST_CHECK_EQUAL(llm_calls(o), 2);
    auto audit = s.audit(o);
    BOOST_REQUIRE_EQUAL(audit.size(), 1u);
    BOOST_CHECK_EQUAL(audit[0].at("verdict").as_string(), "allow");
  }
}

BOOST_AUTO_TEST_CASE(heavy_query_is_killed_at_the_deadline) {
  started_server s{{{"CANDOR_SQL_DEADLINE_MS", "300"}}};
  auto t0 = std::chrono::steady_clock::now();
  auto o = s.ask(heavy_q);
  auto took = std::chrono::steady_clock::now() - t0;
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "error");
  BOOST_CHECK(str(o.at("answer")).find("longer than the time allowed")
              != std::string::npos);
  BOOST_CHECK(took < std::chrono::seconds{10});
  bool warned = false;
  for (auto& w : o.at("warnings").as_array())
    warned = warned || w.as_string() == "sql_timeout";
  BOOST_CHECK(warned);
  auto audit = s.audit(o);
  BOOST_REQUIRE_EQUAL(audit.size(), 1u);
  BOOST_CHECK_EQUAL(audit[0].at("verdict").as_string(), "error");
  // The server keeps answering: a query over the small products table, so
  // that the 300 ms deadline also holds on a machine busy with other tests.
  auto categories = expected_rows(s.proc.data_dir() + "/sales.db",
                                  "SELECT DISTINCT category FROM products");
  BOOST_CHECK_GT(categories.size(), 1u);
  check_answered(s, s.ask(categories_q), categories.size());
}

BOOST_AUTO_TEST_CASE(cli_answers_a_data_question) {
  auto dir = make_temp_dir("candor-data-cli2");
  auto r = run_candor({"ask", revenue_q, "--json", "--data-dir", dir});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  auto o = parse_object(r.out);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  auto& sql = o.at("sql").as_object();
  auto want = expected_rows(dir + "/sales.db", str(sql.at("query")));
  BOOST_CHECK_EQUAL(json::serialize(sql.at("rows")), json::serialize(want));
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(fifty_concurrent_data_requests_are_all_answered) {
  started_server s;
  const char* questions[] = {revenue_q, top5_q, aov_q};
  std::map<std::string, std::string> expected;
  for (auto q : questions) {
    auto o = s.ask(q);
    BOOST_REQUIRE_EQUAL(o.at("status").as_string(), "answered");
    expected[q] = json::serialize(o.at("sql").as_object().at("rows"));
  }
  std::vector<std::future<std::string>> results;
  for (int i = 0; i < 50; ++i) {
    auto q = questions[i % 3];
    results.push_back(std::async(std::launch::async, [&s, q] {
      http_client c{s.proc.port(), std::chrono::milliseconds{60000}};
      if (!c.connected())
        return std::string{"not connected"};
      auto r = c.ask(json::serialize(json::object{{"question", q}}));
      if (!r)
        return std::string{"no response"};
      return std::to_string(r->status) + " " + r->body;
    }));
  }
  int answered = 0;
  for (int i = 0; i < 50; ++i) {
    auto body = results[i].get();
    BOOST_REQUIRE_MESSAGE(body.rfind("200 ", 0) == 0, body);
    auto o = parse_object(body.substr(4));
    if (o.at("status").as_string() == "answered"
        && json::serialize(o.at("sql").as_object().at("rows"))
             == expected[questions[i % 3]])
      ++answered;
  }
  BOOST_CHECK_EQUAL(answered, 50);
}

BOOST_AUTO_TEST_SUITE_END()
