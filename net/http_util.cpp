// Pure helpers of the HTTP layer: request targets, percent-decoding, query
// strings, header values and the route table.

#include "net/http_util.hpp"

#include <charconv>
#include <optional>

#include "domain/embedded.hpp"
#include "domain/text.hpp"

namespace candor::net {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

char lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// Whether `s` equals `word` (lower case) ignoring ASCII case.
bool is_word(std::string_view s, std::string_view word) noexcept {
  if (s.size() != word.size())
    return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (lower(s[i]) != word[i])
      return false;
  return true;
}

/// Calls `fn(token)` for each element of the comma-separated lists in
/// `fields` (one entry per header field), trimmed; empty elements are
/// skipped (RFC 9110 §5.6.1).
template <class F>
void for_each_token(std::span<const std::string_view> fields, F fn) {
  for (auto field : fields) {
    while (!field.empty()) {
      auto comma = field.find(',');
      auto token = trim(field.substr(0, comma));
      field = comma == std::string_view::npos ? std::string_view{}
                                              : field.substr(comma + 1);
      if (!token.empty())
        fn(token);
    }
  }
}

/// For a target in absolute form (scheme http or https, any case), what
/// follows the authority: "/path?q", "?q" or "". Nothing otherwise.
std::optional<std::string_view> after_authority(std::string_view raw) {
  auto scheme_end = raw.find("://");
  if (scheme_end == std::string_view::npos || scheme_end > 5)
    return std::nullopt;
  auto scheme = raw.substr(0, scheme_end);
  if (!is_word(scheme, "http") && !is_word(scheme, "https"))
    return std::nullopt;
  auto rest = raw.substr(scheme_end + 3);
  auto end = rest.find_first_of("/?#");
  if (end == 0)
    return std::nullopt; // "http:///x": no authority (RFC 9112 §3.2.2)
  return end == std::string_view::npos ? std::string_view{} : rest.substr(end);
}

} // namespace

