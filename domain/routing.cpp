// The edges of the answer graph: which node runs next, the least model
// calls a node makes, and a step's trace outcome.

#include "domain/routing.hpp"

namespace candor::domain {

node next_node(node current, const ask_state& st) noexcept {
  if (current == node::finalize || current == node::done)
    return node::done;
  if (st.finished())
    return node::finalize;
  switch (current) {
    case node::guard_input: return node::router;
    case node::router:
      switch (st.route) {
        case route_kind::docs: return node::retrieve;
        case route_kind::data: return node::sql_generate;
        case route_kind::out_of_scope: return node::out_of_scope;
        case route_kind::none: return node::finalize;
      }
      return node::finalize;
    case node::out_of_scope: return node::finalize;
    case node::retrieve: return node::rag_answer;
    case node::rag_answer: return node::check_citations;
    case node::check_citations: return node::finalize;
    case node::sql_generate: return node::sql_validate;
    case node::sql_validate:
      return st.pending_error.empty() ? node::sql_execute : node::sql_correct;
    case node::sql_correct: return node::sql_validate;
    case node::sql_execute:
      return st.pending_error.empty() ? node::sql_answer : node::sql_correct;
    case node::sql_answer: return node::finalize;
    case node::finalize:
    case node::done: return node::done;
  }
  return node::finalize;
}

int32_t min_model_calls(node n, const ask_state& st) noexcept {
  switch (n) {
    case node::router:
      return st.request.force_route == route_kind::none ? 1 : 0;
    case node::guard_input:
      return st.service.guardrail_mode == "rules+model" ? 1 : 0;
    case node::rag_answer:
    case node::sql_generate:
    case node::sql_correct:
    case node::sql_answer: return 1;
    default: return 0;
  }
}

} // namespace candor::domain

namespace candor::domain {

std::string step_outcome(node n, const ask_state& after) {
  if (n == node::router && !after.finished()) {
    auto out = "route:" + std::string{to_string(after.route)};
    if (!after.standalone.empty()) // a follow-up, and what it stands for
      out += " follow-up: " + after.standalone;
    return out;
  }
  if (n == node::sql_generate && !after.finished() && !after.sql.plan.empty())
    return "planned: " + after.sql.plan;
  if (after.finished())
    return std::string{to_string(after.status)};
  return "ok";
}

} // namespace candor::domain
