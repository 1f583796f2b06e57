#pragma once

// Declares the pure helpers of the HTTP layer (no Beast).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/error.hpp"

/// Pure helpers of the HTTP layer (no Beast): request targets, query
/// strings, header values, the route table. Unit-tested in net_http_util.
namespace candor::net {

/// True when `id` matches ^[A-Za-z0-9._-]{8,64}$ (client request ids and
/// the {requestId} of /runs).
bool valid_request_id(std::string_view id) noexcept;

/// True when a Content-Type names application/json (case-insensitive,
/// parameters such as "; charset=utf-8" allowed).
bool is_json_media_type(std::string_view content_type) noexcept;

/// True when an Accept field lists text/event-stream (case-insensitive)
/// with a quality above 0: POST /ask then streams its progress.
bool accepts_event_stream(std::string_view accept) noexcept;

/// Percent-decodes `in` into `out`; `plus_as_space` for query components.
/// Returns false on a malformed escape or a decoded NUL byte.
bool percent_decode(std::string_view in, std::string& out, bool plus_as_space);

/// A parsed origin-form request target.
struct target {
  std::string path;                                       ///< decoded
  std::vector<std::pair<std::string, std::string>> query; ///< decoded, in order
};

/// Splits and decodes "/path?a=b&c", or its absolute form
/// "http://host/path?a=b&c" (RFC 9112 §3.2.2; the authority is ignored,
/// an empty path is "/"). Any other target, or a malformed escape, is
/// `invalid_request`.
domain::outcome<target> parse_target(std::string_view raw);

/// The routes of the API.
enum class route_id {
  unknown,
  ask,
  stats,
  metrics,
  health,
  runs,
  demo_questions,
  admin_reindex, ///< POST /admin/reindex (token from the environment)
  page,          ///< GET / and its assets under /static/ (DESIGN §8)
  v1_models,     ///< GET /v1/models (OpenAI-compatible)
  v1_model,      ///< GET /v1/models/{id}
  v1_chat,       ///< POST /v1/chat/completions (OpenAI-compatible)
  conversations, ///< GET /conversations/{id}
  mcp,           ///< POST and DELETE /mcp (MCP, Streamable HTTP)
};

/// Matches a decoded path: the route and, for /runs/{id},
/// /conversations/{id} and /v1/models/{id}, the id segment.
/// "/runs/" followed by anything counts as the runs route (the id is checked
/// afterwards).
route_id match_route(std::string_view path, std::string& id);

/// One file of the page: its media type and its bytes (compiled into the
/// binary, see domain/embedded.hpp).
struct page_asset {
  std::string_view content_type;
  std::string_view body;
};

/// The page's file at `path` ("/", "/static/app.js", "/static/app.css",
/// "/static/favicon.svg");
/// nullopt for any other path, so an unknown /static/ file is a 404.
std::optional<page_asset> find_page_asset(std::string_view path) noexcept;

/// The Content-Security-Policy of the page and its assets: nothing but
/// same-origin script, style, fetch and images; no inline script or style.
inline constexpr std::string_view page_csp
  = "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

/// The value of the `Allow` header for a route ("POST" or "GET, HEAD").
std::string_view allowed_methods(route_id r) noexcept;

/// Whether `method` is served on the route: POST on /ask,
/// /admin/reindex and /v1/chat/completions, GET and HEAD (RFC 9110 §9.1)
/// on the others.
bool method_allowed(route_id r, std::string_view method) noexcept;

/// Checks what a complete request header says about the message's framing,
/// before any body byte is read: `invalid_request` (answered with the
/// connection closed) for a Transfer-Encoding that is not exactly one
/// "chunked" coding (RFC 9112 §6.1, §6.3: a coding this server does not
/// decode, or chunked not last, leaves the body's length unknown, and bytes
/// read as "no body" would be taken for the next request), for
/// Transfer-Encoding in an HTTP/1.0 request, for more than one Host field,
/// and for an HTTP/1.1 request without one (§3.2). `version` is 10 or 11;
/// `transfer_encoding` holds each Transfer-Encoding field's value.
std::optional<domain::error>
check_framing(unsigned version,
              std::span<const std::string_view> transfer_encoding,
              size_t host_fields);

/// Whether the connection stays open after the response (RFC 9112 §9.3):
/// not when any Connection field lists "close"; otherwise always in
/// HTTP/1.1, and in HTTP/1.0 when one lists "keep-alive". `connection`
/// holds each Connection field's value.
bool wants_keep_alive(unsigned version,
                      std::span<const std::string_view> connection) noexcept;

/// Compares two secrets in time that depends only on their lengths, not
/// on where they differ.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

/// The token of an `Authorization: Bearer <token>` header value (scheme
/// case-insensitive, surrounding spaces ignored); empty when the value is
/// not a bearer credential.
std::string_view bearer_token(std::string_view authorization) noexcept;

/// The windows /stats accepts.
bool valid_stats_window(std::string_view since) noexcept;

/// One response header field: name and value.
using header_field = std::pair<std::string_view, std::string_view>;

/// Appends an HTTP/1.1 response head to `out`: the status line
/// ("HTTP/1.1 200 OK"), each field as "Name: value", and the empty line
/// that ends the head, byte for byte what Beast's serializer writes for
/// the same message. The session sends it with the body in one gather
/// write.
void append_response_head(std::string& out, unsigned status,
                          std::string_view reason,
                          std::span<const header_field> fields);

} // namespace candor::net