bool valid_request_id(std::string_view id) noexcept {
  if (id.size() < 8 || id.size() > 64)
    return false;
  for (char c : id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

bool is_json_media_type(std::string_view content_type) noexcept {
  return is_word(trim(content_type.substr(0, content_type.find(';'))),
                 "application/json");
}

bool accepts_event_stream(std::string_view accept) noexcept {
  while (!accept.empty()) {
    auto comma = accept.find(',');
    auto range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view{}
                                             : accept.substr(comma + 1);
    auto semi = range.find(';');
    if (!is_word(trim(range.substr(0, semi)), "text/event-stream"))
      continue;
    // The parameters: only "q" matters, and only when it is zero.
    bool refused = false;
    while (semi != std::string_view::npos) {
      range.remove_prefix(semi + 1);
      semi = range.find(';');
      auto param = trim(range.substr(0, semi));
      auto eq = param.find('=');
      if (eq == std::string_view::npos
          || !is_word(trim(param.substr(0, eq)), "q"))
        continue;
      auto q = trim(param.substr(eq + 1));
      refused
        = !q.empty() && q.find_first_not_of("0.") == std::string_view::npos;
    }
    if (!refused)
      return true;
  }
  return false;
}

bool percent_decode(std::string_view in, std::string& out, bool plus_as_space) {
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size())
        return false;
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0)
        return false;
      auto byte = static_cast<char>(hi * 16 + lo);
      if (byte == '\0')
        return false;
      out.push_back(byte);
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

domain::outcome<target> parse_target(std::string_view raw) {
  // RFC 9112 §3.2.2: a server MUST accept the absolute form
  // ("http://host:port/path?q"); the authority is ignored (this server
  // answers for whatever host the client connected to).
  if (auto rest = after_authority(raw)) {
    if (rest->empty() || rest->front() != '/')
      return parse_target("/" + std::string{*rest});
    raw = *rest;
  }
  if (raw.empty() || raw.front() != '/')
    return domain::make_error(domain::ec::invalid_request,
                              "request target must start with '/'");
  target t;
  auto qpos = raw.find('?');
  auto path = raw.substr(0, qpos);
  auto query = qpos == std::string_view::npos ? std::string_view{}
                                              : raw.substr(qpos + 1);
  if (auto hash = query.find('#'); hash != std::string_view::npos)
    query = query.substr(0, hash);
  if (!percent_decode(path, t.path, false))
    return domain::make_error(domain::ec::invalid_request,
                              "malformed percent-encoding in the path");
  while (!query.empty()) {
    auto amp = query.find('&');
    auto part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{}
                                          : query.substr(amp + 1);
    if (part.empty())
      continue;
    auto eq = part.find('=');
    std::string key;
    std::string value;
    if (!percent_decode(part.substr(0, eq), key, true)
        || (eq != std::string_view::npos
            && !percent_decode(part.substr(eq + 1), value, true)))
      return domain::make_error(domain::ec::invalid_request,
                                "malformed percent-encoding in the query");
    t.query.emplace_back(std::move(key), std::move(value));
  }
  return t;
}

route_id match_route(std::string_view path, std::string& id) {
  id.clear();
  if (path == "/ask")
    return route_id::ask;
  if (path == "/stats")
    return route_id::stats;
  if (path == "/metrics")
    return route_id::metrics;
  if (path == "/health")
    return route_id::health;
  if (path == "/demo/questions")
    return route_id::demo_questions;
  if (path == "/admin/reindex")
    return route_id::admin_reindex;
  if (find_page_asset(path))
    return route_id::page;
  if (path == "/v1/models")
    return route_id::v1_models;
  if (path == "/v1/chat/completions")
    return route_id::v1_chat;
  if (path == "/mcp")
    return route_id::mcp;
  constexpr std::string_view model = "/v1/models/";
  if (path.size() > model.size() && path.substr(0, model.size()) == model) {
    id = std::string{path.substr(model.size())};
    return route_id::v1_model;
  }
  constexpr std::string_view conv = "/conversations/";
  if (path.size() > conv.size() && path.substr(0, conv.size()) == conv) {
    id = std::string{path.substr(conv.size())};
    return route_id::conversations;
  }
  constexpr std::string_view runs = "/runs/";
  if (path.size() > runs.size() && path.substr(0, runs.size()) == runs) {
    id = std::string{path.substr(runs.size())};
    return route_id::runs;
  }
  return route_id::unknown;
}

std::optional<page_asset> find_page_asset(std::string_view path) noexcept {
  if (path == "/")
    return page_asset{"text/html; charset=utf-8", embedded::page_html()};
  if (path == "/static/app.js")
    return page_asset{"application/javascript; charset=utf-8",
                      embedded::page_js()};
  if (path == "/static/app.css")
    return page_asset{"text/css; charset=utf-8", embedded::page_css()};
  // Linked from the page, so that a browser does not ask for
  // /favicon.ico (a 404, which the ledger would count as an error).
  if (path == "/static/favicon.svg")
    return page_asset{"image/svg+xml", embedded::page_icon()};
  return std::nullopt;
}

std::string_view allowed_methods(route_id r) noexcept {
  switch (r) {
    case route_id::ask: return "POST";
    case route_id::admin_reindex: return "POST";
    case route_id::v1_chat: return "POST";
    case route_id::mcp: return "POST, DELETE";
    case route_id::unknown: return "";
    default: return "GET, HEAD";
  }
}

bool method_allowed(route_id r, std::string_view method) noexcept {
  switch (r) {
    case route_id::ask:
    case route_id::admin_reindex:
    case route_id::v1_chat: return method == "POST";
    case route_id::mcp: return method == "POST" || method == "DELETE";
    case route_id::unknown: return false;
    default: return method == "GET" || method == "HEAD";
  }
}

std::optional<domain::error>
check_framing(unsigned version,
              std::span<const std::string_view> transfer_encoding,
              size_t host_fields) {
  auto invalid = [](std::string message) {
    return domain::make_error(domain::ec::invalid_request, std::move(message));
  };
  if (!transfer_encoding.empty()) {
    if (version < 11)
      return invalid("Transfer-Encoding is not allowed in an HTTP/1.0 "
                     "request");
    // Exactly one coding, "chunked": anything else is a coding this server
    // does not decode, or chunked not last, and either way the body's
    // length is unknown (RFC 9112 §6.3): read as "no body", its bytes
    // would be parsed as the next request.
    std::string_view only;
    size_t codings = 0;
    for_each_token(transfer_encoding, [&](std::string_view coding) {
      ++codings;
      only = coding;
    });
    if (codings != 1 || !is_word(only, "chunked"))
      return invalid("unsupported Transfer-Encoding: only a single "
                     "\"chunked\" coding is accepted");
  }
  if (host_fields > 1)
    return invalid("a request must not have more than one Host header");
  if (version >= 11 && host_fields == 0)
    return invalid("an HTTP/1.1 request must have a Host header");
  return std::nullopt;
}

bool wants_keep_alive(unsigned version,
                      std::span<const std::string_view> connection) noexcept {
  bool keep_alive = false;
  bool close = false;
  for_each_token(connection, [&](std::string_view option) {
    close = close || is_word(option, "close");
    keep_alive = keep_alive || is_word(option, "keep-alive");
  });
  return !close && (version >= 11 || keep_alive);
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
  // Every byte of the longer input is visited; a length difference makes
  // the result false without an early exit.
  size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::string_view bearer_token(std::string_view authorization) noexcept {
  auto v = domain::trim_ascii(authorization);
  constexpr std::string_view scheme = "bearer";
  if (v.size() <= scheme.size() || !domain::is_ascii_space(v[scheme.size()]))
    return {};
  for (size_t i = 0; i < scheme.size(); ++i) {
    char c = v[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    if (c != scheme[i])
      return {};
  }
  auto token = domain::trim_ascii(v.substr(scheme.size()));
  for (char c : token)
    if (domain::is_ascii_space(c))
      return {};
  return token;
}

bool valid_stats_window(std::string_view since) noexcept {
  return since == "15m" || since == "1h" || since == "24h" || since == "7d";
}

void append_response_head(std::string& out, unsigned status,
                          std::string_view reason,
                          std::span<const header_field> fields) {
  char digits[8];
  auto end = std::to_chars(digits, digits + sizeof digits, status).ptr;
  out.append("HTTP/1.1 ");
  out.append(digits, static_cast<size_t>(end - digits));
  out.push_back(' ');
  out.append(reason);
  out.append("\r\n");
  for (const auto& [name, value] : fields) {
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
  }
  out.append("\r\n");
}

} // namespace candor::net
