// Names of the error codes and the single error -> HTTP status mapping.

#include "domain/error.hpp"

#include <ostream>

namespace candor::domain {

std::string_view to_string(ec code) noexcept {
  switch (code) {
    case ec::none: return "none";
    case ec::invalid_request: return "invalid_request";
    case ec::not_found: return "not_found";
    case ec::method_not_allowed: return "method_not_allowed";
    case ec::payload_too_large: return "payload_too_large";
    case ec::unsupported_media_type: return "unsupported_media_type";
    case ec::fixture_missing: return "fixture_missing";
    case ec::llm_unavailable: return "llm_unavailable";
    case ec::overloaded: return "overloaded";
    case ec::shutting_down: return "shutting_down";
    case ec::timeout: return "timeout";
    case ec::internal: return "internal";
    case ec::llm_budget_exceeded: return "llm_budget_exceeded";
    case ec::step_cap_exceeded: return "step_cap_exceeded";
    case ec::llm_truncated: return "llm_truncated";
    case ec::llm_parse_failed: return "llm_parse_failed";
    case ec::node_unavailable: return "node_unavailable";
    case ec::config_invalid: return "config_invalid";
    case ec::storage_failed: return "storage_failed";
    case ec::sql_timeout: return "sql_timeout";
    case ec::sql_executor_failed: return "sql_executor_failed";
    case ec::sql_failed: return "sql_failed";
    case ec::index_unavailable: return "index_unavailable";
    case ec::unauthorized: return "unauthorized";
    case ec::uri_too_long: return "uri_too_long";
    case ec::header_too_large: return "header_too_large";
    case ec::rate_limited: return "rate_limited";
    case ec::cancelled: return "cancelled";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, ec code) {
  return out << to_string(code);
}

int http_status(ec code) noexcept {
  switch (code) {
    case ec::invalid_request: return 400;
    case ec::not_found: return 404;
    case ec::unauthorized: return 401;
    case ec::method_not_allowed: return 405;
    case ec::payload_too_large: return 413;
    case ec::uri_too_long: return 414;
    case ec::unsupported_media_type: return 415;
    case ec::fixture_missing: return 422;
    case ec::header_too_large: return 431;
    case ec::rate_limited: return 429;
    case ec::cancelled: return 499;
    case ec::llm_unavailable:
    case ec::sql_executor_failed:
    case ec::overloaded:
    case ec::shutting_down: return 503;
    case ec::timeout: return 504;
    default: return 500;
  }
}

} // namespace candor::domain
