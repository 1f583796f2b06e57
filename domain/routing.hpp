#pragma once

// Declares the edges of the answer graph as pure functions of the state.

#include <cstdint>

#include "domain/types.hpp"

/// The edges of the answer graph, as pure functions of the state. Only the
/// supervisor calls them; nodes never know what comes next.
namespace candor::domain {

/// The node to run after `current` has returned `st`. A finished state
/// (status set) always goes to `finalize`, and `finalize` goes to `done`.
node next_node(node current, const ask_state& st) noexcept;

/// The least number of model calls `n` makes when it runs. The supervisor
/// refuses to start a node whose minimum exceeds the remaining budget.
int32_t min_model_calls(node n, const ask_state& st) noexcept;

/// The first node of every request.
constexpr node entry_node = node::guard_input;

/// The first node of `req`: sql_validate for SQL written by the caller
/// (the SQL layers are its guard; no model reads it), else `entry_node`.
constexpr node entry_node_for(const ask_request& req) noexcept {
  return req.sql.empty() ? entry_node : node::sql_validate;
}

} // namespace candor::domain

namespace candor::domain {

/// The short outcome recorded in the trace for a step of `n` that produced
/// `after`: the status when the step finished the request, the route for the
/// router, otherwise "ok".
std::string step_outcome(node n, const ask_state& after);

} // namespace candor::domain
