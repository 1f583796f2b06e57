// The data-branch nodes one at a time, on a real actor system: the real
// llm actor on the scripted fixtures, a real sales database, a fake ledger
// that keeps the SQL audit rows, and a test-only in-process sandbox.

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

BOOST_AUTO_TEST_SUITE(actors_sql_nodes)

BOOST_FIXTURE_TEST_CASE(generate_writes_the_scripted_query, fixture) {
  auto n = sys.spawn(sql_generate, llm, "v1", prompt("sql_generate"),
                     sales().schema_text);
  auto r = step(n, state(revenue_q));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->finished());
  BOOST_CHECK(r->has_sql);
  BOOST_CHECK(r->sql.query.find("GROUP BY o.channel") != std::string::npos);
  BOOST_CHECK_EQUAL(r->usage.calls, 1);
  BOOST_CHECK_EQUAL(r->llm_budget, 7);
  BOOST_CHECK_EQUAL(r->follow_ups.size(), 2u);
}

BOOST_FIXTURE_TEST_CASE(generate_abstains_with_no_answer, fixture) {
  auto n = sys.spawn(sql_generate, llm, "v1", prompt("sql_generate"),
                     sales().schema_text);
  auto r = step(n, state("What profit margin do our competitors make on "
                         "gravel bikes?"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::refused);
  BOOST_CHECK(!r->has_sql);
  BOOST_CHECK(r->answer.find("did not guess") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(generate_without_fixture_is_an_error, fixture) {
  auto n = sys.spawn(sql_generate, llm, "v1", prompt("sql_generate"),
                     sales().schema_text);
  auto r = step(n, state("How many unicorns did we sell in 1999?"));
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::fixture_missing);
}

BOOST_FIXTURE_TEST_CASE(schema_text_reaches_the_prompt_without_denied_columns,
                        fixture) {
  auto text = prompt("sql_generate");
  BOOST_CHECK(text.find("{{schema}}") != std::string::npos);
  const auto& schema = sales().schema_text;
  BOOST_CHECK(schema.find("orders") != std::string::npos);
  BOOST_CHECK(schema.find("email") == std::string::npos);
  BOOST_CHECK(schema.find("customer_contacts") == std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(validate_blocks_a_write_at_the_policy, fixture) {
  // The reply that wrote the DELETE also suggested follow-ups: a block
  // offers none of them.
  auto st = state("x", "DELETE FROM orders");
  st.follow_ups = {"Which orders were deleted?"};
  auto r = step(validator(), std::move(st));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::blocked);
  BOOST_CHECK(r->blocked_by == domain::layer_kind::sql_policy);
  BOOST_CHECK(r->follow_ups.empty());
  BOOST_CHECK(r->pending_error.empty());
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].verdict, "block");
  BOOST_CHECK_EQUAL(rows[0].layer, "sql_policy");
  BOOST_CHECK_EQUAL(rows[0].request_id, "sqlnodes-test");
  BOOST_CHECK_EQUAL(rows[0].sql, "DELETE FROM orders");
}

BOOST_FIXTURE_TEST_CASE(audit_rows_mask_personal_data_the_sql_copied, fixture) {
  // A model that copies an e-mail address from the question into its SQL:
  // blocked (a denied column), and the audit row, which /runs serves, keeps
  // the statement with the address masked. Plain numbers stay as written.
  auto r = step(validator(),
                state("x", "SELECT order_id FROM orders o JOIN customers c ON "
                           "c.customer_id = o.customer_id WHERE c.email = "
                           "'jane.doe@example.com' AND o.total_cents > "
                           "12345678"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::blocked);
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK(rows[0].sql.find("jane.doe") == std::string::npos);
  BOOST_CHECK(rows[0].sql.find("***@***") != std::string::npos);
  BOOST_CHECK(rows[0].sql.find("12345678") != std::string::npos);
  BOOST_CHECK(rows[0].reason.find("jane.doe") == std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(validate_blocks_personal_data_at_the_authorizer,
                        fixture) {
  auto r = step(validator(), state("x", "SELECT email FROM customers"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::blocked);
  BOOST_CHECK(r->blocked_by == domain::layer_kind::sql_authorizer);
  BOOST_REQUIRE_EQUAL(r->guardrail.reasons.size(), 1u);
  BOOST_CHECK_EQUAL(r->guardrail.reasons[0], "sql_authorizer:denied_column");
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].layer, "sql_authorizer");
  // The policy's LIMIT rewrite ran before the authorizer judged it.
  BOOST_CHECK(r->sql.limit_applied);
}

BOOST_FIXTURE_TEST_CASE(validate_sends_unknown_columns_to_correction, fixture) {
  auto r = step(validator(),
                state("x", "SELECT channel, SUM(revenue_cents) FROM orders "
                           "GROUP BY channel"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->finished());
  BOOST_CHECK(r->pending_error.find("revenue_cents") != std::string::npos);
  BOOST_CHECK(domain::next_node(domain::node::sql_validate, *r)
              == domain::node::sql_correct);
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].verdict, "correctable");
}

BOOST_FIXTURE_TEST_CASE(validate_refuses_a_value_outside_the_domain, fixture) {
  auto r = step(validator(),
                state("x", "SELECT COUNT(*) FROM orders WHERE channel = "
                           "'tiktok'"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::refused);
  BOOST_CHECK(r->answer.find("'web', 'marketplace', 'retail', 'partner'")
              != std::string::npos);
  BOOST_CHECK(r->answer.find("tiktok") != std::string::npos);
  auto rows = audit_rows(1);
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].layer, "catalog_domain");
}

BOOST_FIXTURE_TEST_CASE(validate_lets_a_good_query_through_with_its_limit,
                        fixture) {
  auto r = step(validator(),
                state("x", "SELECT channel, COUNT(*) AS n FROM orders WHERE "
                           "channel IN ('web', 'retail') GROUP BY channel"));
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->finished());
  BOOST_CHECK(r->pending_error.empty());
  BOOST_CHECK(r->sql.limit_applied);
  BOOST_CHECK(r->sql.query.find("LIMIT 200") != std::string::npos);
  BOOST_CHECK(domain::next_node(domain::node::sql_validate, *r)
              == domain::node::sql_execute);
  // Allowed statements are audited when they run, not here.
  std::this_thread::sleep_for(std::chrono::milliseconds{50});
  BOOST_CHECK(audits->snapshot().empty());
}

