// The execute and answer nodes one at a time, on a real actor system: rows
// through the test-only sandbox, deadlines, executor limits and what the
// model is shown of the rows (fixture: tests/support/sql_nodes_fixture.hpp).

#include "actors/nodes/nodes.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <signal.h>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <boost/test/unit_test.hpp>

#include "data/sql/executor.hpp"
#include "actors/llm.hpp"
#include "actors/supervisor.hpp"
#include "data/fixtures.hpp"
#include "data/prompts.hpp"
#include "data/sales/setup.hpp"
#include "domain/api/api_json.hpp"
#include "domain/config.hpp"
#include "domain/guard/output_guard.hpp"
#include "domain/routing.hpp"
#include "domain/sql/contracts.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_sandbox.hpp"
#include "tests/support/sql_nodes_fixture.hpp"

using namespace candor;
using namespace candor::actors;
using domain::ask_state;
using domain::status_kind;
using namespace candor::test::sql_nodes_support;

BOOST_AUTO_TEST_SUITE(actors_sql_nodes_execute)

BOOST_FIXTURE_TEST_CASE(execute_runs_through_the_sandbox_and_caps_rows,
                        fixture) {
  std::string seen;
  auto path = sales().path;
  auto sandbox
    = test::spawn_test_sandbox(sys, [path, &seen](const sql_exec_request& req) {
        seen = req.sql;
        return test::run_in_process(path, req);
      });
  auto n = sys.spawn(sql_execute, sandbox, ledger, 200);
  auto r = step(n, state("x", "SELECT product_id, sku FROM products "
                              "ORDER BY product_id LIMIT 200"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(seen, "SELECT product_id, sku FROM products "
                          "ORDER BY product_id LIMIT 200");
  BOOST_CHECK_EQUAL(r->sql.row_count, 90);
  BOOST_CHECK_EQUAL(r->sql.rows.size(), 50u);
  BOOST_CHECK(r->sql.truncated);
  BOOST_REQUIRE_EQUAL(r->sql.columns.size(), 2u);
  BOOST_CHECK_EQUAL(r->sql.rows[0][0].i, 1);
  // The response with these rows passes the response schema.
  auto st = *r;
  domain::finish(st, status_kind::answered, "ninety products");
  BOOST_CHECK(domain::validate_response(domain::to_json(st)).empty());
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].verdict, "allow");
  BOOST_CHECK_EQUAL(rows[0].layer, "executor");
  BOOST_CHECK_EQUAL(rows[0].rows, 90);
  caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
}

