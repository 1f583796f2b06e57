// The parent side's frame I/O with an executor process and the validation
// of its result replies (declared in data/sql/executor_io.hpp).

#include "data/sql/executor_io.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <utility>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "domain/records.hpp"
#include "data/sql/executor_wire.hpp"

namespace candor::data::executor_io {

namespace json = boost::json;
using namespace executor_wire;

/// Waits until `fd` is readable (or hung up), the deadline passes or
/// `wake_fd` is readable.
wait_result wait_readable(int fd, clock_type::time_point deadline,
                          int wake_fd) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - clock_type::now());
    if (left.count() < 0)
      return wait_result::timeout;
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    auto n
      = ::poll(fds, wake_fd >= 0 ? 2 : 1,
               static_cast<int>(std::min<int64_t>(left.count() + 1, INT_MAX)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return wait_result::error;
    if (n == 0)
      continue; // loop re-checks the deadline
    if (wake_fd >= 0 && (fds[1].revents & POLLIN) != 0)
      return wait_result::wake;
    return wait_result::ready;
  }
}

/// Reads exactly `n` bytes before the deadline.
read_status read_until(int fd, char* p, size_t n,
                       clock_type::time_point deadline, int wake_fd) {
  while (n > 0) {
    switch (wait_readable(fd, deadline, wake_fd)) {
      case wait_result::timeout: return read_status::timeout;
      case wait_result::wake: return read_status::wake;
      case wait_result::error: return read_status::closed;
      case wait_result::ready: break;
    }
    auto r = ::read(fd, p, n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (r <= 0)
      return read_status::closed;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return read_status::ok;
}

read_status read_frame(int fd, std::string& out, uint32_t max,
                       clock_type::time_point deadline, int wake_fd) {
  // The child writes a frame with one write, so one read usually brings
  // the header and the whole payload: read as much as has arrived (up to
  // a buffer) instead of the header and then the payload, each after its
  // own poll. Then read exactly what is missing.
  char buf[16384];
  size_t have = 0;
  while (have < 4) {
    switch (wait_readable(fd, deadline, wake_fd)) {
      case wait_result::timeout: return read_status::timeout;
      case wait_result::wake: return read_status::wake;
      case wait_result::error: return read_status::closed;
      case wait_result::ready: break;
    }
    auto r = ::read(fd, buf + have, sizeof buf - have);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (r <= 0)
      return read_status::closed;
    have += static_cast<size_t>(r);
  }
  auto n = frame_length(reinterpret_cast<const unsigned char*>(buf));
  if (n > max)
    return read_status::too_large;
  // The child answers one frame per request: anything after it is a
  // protocol violation.
  if (have - 4 > n)
    return read_status::closed;
  out.assign(buf + 4, have - 4);
  if (out.size() == n)
    return read_status::ok;
  auto got = out.size();
  out.resize(n);
  return read_until(fd, out.data() + got, n - got, deadline, wake_fd);
}

/// Writes a frame to the child, bounded by the deadline.
bool write_frame(int fd, std::string_view frame,
                 clock_type::time_point deadline) {
  while (!frame.empty()) {
    auto n
      = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now());
      if (left.count() < 0)
        return false;
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(left.count() + 1));
      continue;
    }
    if (n <= 0)
      return false;
    frame.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

/// Converts a reply cell; false when it is not one.
bool parse_cell(const json::value& v, domain::cell& c) {
  using domain::cell;
  switch (v.kind()) {
    case json::kind::null: c.kind = cell::null; return true;
    case json::kind::int64:
      c.kind = cell::integer;
      c.i = v.get_int64();
      return true;
    case json::kind::uint64:
      c.kind = cell::real;
      c.r = static_cast<double>(v.get_uint64());
      return true;
    case json::kind::double_:
      c.kind = cell::real;
      c.r = v.get_double();
      return true;
    case json::kind::string:
      c.kind = cell::text;
      c.s = std::string{v.get_string()};
      return true;
    case json::kind::object: {
      if (auto* inf = v.get_object().if_contains("inf")) {
        if (!inf->is_int64())
          return false;
        c.kind = cell::real;
        c.r = inf->get_int64() > 0 ? HUGE_VAL : -HUGE_VAL;
        return true;
      }
      auto* n = v.get_object().if_contains("blob");
      if (n == nullptr || !n->is_int64() || n->get_int64() < 0)
        return false;
      c.kind = cell::blob;
      c.i = n->get_int64();
      c.s = "<blob " + std::to_string(c.i) + " bytes>";
      return true;
    }
    default: return false;
  }
}

/// Validates a result reply; nothing when it is malformed.
std::optional<domain::sql_exec_result> parse_result(const json::object& obj,
                                                    int32_t max_rows) {
  domain::sql_exec_result res;
  auto* cols = obj.if_contains("columns");
  auto* rows = obj.if_contains("rows");
  auto* count = obj.if_contains("rowCount");
  auto* trunc = obj.if_contains("truncated");
  auto* elapsed = obj.if_contains("elapsedUs");
  if (cols == nullptr || !cols->is_array() || rows == nullptr
      || !rows->is_array() || count == nullptr || !count->is_int64()
      || trunc == nullptr || !trunc->is_bool() || elapsed == nullptr
      || !elapsed->is_int64())
    return std::nullopt;
  for (auto& c : cols->get_array()) {
    if (!c.is_string())
      return std::nullopt;
    res.columns.emplace_back(c.get_string());
  }
  auto& arr = rows->get_array();
  if (arr.size() > static_cast<size_t>(std::max(max_rows, 0)))
    return std::nullopt;
  res.rows.reserve(arr.size());
  for (auto& r : arr) {
    if (!r.is_array() || r.get_array().size() != res.columns.size())
      return std::nullopt;
    std::vector<domain::cell> row(res.columns.size());
    size_t i = 0;
    for (auto& v : r.get_array())
      if (!parse_cell(v, row[i++]))
        return std::nullopt;
    res.rows.push_back(std::move(row));
  }
  res.row_count = count->get_int64();
  res.truncated = trunc->get_bool();
  res.elapsed_us = elapsed->get_int64();
  if (res.row_count < static_cast<int64_t>(res.rows.size())
      || res.elapsed_us < 0)
    return std::nullopt;
  return res;
}

} // namespace candor::data::executor_io
