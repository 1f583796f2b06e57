#pragma once

#include <string>
#include <string_view>

#include "domain/error.hpp"
#include "domain/types.hpp"

/// The schemas of model replies, checked in code. A reply that does not
/// parse is an `llm_parse_failed` error whose message lists the problems, so
/// a node can re-ask once with them.
namespace candor::domain {

/// Router reply: {"route": "docs"|"data"|"out_of_scope", "reason": 3..200}.
struct router_decision {
  route_kind route = route_kind::none;
  std::string reason;
};

outcome<router_decision> parse_router_reply(std::string_view text);

/// Fixed texts of deterministic outcomes (no model involved).
namespace texts {

inline constexpr std::string_view out_of_scope
  = "I can only answer questions about Kestrel Cycle Works: its policies, "
    "guides and services, or figures from its sales data. This question is "
    "outside that scope, so I will not guess an answer.";

inline constexpr std::string_view input_blocked
  = "This request was blocked by the input guard because it looks like an "
    "attempt to change the assistant's instructions or extract protected "
    "information. Please ask a question about our policies, products or "
    "sales data.";

inline constexpr std::string_view output_blocked
  = "The answer was withheld because it contained protected content.";

inline constexpr std::string_view budget_exceeded
  = "The request needed more model calls than its budget allows, so it was "
    "stopped without an answer.";

inline constexpr std::string_view step_cap_exceeded
  = "The request took more processing steps than allowed, so it was stopped "
    "without an answer.";

inline constexpr std::string_view node_unavailable
  = "This kind of question cannot be answered by this server yet: the part "
    "of candor that handles it is not available.";

inline constexpr std::string_view response_invalid
  = "An internal error prevented a valid answer.";

inline constexpr std::string_view route_reason_withheld
  = "reason withheld by the output guard";

} // namespace texts

} // namespace candor::domain