BOOST_FIXTURE_TEST_CASE(correct_replaces_the_query_and_keeps_the_original,
                        fixture) {
  auto n = sys.spawn(sql_correct, llm, "v1", prompt("sql_correct"),
                     sales().schema_text, 3);
  auto st = state("What is the average order value by customer segment?",
                  "SELECT AVG(o.order_value) FROM orders o");
  st.pending_error = "no such column: o.order_value";
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->finished());
  BOOST_CHECK_EQUAL(r->sql.corrections, 1);
  BOOST_CHECK_EQUAL(r->sql.original_query,
                    "SELECT AVG(o.order_value) FROM orders o");
  BOOST_CHECK(r->sql.query.find("AVG(o.total_cents)") != std::string::npos);
  BOOST_CHECK(r->pending_error.empty());
  BOOST_CHECK_EQUAL(r->usage.calls, 1);
}

BOOST_FIXTURE_TEST_CASE(correct_gives_up_after_the_maximum, fixture) {
  auto n = sys.spawn(sql_correct, llm, "v1", prompt("sql_correct"),
                     sales().schema_text, 3);
  auto st = state("What is the average order value by customer segment?",
                  "SELECT o.zone FROM orders o");
  st.sql.corrections = 3;
  st.sql.original_query = "SELECT first FROM orders";
  st.pending_error = "no such column: o.zone";
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::error);
  BOOST_CHECK_EQUAL(r->sql.last_error, "no such column: o.zone");
  BOOST_CHECK_EQUAL(r->sql.original_query, "SELECT first FROM orders");
  BOOST_CHECK_EQUAL(r->usage.calls, 0);
}

