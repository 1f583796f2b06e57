// Deterministic tests of the per-request supervisor (CAF's test coordinator):
// the step cap, the model-call budget, the deadline and node failures.

#include "actors/supervisor.hpp"

#include <memory>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <boost/test/unit_test.hpp>

using namespace candor;
using namespace candor::actors;
using domain::node;

namespace {

caf::actor_system_config& testing_config(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  cfg.set("scheduler.policy", caf::atom("testing"));
  return cfg;
}

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{testing_config(cfg)};
  caf::scheduler::test_coordinator& sched
    = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  std::optional<domain::outcome<domain::ask_state>> result;
  /// The request rows the supervisor wrote (through graph::record).
  std::vector<domain::request_record> rows;

  ask_responder responder() {
    return [this](domain::outcome<domain::ask_box> r) {
      result.emplace(domain::unbox(std::move(r)));
    };
  }

  void run() {
    sched.run();
  }

  void spawn(graph g, limits lim, std::string question = "hello there") {
    domain::ask_request req;
    req.request_id = "test-request-1";
    req.question = std::move(question);
    req.method = "POST";
    req.path = "/ask";
    g.record
      = [this](domain::request_record rec) { rows.push_back(std::move(rec)); };
    sys.spawn(supervisor, std::make_shared<const graph>(std::move(g)), lim,
              std::move(req), std::make_shared<const domain::service_info>(),
              responder(), deadline_slot_ptr{});
  }

  ~fixture() {
    sched.run();
  }
};

/// A node that counts its calls and returns the state unchanged.
node_actor::behavior_type passthrough(node_actor::pointer,
                                      std::shared_ptr<int> calls) {
  return {
    [calls](atom::step, domain::ask_box& box) {
      ++*calls;
      return std::move(box);
    },
  };
}

/// A node that ends the request as refused.
node_actor::behavior_type refuser(node_actor::pointer) {
  return {
    [](atom::step, domain::ask_box& box) {
      domain::finish(*box, domain::status_kind::refused, "no");
      return std::move(box);
    },
  };
}

struct silent_state {
  silent_state() = default;
  std::vector<caf::typed_response_promise<domain::ask_box>> held;
};

/// A node that never answers (it keeps the promise alive).
node_actor::behavior_type
silent(node_actor::stateful_pointer<silent_state> self) {
  return {
    [self](atom::step, domain::ask_box&) -> caf::result<domain::ask_box> {
      auto rp = self->make_response_promise<domain::ask_box>();
      self->state.held.push_back(rp);
      return rp;
    },
  };
}

/// A router that routes to docs after spending `calls` model calls (the
/// whole budget when negative), `tokens` and `cost`.
node_actor::behavior_type spending_router(node_actor::pointer, int32_t calls,
                                          int64_t tokens, double cost) {
  return {
    [=](atom::step, domain::ask_box& box) {
      auto& st = *box;
      auto n = calls < 0 ? st.llm_budget : calls;
      st.usage.calls += n;
      st.llm_budget -= n;
      st.usage.tokens_in += tokens;
      st.usage.cost_usd += cost;
      st.route = domain::route_kind::docs;
      return std::move(box);
    },
  };
}