// "Row limit applied" only when the policy's LIMIT cut rows: the query
// returned as many rows as it allows. Fewer rows, or a failure, cut nothing.
BOOST_FIXTURE_TEST_CASE(limit_applied_only_when_the_limit_cut_rows, fixture) {
  auto path = sales().path;
  auto sandbox
    = test::spawn_test_sandbox(sys, [path](const sql_exec_request& req) {
        return test::run_in_process(path, req);
      });
  auto n = sys.spawn(sql_execute, sandbox, ledger, 200);
  auto cut = state("x", "SELECT order_id FROM orders LIMIT 200");
  cut.sql.limit_applied = true; // as sql_validate set it
  auto r = step(n, std::move(cut));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->sql.row_count, 200);
  BOOST_CHECK(r->sql.limit_applied);
  auto small = state("x", "SELECT channel FROM channels LIMIT 200");
  small.sql.limit_applied = true;
  r = step(n, std::move(small));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->sql.row_count, 4);
  BOOST_CHECK(!r->sql.limit_applied);
  caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
  auto failing = test::spawn_test_sandbox(sys, [](const sql_exec_request&) {
    return domain::outcome<sql_exec_result>{domain::make_error(
      domain::ec::sql_timeout, "killed after the 5000 ms deadline")};
  });
  auto f = sys.spawn(sql_execute, failing, ledger, 200);
  auto failed = state("x", "SELECT order_id FROM orders LIMIT 200");
  failed.sql.limit_applied = true;
  r = step(f, std::move(failed));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->sql.limit_applied);
  caf::anon_send_exit(failing, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(execute_reports_the_deadline_honestly, fixture) {
  auto sandbox = test::spawn_test_sandbox(sys, [](const sql_exec_request&) {
    return domain::outcome<sql_exec_result>{domain::make_error(
      domain::ec::sql_timeout, "killed after the 5000 ms deadline")};
  });
  auto n = sys.spawn(sql_execute, sandbox, ledger, 200);
  auto r = step(n, state("x", "SELECT 1"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::error);
  BOOST_CHECK(r->answer.find("longer than the time allowed")
              != std::string::npos);
  BOOST_CHECK(r->sql.last_error.find("deadline") != std::string::npos);
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].verdict, "error");
  caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(execute_names_the_limit_that_killed_the_executor,
                        fixture) {
  // The message the sandbox gives for an executor killed by SIGXCPU.
  const std::string message = std::string{data::executor_limit_prefix}
                              + data::executor_limit_for_signal(SIGXCPU, 10)
                              + " and was killed by signal 24 (SIGXCPU)";
  auto sandbox
    = test::spawn_test_sandbox(sys, [message](const sql_exec_request&) {
        return domain::outcome<sql_exec_result>{
          domain::make_error(domain::ec::sql_executor_failed, message)};
      });
  auto n = sys.spawn(sql_execute, sandbox, ledger, 200);
  auto r = step(n, state("x", "SELECT 1"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::error);
  for (auto* part : {"CPU time limit", "RLIMIT_CPU 10 s",
                     "sql.executorCpuSeconds", "SIGXCPU"})
    BOOST_CHECK_MESSAGE(r->answer.find(part) != std::string::npos, r->answer);
  BOOST_CHECK(r->answer.find("SQL executor failed") == std::string::npos);
  BOOST_CHECK(
    std::find(r->warnings.begin(), r->warnings.end(), "sql_resource_limit")
    != r->warnings.end());
  BOOST_CHECK_EQUAL(r->sql.last_error, message);
  caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
  // Any other death (after the sandbox's one retry) is the server's
  // failure: the node fails with sql_executor_failed, which the error
  // contract answers with 503, not an answer-shaped 200.
  auto crashed = test::spawn_test_sandbox(sys, [](const sql_exec_request&) {
    return domain::outcome<sql_exec_result>{
      domain::make_error(domain::ec::sql_executor_failed,
                         "the executor process died (killed by signal 11 "
                         "(SIGSEGV))")};
  });
  auto n2 = sys.spawn(sql_execute, crashed, ledger, 200);
  auto r2 = step(n2, state("x", "SELECT 1"));
  BOOST_REQUIRE(!r2.ok());
  BOOST_CHECK(r2.err().code == domain::ec::sql_executor_failed);
  BOOST_CHECK_MESSAGE(r2.err().message.find("SIGSEGV") != std::string::npos,
                      r2.err().message);
  BOOST_CHECK_EQUAL(domain::http_status(r2.err().code), 503);
  auto rows = audit_rows(2);
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  BOOST_CHECK_EQUAL(rows[1].verdict, "error");
  caf::anon_send_exit(crashed, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(execute_sends_a_correctable_failure_to_correction,
                        fixture) {
  auto sandbox = test::spawn_test_sandbox(sys, [](const sql_exec_request&) {
    return domain::outcome<sql_exec_result>{
      domain::make_error(domain::ec::sql_failed, "no such column: zone")};
  });
  auto n = sys.spawn(sql_execute, sandbox, ledger, 200);
  auto r = step(n, state("x", "SELECT zone FROM orders"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->finished());
  BOOST_CHECK_EQUAL(r->pending_error, "no such column: zone");
  BOOST_CHECK(domain::next_node(domain::node::sql_execute, *r)
              == domain::node::sql_correct);
  caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(answer_without_rows_is_no_results_without_a_model,
                        fixture) {
  auto n = sys.spawn(sql_answer, llm, "v1", prompt("sql_answer"), 50);
  auto st = state(revenue_q, "SELECT 1 WHERE 0");
  st.sql.columns = {"x"};
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::no_results);
  BOOST_CHECK_EQUAL(r->usage.calls, 0);
  BOOST_CHECK(r->answer.find("zero rows may also mean the query missed the "
                             "question")
              != std::string::npos);
  BOOST_CHECK(r->answer.find("SELECT 1 WHERE 0") != std::string::npos);
  // All-NULL rows count as no results too.
  st.sql.rows = {{domain::cell{}}};
  st.sql.row_count = 1;
  r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::no_results);
  BOOST_CHECK_EQUAL(r->usage.calls, 0);
}

BOOST_FIXTURE_TEST_CASE(answer_explains_the_rows_through_the_model, fixture) {
  auto n = sys.spawn(sql_answer, llm, "v1", prompt("sql_answer"), 50);
  auto st = state(revenue_q, "SELECT channel FROM channels");
  st.sql.columns = {"channel"};
  domain::cell c;
  c.kind = domain::cell::text;
  c.s = "web";
  st.sql.rows = {{c}};
  st.sql.row_count = 1;
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::answered);
  BOOST_CHECK(r->answer.find("5,587,865.59") != std::string::npos);
  BOOST_CHECK(r->follow_ups.size() >= 1 && r->follow_ups.size() <= 3);
  BOOST_CHECK_EQUAL(r->usage.calls, 1);
}

BOOST_FIXTURE_TEST_CASE(answer_shows_at_most_rows_to_model_rows, fixture) {
  auto log = std::make_shared<recorded_calls>();
  auto model = spawn_recording_llm(
    sys, log, R"({"answer": "Ninety products.", "followUps": ["Which?"]})");
  auto n = sys.spawn(sql_answer, model, "v1", prompt("sql_answer"), 7);
  auto st = state("How many products are there?", "SELECT product_id FROM "
                                                  "products");
  st.sql.columns = {"product_id"};
  for (int i = 0; i < 50; ++i) {
    domain::cell c;
    c.kind = domain::cell::integer;
    c.i = 1000 + i;
    st.sql.rows.push_back({c});
  }
  st.sql.row_count = 90;
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::answered);
  std::lock_guard<std::mutex> guard{log->mtx};
  BOOST_REQUIRE_EQUAL(log->calls.size(), 1u);
  const auto& user = log->calls[0].user;
  BOOST_CHECK(user.find("1006") != std::string::npos);
  BOOST_CHECK(user.find("1007") == std::string::npos);
  BOOST_CHECK(user.find("&quot;rowCount&quot;:90") != std::string::npos);
  BOOST_CHECK(user.find("&quot;rowsShown&quot;:7") != std::string::npos);
  BOOST_CHECK(user.find("limitApplied") == std::string::npos);
  BOOST_CHECK_EQUAL(log->calls[0].prompt, "sql_answer");
  BOOST_CHECK_EQUAL(log->calls[0].schema, domain::sql_answer_schema);
  caf::anon_send_exit(model, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(answer_is_told_when_the_policy_capped_the_rows,
                        fixture) {
  // "List the web orders" became ... LIMIT 200: the model saw rowCount 200
  // and nothing saying that the system, not the data, stopped there.
  auto log = std::make_shared<recorded_calls>();
  auto model = spawn_recording_llm(
    sys, log,
    R"({"answer": "At least 200 web orders.", "followUps": ["Which?"]})");
  auto n = sys.spawn(sql_answer, model, "v1", prompt("sql_answer"), 7);
  auto st = state("List the web orders",
                  "SELECT order_id FROM orders WHERE channel = 'web' "
                  "LIMIT 200");
  st.sql.limit_applied = true;
  st.sql.columns = {"order_id"};
  domain::cell c;
  c.kind = domain::cell::integer;
  c.i = 1;
  st.sql.rows.assign(50, {c});
  st.sql.row_count = 200;
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  std::lock_guard<std::mutex> guard{log->mtx};
  BOOST_REQUIRE_EQUAL(log->calls.size(), 1u);
  const auto& user = log->calls[0].user;
  BOOST_CHECK(user.find("&quot;limitApplied&quot;:true") != std::string::npos);
  BOOST_CHECK(user.find("not every row that matches") != std::string::npos);
  caf::anon_send_exit(model, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