BOOST_FIXTURE_TEST_CASE(generate_sends_schema_and_escaped_question, fixture) {
  auto log = std::make_shared<recorded_calls>();
  auto model = spawn_recording_llm(sys, log, "not json at all");
  auto n = sys.spawn(sql_generate, model, "v1", prompt("sql_generate"),
                     sales().schema_text);
  auto r = step(n, state("Revenue for <b>web</b> & retail?"));
  BOOST_REQUIRE(r.ok());
  // Two unusable replies: one re-ask, then an honest error.
  BOOST_CHECK(r->status == status_kind::error);
  BOOST_CHECK_EQUAL(r->usage.calls, 2);
  std::lock_guard<std::mutex> guard{log->mtx};
  BOOST_REQUIRE_EQUAL(log->calls.size(), 2u);
  auto& first = log->calls[0];
  BOOST_CHECK_EQUAL(first.ordinal, 0);
  BOOST_CHECK_EQUAL(log->calls[1].ordinal, 1);
  BOOST_CHECK(log->calls[1].user.find("previous reply was invalid")
              != std::string::npos);
  BOOST_CHECK(first.user.find("&lt;b&gt;web&lt;/b&gt; &amp; retail")
              != std::string::npos);
  BOOST_CHECK(first.system.find("{{schema}}") == std::string::npos);
  BOOST_CHECK(first.system.find(sales().schema_text) != std::string::npos);
  BOOST_CHECK(first.system.find("customer_contacts") == std::string::npos);
  BOOST_CHECK_EQUAL(first.schema, domain::sql_reply_schema);
  caf::anon_send_exit(model, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(correct_sends_the_failed_query_and_the_error, fixture) {
  auto log = std::make_shared<recorded_calls>();
  auto model = spawn_recording_llm(sys, log, R"({"sql": "SELECT 2 AS fixed"})");
  auto n = sys.spawn(sql_correct, model, "v1", prompt("sql_correct"),
                     sales().schema_text, 3);
  auto st = state("q?", "SELECT zone FROM orders");
  st.sql.corrections = 1;
  st.sql.original_query = "SELECT first FROM orders";
  st.pending_error = "no such column: zone";
  auto r = step(n, st);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->sql.query, "SELECT 2 AS fixed");
  BOOST_CHECK_EQUAL(r->sql.corrections, 2);
  BOOST_CHECK_EQUAL(r->sql.original_query, "SELECT first FROM orders");
  std::lock_guard<std::mutex> guard{log->mtx};
  BOOST_REQUIRE_EQUAL(log->calls.size(), 1u);
  BOOST_CHECK_EQUAL(log->calls[0].ordinal, 2);
  BOOST_CHECK(log->calls[0].user.find("<sql>SELECT zone FROM orders</sql>")
              != std::string::npos);
  BOOST_CHECK(log->calls[0].user.find("<error>no such column: zone</error>")
              != std::string::npos);
  caf::anon_send_exit(model, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()

// -- the whole data route on one supervisor, without processes ----------------

namespace {

struct route_fixture : fixture {
  std::map<std::string, std::string> prompts;
  std::shared_ptr<const domain::output_guard> guard;
  sql_sandbox_actor sandbox;
  std::vector<node_actor> spawned;

  route_fixture() {
    auto all = data::load_prompts(data::default_prompts_dir());
    BOOST_REQUIRE(all.ok());
    domain::output_guard_config og;
    og.canary = "TAILWIND-7731";
    for (auto& [name, p] : *all) {
      prompts[name] = p.text;
      og.protected_texts.push_back(p.text);
    }
    guard = std::make_shared<const domain::output_guard>(og);
    auto path = sales().path;
    sandbox
      = test::spawn_test_sandbox(sys, [path](const sql_exec_request& req) {
          // The heavy self-join stands for a query the sandbox kills.
          if (req.sql.find("a.quantity < b.quantity") != std::string::npos)
            return domain::outcome<sql_exec_result>{domain::make_error(
              domain::ec::sql_timeout, "killed after the 5000 ms deadline")};
          return test::run_in_process(path, req);
        });
  }

  ~route_fixture() {
    for (auto& h : spawned)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
  }

  graph_ptr make_graph() {
    using domain::node;
    graph g;
    auto& schema = sales().schema_text;
    g.at(node::guard_input)
      = sys.spawn(guard_input, std::string{"rules"}, llm_actor{}, std::string{},
                  std::string{}, std::string{});
    g.at(node::router) = sys.spawn(router, llm, "v1", prompts["router"]);
    g.at(node::sql_generate)
      = sys.spawn(sql_generate, llm, "v1", prompts["sql_generate"], schema);
    g.at(node::sql_validate)
      = sys.spawn(sql_validate, sales().path, sales().cat, ledger,
                std::string{"sqlite"});
    g.at(node::sql_correct)
      = sys.spawn(sql_correct, llm, "v1", prompts["sql_correct"], schema, 3);
    g.at(node::sql_execute) = sys.spawn(sql_execute, sandbox, ledger, 200);
    g.at(node::sql_answer)
      = sys.spawn(sql_answer, llm, "v1", prompts["sql_answer"], 50);
    g.at(node::finalize) = sys.spawn(finalize, guard, domain::service_info{});
    g.ledger = ledger;
    for (auto& h : g.nodes)
      if (h)
        spawned.push_back(h);
    return std::make_shared<const graph>(std::move(g));
  }

  domain::outcome<ask_state> run(const graph_ptr& g, std::string question) {
    domain::ask_request req;
    req.request_id = "route-" + std::to_string(++seq);
    req.question = std::move(question);
    auto p = std::make_shared<std::promise<domain::outcome<ask_state>>>();
    auto f = p->get_future();
    sys.spawn(supervisor, g, limits{}, std::move(req),
              std::make_shared<const domain::service_info>(),
              ask_responder{[p](domain::outcome<domain::ask_box> r) {
                p->set_value(domain::unbox(std::move(r)));
              }},
              deadline_slot_ptr{});
    BOOST_REQUIRE(f.wait_for(std::chrono::seconds{30})
                  == std::future_status::ready);
    return f.get();
  }

  int seq = 0;
};

} // namespace

BOOST_AUTO_TEST_SUITE(actors_data_route)

BOOST_FIXTURE_TEST_CASE(answered_through_every_node_and_finalize,
                        route_fixture) {
  auto g = make_graph();
  auto r = run(g, revenue_q);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::answered);
  BOOST_CHECK(r->validated);
  BOOST_CHECK_EQUAL(r->usage.calls, 3);
  BOOST_CHECK_EQUAL(r->sql.row_count, 4);
  BOOST_REQUIRE_EQUAL(r->sql.rows.size(), 4u);
  BOOST_CHECK_EQUAL(r->sql.rows[0][0].s, "web");
  BOOST_CHECK_CLOSE(r->sql.rows[0][1].r, 5587865.59, 1e-9);
  // The policy added a LIMIT, but 4 rows came back: it cut nothing.
  BOOST_CHECK(!r->sql.limit_applied);
  BOOST_CHECK(domain::validate_response(domain::to_json(*r)).empty());
  std::vector<std::string> nodes;
  for (auto& t : r->trace)
    nodes.emplace_back(domain::to_string(t.step));
  std::vector<std::string> want{"guard_input",  "router",      "sql_generate",
                                "sql_validate", "sql_execute", "sql_answer",
                                "finalize"};
  BOOST_CHECK_EQUAL_COLLECTIONS(nodes.begin(), nodes.end(), want.begin(),
                                want.end());
}

BOOST_FIXTURE_TEST_CASE(corrected_once_then_answered, route_fixture) {
  auto g = make_graph();
  auto r = run(g, "What is the average order value by customer segment?");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::answered);
  BOOST_CHECK_EQUAL(r->sql.corrections, 1);
  BOOST_CHECK(r->sql.original_query.find("o.order_value") != std::string::npos);
  BOOST_CHECK_EQUAL(r->sql.row_count, 3);
  BOOST_CHECK_EQUAL(r->usage.calls, 4);
}

BOOST_FIXTURE_TEST_CASE(blocked_timed_out_and_empty_routes, route_fixture) {
  auto g = make_graph();
  auto r = run(g, "Remove all cancelled orders from the sales records");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::blocked);
  BOOST_CHECK(r->blocked_by == domain::layer_kind::sql_policy);
  BOOST_CHECK_EQUAL(r->usage.calls, 2);
  BOOST_CHECK(r->validated);

  r = run(g, "How many pairs of order lines have different quantities?");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::error);
  BOOST_CHECK(r->validated);

  r = run(g, "List the orders of the Ghent store on Christmas Day 2024");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == status_kind::no_results);
  BOOST_CHECK_EQUAL(r->usage.calls, 2);
  BOOST_CHECK(r->validated);
}

BOOST_AUTO_TEST_SUITE_END()
