#pragma once

// The parent side's frame I/O with an executor process (bounded by a
// deadline and a wake descriptor) and the validation of its result replies.
// Internal to data/sql/executor.cpp.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "domain/sql/exec.hpp"

namespace candor::data::executor_io {

using clock_type = std::chrono::steady_clock;

enum class wait_result { ready, timeout, wake, error };

/// Waits until `fd` is readable (or hung up), the deadline passes or
/// `wake_fd` is readable.
wait_result wait_readable(int fd, clock_type::time_point deadline, int wake_fd);

enum class read_status { ok, timeout, wake, closed, too_large };

/// Reads exactly `n` bytes before the deadline.
read_status read_until(int fd, char* p, size_t n,
                       clock_type::time_point deadline, int wake_fd);

read_status read_frame(int fd, std::string& out, uint32_t max,
                       clock_type::time_point deadline, int wake_fd);

/// Writes a frame to the child, bounded by the deadline.
bool write_frame(int fd, std::string_view frame,
                 clock_type::time_point deadline);

/// Converts a reply cell; false when it is not one.
bool parse_cell(const boost::json::value& v, domain::cell& c);

/// Validates a result reply; nothing when it is malformed.
std::optional<domain::sql_exec_result>
parse_result(const boost::json::object& obj, int32_t max_rows);

} // namespace candor::data::executor_io
