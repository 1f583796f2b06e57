#include "net/errors.hpp"

namespace candor::net {

int http_status(domain::ec code) noexcept {
  using domain::ec;
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
    case ec::llm_unavailable:
    case ec::overloaded:
    case ec::shutting_down: return 503;
    case ec::timeout: return 504;
    default: return 500;
  }
}

} // namespace candor::net
