// The MCP sessions and the Origin check (see net/mcp_sessions.hpp).

#include "net/mcp_sessions.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <openssl/rand.h>

namespace candor::net {

std::string mcp_sessions::open(std::string version, std::string key_name) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    return {};
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  id.reserve(32);
  for (auto b : bytes) {
    id.push_back(hex[b >> 4]);
    id.push_back(hex[b & 15]);
  }
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> guard{mtx_};
  expire(now);
  if (map_.size() >= capacity_) {
    auto oldest = std::min_element(
      map_.begin(), map_.end(), [](const auto& a, const auto& b) {
        return a.second.last_used < b.second.last_used;
      });
    map_.erase(oldest);
  }
  map_[id] = mcp_session{std::move(version), std::move(key_name), now};
  return id;
}

std::optional<mcp_session> mcp_sessions::touch(const std::string& id) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> guard{mtx_};
  auto it = map_.find(id);
  if (it == map_.end())
    return std::nullopt;
  if (now - it->second.last_used > idle_) {
    map_.erase(it);
    return std::nullopt;
  }
  it->second.last_used = now;
  return it->second;
}

bool mcp_sessions::close(const std::string& id) {
  std::lock_guard<std::mutex> guard{mtx_};
  return map_.erase(id) > 0;
}

size_t mcp_sessions::size() {
  std::lock_guard<std::mutex> guard{mtx_};
  return map_.size();
}

void mcp_sessions::expire(std::chrono::steady_clock::time_point now) {
  for (auto it = map_.begin(); it != map_.end();)
    if (now - it->second.last_used > idle_)
      it = map_.erase(it);
    else
      ++it;
}

bool valid_mcp_session_id(std::string_view id) noexcept {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

namespace {

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The host of "host", "host:port", "[v6]" or "[v6]:port"; empty when
/// malformed.
std::string_view host_part(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    auto end = authority.find(']');
    if (end == std::string_view::npos)
      return {};
    auto rest = authority.substr(end + 1);
    if (!rest.empty() && rest.front() != ':')
      return {};
    return authority.substr(0, end + 1);
  }
  auto colon = authority.find(':');
  return authority.substr(0, colon);
}

bool loopback_host(std::string_view host) {
  if (host == "localhost" || host == "[::1]")
    return true;
  if (host.rfind("127.", 0) != 0)
    return false;
  return std::all_of(host.begin(), host.end(),
                     [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

} // namespace

bool origin_allowed(std::string_view origin, std::string_view host,
                    bool loopback_bind) {
  if (origin.empty())
    return true;
  auto o = lower(origin);
  std::string_view rest{o};
  if (rest.rfind("http://", 0) == 0)
    rest.remove_prefix(7);
  else if (rest.rfind("https://", 0) == 0)
    rest.remove_prefix(8);
  else
    return false; // "null", or not an origin
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos)
    return false;
  auto h = host_part(rest);
  if (h.empty())
    return false;
  if (loopback_bind)
    return loopback_host(h);
  return rest == lower(host);
}

bool accepts_json(std::string_view accept) {
  if (accept.empty())
    return true;
  auto a = lower(accept);
  return a.find("application/json") != std::string::npos
         || a.find("application/*") != std::string::npos
         || a.find("*/*") != std::string::npos;
}

} // namespace candor::net
