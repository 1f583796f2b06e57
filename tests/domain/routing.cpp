// Tests of the answer graph's edges, minimum model calls and step
// outcomes, and of UTF-8-safe cutting in request records.

#include "domain/routing.hpp"

#include <boost/test/unit_test.hpp>

using namespace candor::domain;

namespace {

ask_state pending() {
  return ask_state{};
}

ask_state with_route(route_kind r) {
  ask_state st;
  st.route = r;
  return st;
}

ask_state finished(status_kind s) {
  ask_state st;
  st.status = s;
  return st;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_routing)

BOOST_AUTO_TEST_CASE(guard_input_goes_to_router_unless_finished) {
  BOOST_CHECK(next_node(node::guard_input, pending()) == node::router);
  BOOST_CHECK(next_node(node::guard_input, finished(status_kind::blocked))
              == node::finalize);
}

BOOST_AUTO_TEST_CASE(router_edges_follow_the_route) {
  BOOST_CHECK(next_node(node::router, with_route(route_kind::docs))
              == node::retrieve);
  BOOST_CHECK(next_node(node::router, with_route(route_kind::data))
              == node::sql_generate);
  BOOST_CHECK(next_node(node::router, with_route(route_kind::out_of_scope))
              == node::out_of_scope);
  // No route and no outcome: nothing to do but finalize.
  BOOST_CHECK(next_node(node::router, with_route(route_kind::none))
              == node::finalize);
}

BOOST_AUTO_TEST_CASE(docs_branch_is_linear) {
  BOOST_CHECK(next_node(node::retrieve, pending()) == node::rag_answer);
  BOOST_CHECK(next_node(node::rag_answer, pending()) == node::check_citations);
  BOOST_CHECK(next_node(node::check_citations, pending()) == node::finalize);
  BOOST_CHECK(next_node(node::retrieve, finished(status_kind::refused))
              == node::finalize);
}

BOOST_AUTO_TEST_CASE(data_branch_loops_through_correction) {
  BOOST_CHECK(next_node(node::sql_generate, pending()) == node::sql_validate);
  BOOST_CHECK(next_node(node::sql_validate, pending()) == node::sql_execute);
  auto st = pending();
  st.pending_error = "no such column: totl";
  BOOST_CHECK(next_node(node::sql_validate, st) == node::sql_correct);
  BOOST_CHECK(next_node(node::sql_execute, st) == node::sql_correct);
  BOOST_CHECK(next_node(node::sql_correct, st) == node::sql_validate);
  BOOST_CHECK(next_node(node::sql_execute, pending()) == node::sql_answer);
  BOOST_CHECK(next_node(node::sql_answer, pending()) == node::finalize);
  BOOST_CHECK(next_node(node::sql_validate, finished(status_kind::blocked))
              == node::finalize);
}

BOOST_AUTO_TEST_CASE(out_of_scope_and_finalize_terminate) {
  BOOST_CHECK(next_node(node::out_of_scope, finished(status_kind::refused))
              == node::finalize);
  BOOST_CHECK(next_node(node::finalize, finished(status_kind::refused))
              == node::done);
  BOOST_CHECK(next_node(node::finalize, pending()) == node::done);
  BOOST_CHECK(next_node(node::done, pending()) == node::done);
}

BOOST_AUTO_TEST_CASE(every_node_reaches_done_within_the_longest_path) {
  // From any node and any state, following the edges ends in `done`; the
  // correction loop is bounded by the supervisor, so clear the error there.
  for (size_t i = 0; i < node_count; ++i) {
    auto n = static_cast<node>(i);
    auto st = with_route(route_kind::docs);
    int steps = 0;
    while (n != node::done && steps < 30) {
      n = next_node(n, st);
      if (n == node::finalize)
        st.status = status_kind::answered;
      ++steps;
    }
    BOOST_CHECK_MESSAGE(n == node::done, "stuck from node " << i);
  }
}

BOOST_AUTO_TEST_CASE(min_model_calls_per_node) {
  auto st = pending();
  BOOST_CHECK_EQUAL(min_model_calls(node::router, st), 1);
  st.request.force_route = route_kind::docs;
  BOOST_CHECK_EQUAL(min_model_calls(node::router, st), 0);
  BOOST_CHECK_EQUAL(min_model_calls(node::guard_input, st), 0);
  st.service.guardrail_mode = "rules+model";
  BOOST_CHECK_EQUAL(min_model_calls(node::guard_input, st), 1);
  BOOST_CHECK_EQUAL(min_model_calls(node::out_of_scope, st), 0);
  BOOST_CHECK_EQUAL(min_model_calls(node::finalize, st), 0);
  BOOST_CHECK_EQUAL(min_model_calls(node::rag_answer, st), 1);
}

BOOST_AUTO_TEST_CASE(step_outcomes) {
  auto st = with_route(route_kind::data);
  BOOST_CHECK_EQUAL(step_outcome(node::router, st), "route:data");
  BOOST_CHECK_EQUAL(step_outcome(node::guard_input, pending()), "ok");
  BOOST_CHECK_EQUAL(
    step_outcome(node::guard_input, finished(status_kind::blocked)), "blocked");
}

BOOST_AUTO_TEST_SUITE_END()

#include "domain/records.hpp"

BOOST_AUTO_TEST_SUITE(domain_records)

BOOST_AUTO_TEST_CASE(cut_utf8_never_splits_a_code_point) {
  BOOST_CHECK_EQUAL(cut_utf8("héllo", 2), "hé");
  BOOST_CHECK_EQUAL(cut_utf8("abc", 10), "abc");
  BOOST_CHECK_EQUAL(cut_utf8("€€€", 1), "€");
}

BOOST_AUTO_TEST_SUITE_END()
