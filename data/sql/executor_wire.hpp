#pragma once

// The wire between the SQL sandbox (data/sql/executor.cpp, the parent side)
// and its executor processes (data/sql/executor_child.cpp): length-prefixed
// frames, a 4-byte big-endian length followed by a JSON payload. Internal
// to data/sql/.

#include <cstdint>
#include <string>
#include <string_view>

namespace candor::data::executor_wire {

/// The descriptor number the socket gets in the child.
constexpr int child_socket_fd = 3;

/// `payload` with its length prefix.
inline std::string make_frame(std::string_view payload) {
  auto n = static_cast<uint32_t>(payload.size());
  std::string out;
  out.reserve(payload.size() + 4);
  out.push_back(static_cast<char>((n >> 24) & 0xFF));
  out.push_back(static_cast<char>((n >> 16) & 0xFF));
  out.push_back(static_cast<char>((n >> 8) & 0xFF));
  out.push_back(static_cast<char>(n & 0xFF));
  out.append(payload);
  return out;
}

/// The payload length a 4-byte header announces.
inline uint32_t frame_length(const unsigned char* hdr) {
  return (uint32_t{hdr[0]} << 24) | (uint32_t{hdr[1]} << 16)
         | (uint32_t{hdr[2]} << 8) | uint32_t{hdr[3]};
}

} // namespace candor::data::executor_wire
