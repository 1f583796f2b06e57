#pragma once

#include "domain/error.hpp"

namespace candor::net {

/// The single error -> HTTP status mapping: 400 invalid_request, 401
/// unauthorized, 404 not_found, 405 method_not_allowed, 413
/// payload_too_large, 414 uri_too_long, 415
/// unsupported_media_type, 422 fixture_missing, 431 header_too_large, 503
/// llm_unavailable / overloaded / shutting_down, 504 timeout, 500
/// everything else.
int http_status(domain::ec code) noexcept;

} // namespace candor::net
