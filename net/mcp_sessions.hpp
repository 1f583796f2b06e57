#pragma once

// The MCP endpoint's transport state (internal to net/): the sessions
// issued at `initialize` (Mcp-Session-Id) and the Origin check of the
// Streamable HTTP transport. No Beast here.

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace candor::net {

/// One MCP session: the revision `initialize` negotiated and the API key
/// it was opened with (a session is not usable with another key).
struct mcp_session {
  std::string version;
  std::string key_name;
  std::chrono::steady_clock::time_point last_used;
};

/// The MCP sessions of a server: random 128-bit ids (32 hex digits),
/// bounded in number (the least recently used is dropped first) and
/// forgotten after `idle` without a request. Thread-safe.
class mcp_sessions {
public:
  explicit mcp_sessions(size_t capacity = 4096,
                        std::chrono::seconds idle = std::chrono::hours{1})
      : capacity_(capacity), idle_(idle) {
    // nop
  }

  /// A new session; empty when the random generator failed.
  std::string open(std::string version, std::string key_name);

  /// The session `id` (marked as used now), or nothing when it is unknown,
  /// expired or ended.
  std::optional<mcp_session> touch(const std::string& id);

  /// Ends session `id`; false when it was not known.
  bool close(const std::string& id);

  size_t size();

private:
  void expire(std::chrono::steady_clock::time_point now);

  std::mutex mtx_;
  size_t capacity_;
  std::chrono::seconds idle_;
  std::unordered_map<std::string, mcp_session> map_;
};

/// True when `id` has the shape of a session id this server issues (so
/// that no other value is even looked up).
bool valid_mcp_session_id(std::string_view id) noexcept;

/// The Origin check of the Streamable HTTP transport (DNS rebinding): no
/// Origin (a non-browser client) is allowed; "null" and a malformed one
/// are not. A server bound to loopback accepts only loopback origins
/// (localhost, 127.x.x.x, [::1], any port); otherwise the origin's host
/// and port must be the request's Host (same origin).
bool origin_allowed(std::string_view origin, std::string_view host,
                    bool loopback_bind);

/// Whether an Accept header value lets the answer be application/json
/// (application/json, application/*, */*; absent counts as */*).
bool accepts_json(std::string_view accept);

} // namespace candor::net