/// A node that fails with a domain error.
node_actor::behavior_type failing(node_actor::pointer, domain::ec code) {
  return {
    [code](atom::step, domain::ask_box&) -> caf::result<domain::ask_box> {
      return to_caf(code, "scripted failure");
    },
  };
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(actors_supervisor, fixture)

BOOST_AUTO_TEST_CASE(runs_the_graph_and_records_a_trace) {
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  g.at(node::router) = sys.spawn(refuser);
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  spawn(g, limits{});
  run();
  BOOST_REQUIRE(result && result->ok());
  auto& st = result->value();
  BOOST_CHECK(st.status == domain::status_kind::refused);
  BOOST_REQUIRE_EQUAL(st.trace.size(), 3u);
  BOOST_CHECK(st.trace[0].step == node::guard_input);
  BOOST_CHECK_EQUAL(st.trace[0].outcome, "ok");
  BOOST_CHECK(st.trace[1].step == node::router);
  BOOST_CHECK_EQUAL(st.trace[1].outcome, "refused");
  BOOST_CHECK(st.trace[2].step == node::finalize);
  BOOST_CHECK_EQUAL(*calls, 2);
  BOOST_CHECK_EQUAL(st.llm_budget, 8);
  // One request row, written by the supervisor before it answered, with
  // the outcome and the trace.
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  BOOST_CHECK_EQUAL(rows[0].http_status, 200);
  BOOST_CHECK_EQUAL(rows[0].status, "refused");
  BOOST_CHECK_EQUAL(rows[0].path, "/ask");
  BOOST_CHECK_EQUAL(rows[0].error, "");
  BOOST_CHECK_EQUAL(rows[0].steps.size(), 3u);
}

BOOST_AUTO_TEST_CASE(step_cap_stops_a_loop_and_still_finalizes) {
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  // A faulty edge that never leaves guard_input.
  g.edge = [](node n, const domain::ask_state& st) {
    if (n == node::finalize)
      return node::done;
    return st.finished() ? node::finalize : node::guard_input;
  };
  limits lim;
  lim.step_cap = 25;
  spawn(g, lim);
  run();
  BOOST_REQUIRE(result && result->ok());
  auto& st = result->value();
  BOOST_CHECK(st.status == domain::status_kind::error);
  BOOST_CHECK(
    std::count(st.warnings.begin(), st.warnings.end(), "step_cap_exceeded")
    == 1);
  // 25 capped steps plus finalize, which always runs.
  BOOST_CHECK_EQUAL(st.trace.size(), 26u);
  BOOST_CHECK_EQUAL(*calls, 26);
}

BOOST_AUTO_TEST_CASE(budget_refuses_a_node_that_needs_a_model_call) {
  auto router_calls = std::make_shared<int>(0);
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  g.at(node::router) = sys.spawn(passthrough, router_calls);
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  limits lim;
  lim.llm_budget = 0;
  spawn(g, lim);
  run();
  BOOST_REQUIRE(result && result->ok());
  auto& st = result->value();
  BOOST_CHECK(st.status == domain::status_kind::error);
  BOOST_CHECK(st.route == domain::route_kind::none);
  BOOST_CHECK(
    std::find(st.warnings.begin(), st.warnings.end(), "llm_budget_exceeded")
    != st.warnings.end());
  BOOST_CHECK_EQUAL(*router_calls, 0); // refused before it ran
}

BOOST_AUTO_TEST_CASE(a_node_that_spends_the_budget_stops_the_next_one) {
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  // A router that "spends" the whole budget and routes to docs.
  g.at(node::router) = sys.spawn(spending_router, -1, 0, 0.0);
  auto rag_calls = std::make_shared<int>(0);
  g.at(node::retrieve) = sys.spawn(passthrough, calls);
  g.at(node::rag_answer) = sys.spawn(passthrough, rag_calls);
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  spawn(g, limits{});
  run();
  BOOST_REQUIRE(result && result->ok());
  auto& st = result->value();
  BOOST_CHECK(st.status == domain::status_kind::error);
  BOOST_CHECK_EQUAL(*rag_calls, 0);
  BOOST_CHECK_EQUAL(st.usage.calls, 8);
}

BOOST_AUTO_TEST_CASE(deadline_answers_timeout_and_drops_late_replies) {
  graph g;
  auto hung = sys.spawn(silent);
  g.at(node::guard_input) = hung;
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  limits lim;
  lim.deadline = std::chrono::milliseconds{500};
  spawn(g, lim);
  run();
  BOOST_CHECK(!result); // still waiting on the silent node
  sched.trigger_timeouts();
  run();
  BOOST_REQUIRE(result);
  BOOST_REQUIRE(!result->ok());
  BOOST_CHECK_EQUAL(result->err().code, domain::ec::timeout);
  BOOST_CHECK(result->err().message.find("guard_input") != std::string::npos);
  BOOST_CHECK_EQUAL(*calls, 0);      // finalize never ran
  BOOST_CHECK(!result->err().spent); // nothing chosen or spent yet
  // The silent node holds its promise (and so itself) forever: stop it.
  caf::anon_send_exit(hung, caf::exit_reason::kill);
}

BOOST_AUTO_TEST_CASE(a_timed_out_request_reports_what_it_had_spent) {
  // The router answers (one model call, routed to docs), then retrieve
  // hangs: the 504's ledger row must still show the route and the call,
  // which the state held by the hung node cannot give any more.
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  g.at(node::router) = sys.spawn(spending_router, 1, 15, 4.5e-06);
  auto hung = sys.spawn(silent);
  g.at(node::retrieve) = hung;
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  limits lim;
  lim.deadline = std::chrono::milliseconds{500};
  spawn(g, lim);
  run();
  sched.trigger_timeouts();
  run();
  BOOST_REQUIRE(result);
  BOOST_REQUIRE(!result->ok());
  BOOST_CHECK_EQUAL(result->err().code, domain::ec::timeout);
  BOOST_REQUIRE(result->err().spent.has_value());
  const auto& spent = *result->err().spent;
  BOOST_CHECK_EQUAL(spent.route, "docs");
  BOOST_CHECK_EQUAL(spent.llm_calls, 1);
  BOOST_CHECK_EQUAL(spent.tokens, 15);
  BOOST_CHECK_CLOSE(spent.cost_usd, 4.5e-06, 1e-6);
  // The supervisor wrote the request's one row, with what it had spent.
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  const auto& row = rows[0];
  BOOST_CHECK_EQUAL(row.request_id, "test-request-1");
  BOOST_CHECK_EQUAL(row.method, "POST");
  BOOST_CHECK_EQUAL(row.path, "/ask");
  BOOST_CHECK_EQUAL(row.http_status, 504);
  BOOST_CHECK_EQUAL(row.error, "timeout");
  BOOST_CHECK_EQUAL(row.route, "docs");
  BOOST_CHECK_EQUAL(row.llm_calls, 1);
  BOOST_CHECK_EQUAL(row.tokens, 15);
  BOOST_CHECK_CLOSE(row.cost_usd, 4.5e-06, 1e-6);
  BOOST_CHECK_EQUAL(row.question, "hello there");
  // The steps that ran travel with the row (guard_input, router, and the
  // retrieve step that timed out).
  BOOST_REQUIRE_GE(row.steps.size(), 2u);
  BOOST_CHECK(row.steps[0].step == node::guard_input);
  caf::anon_send_exit(hung, caf::exit_reason::kill);
}

BOOST_AUTO_TEST_CASE(missing_node_is_an_honest_error) {
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  g.at(node::router)
    = sys.spawn([](node_actor::pointer) -> node_actor::behavior_type {
        return {
          [](atom::step, domain::ask_box& box) {
            box->route = domain::route_kind::data;
            return std::move(box);
          },
        };
      });
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  spawn(g, limits{});
  run();
  BOOST_REQUIRE(result && result->ok());
  auto& st = result->value();
  BOOST_CHECK(st.status == domain::status_kind::error);
  BOOST_CHECK(std::find(st.warnings.begin(), st.warnings.end(),
                        "node_unavailable:sql_generate")
              != st.warnings.end());
}

BOOST_AUTO_TEST_CASE(model_errors_become_http_errors) {
  for (auto code : {domain::ec::fixture_missing, domain::ec::llm_unavailable}) {
    result.reset();
    graph g;
    g.at(node::guard_input) = sys.spawn(passthrough, calls);
    g.at(node::router) = sys.spawn(failing, code);
    g.at(node::finalize) = sys.spawn(passthrough, calls);
    spawn(g, limits{});
    run();
    BOOST_REQUIRE(result);
    BOOST_REQUIRE(!result->ok());
    BOOST_CHECK_EQUAL(result->err().code, code);
  }
}

BOOST_AUTO_TEST_CASE(a_dead_node_fails_only_its_request) {
  graph g;
  g.at(node::guard_input) = sys.spawn(passthrough, calls);
  g.at(node::finalize) = sys.spawn(passthrough, calls);
  auto dead = sys.spawn(passthrough, calls);
  caf::anon_send_exit(dead, caf::exit_reason::kill);
  run();
  g.at(node::router) = dead;
  spawn(g, limits{});
  run();
  BOOST_REQUIRE(result);
  BOOST_REQUIRE(!result->ok());
  BOOST_CHECK_EQUAL(result->err().code, domain::ec::internal);
}

BOOST_AUTO_TEST_SUITE_END()
