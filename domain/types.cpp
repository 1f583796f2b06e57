// Names and parsers of the graph's enumerations, and small helpers on the
// request state (warnings, usage sums, USD rounding).

#include "domain/types.hpp"

#include <algorithm>
#include <cmath>

namespace candor::domain {

std::string_view to_string(node x) noexcept {
  switch (x) {
    case node::guard_input: return "guard_input";
    case node::router: return "router";
    case node::out_of_scope: return "out_of_scope";
    case node::retrieve: return "retrieve";
    case node::rag_answer: return "rag_answer";
    case node::check_citations: return "check_citations";
    case node::sql_generate: return "sql_generate";
    case node::sql_validate: return "sql_validate";
    case node::sql_correct: return "sql_correct";
    case node::sql_execute: return "sql_execute";
    case node::sql_answer: return "sql_answer";
    case node::finalize: return "finalize";
    case node::done: return "done";
  }
  return "unknown";
}

std::string_view to_string(route_kind x) noexcept {
  switch (x) {
    case route_kind::none: return "none";
    case route_kind::docs: return "docs";
    case route_kind::data: return "data";
    case route_kind::out_of_scope: return "out_of_scope";
  }
  return "none";
}

route_kind parse_route(std::string_view text) noexcept {
  if (text == "docs")
    return route_kind::docs;
  if (text == "data")
    return route_kind::data;
  if (text == "out_of_scope")
    return route_kind::out_of_scope;
  return route_kind::none;
}

std::string_view to_string(status_kind x) noexcept {
  switch (x) {
    case status_kind::pending: return "pending";
    case status_kind::answered: return "answered";
    case status_kind::refused: return "refused";
    case status_kind::no_results: return "no_results";
    case status_kind::blocked: return "blocked";
    case status_kind::error: return "error";
  }
  return "error";
}

std::string_view to_string(layer_kind x) noexcept {
  switch (x) {
    case layer_kind::none: return "none";
    case layer_kind::input_rules: return "input_rules";
    case layer_kind::input_model: return "input_model";
    case layer_kind::sql_policy: return "sql_policy";
    case layer_kind::sql_authorizer: return "sql_authorizer";
    case layer_kind::output_guard: return "output_guard";
  }
  return "none";
}

std::string_view to_string(chaos_mode x) noexcept {
  switch (x) {
    case chaos_mode::none: return "none";
    case chaos_mode::primary_timeout_once: return "primary_timeout_once";
    case chaos_mode::primary_down: return "primary_down";
    case chaos_mode::all_down: return "all_down";
  }
  return "none";
}

bool parse_chaos(std::string_view text, chaos_mode& out) noexcept {
  for (auto m : {chaos_mode::none, chaos_mode::primary_timeout_once,
                 chaos_mode::primary_down, chaos_mode::all_down})
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  return false;
}

double round_usd(double usd) noexcept {
  return std::round(usd * 1e12) / 1e12;
}

void accumulate(llm_usage& total, const llm_usage& other) {
  total.calls += other.calls;
  total.attempts += other.attempts;
  total.retries += other.retries;
  total.fallback_used = total.fallback_used || other.fallback_used;
  total.local_fallback = total.local_fallback || other.local_fallback;
  total.tokens_in += other.tokens_in;
  total.tokens_out += other.tokens_out;
  total.cost_usd = round_usd(total.cost_usd + other.cost_usd);
  for (auto& m : other.models)
    if (std::find(total.models.begin(), total.models.end(), m)
        == total.models.end())
      total.models.push_back(m);
}

void add_warning(ask_state& st, std::string warning) {
  if (std::find(st.warnings.begin(), st.warnings.end(), warning)
      == st.warnings.end())
    st.warnings.push_back(std::move(warning));
}

void finish(ask_state& st, status_kind status, std::string answer) {
  st.status = status;
  st.answer = std::move(answer);
}

void block(ask_state& st, layer_kind layer, std::vector<std::string> reasons,
           std::string answer) {
  st.status = status_kind::blocked;
  st.blocked_by = layer;
  st.guardrail.verdict = "block";
  st.guardrail.layer = layer;
  st.guardrail.reasons = std::move(reasons);
  st.answer = std::move(answer);
  // Follow-ups come from the model reply that was just refused (its SQL or
  // its answer): none is offered with a block.
  st.follow_ups.clear();
}

} // namespace candor::domain
