#pragma once

// The JSON log: one masked line per event on stderr, and the line written
// for every request.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

/// JSON logs: one line per event on stderr, each with `ts`, `level` and
/// `event`. String values pass through mask_secrets() before they are
/// written, so a key or bearer token never reaches a log.
namespace candor::domain {
struct request_record;
class json_text_writer;
} // namespace candor::domain

namespace candor::data {

enum class log_level : int { debug = 0, info = 1, warn = 2, error = 3 };

/// Sets the lowest level written ("debug", "info", "warn", "error").
void set_log_level(std::string_view level);

/// How a line reaches stderr. `immediate`: written before log_event
/// returns, or taken along by a write another thread is doing (warnings and
/// errors always wait for their write). `buffered`: appended to a buffer
/// that a flusher thread writes within 20 ms (or at 64 KiB), so that the
/// line logged for every request costs no write(2) on the thread serving
/// it; warnings and errors are never buffered. Order is kept across both.
/// Buffered lines reach stderr by flush_log(), a normal exit, or the
/// flusher; a crash, _exit() or a fatal signal can lose them.
enum class log_delivery { immediate, buffered };

/// Writes one event line (thread-safe).
void log_event(log_level level, std::string_view event,
               boost::json::object fields = {},
               log_delivery delivery = log_delivery::immediate);

/// The fields of a line written by log_line: each string value is masked
/// as log_event masks it, an empty string can be written as null.
class log_fields {
public:
  explicit log_fields(domain::json_text_writer& w) : w_(w) {}

  void text(std::string_view key, std::string_view value);
  /// `null` when `value` is empty.
  void text_or_null(std::string_view key, std::string_view value);
  void texts(std::string_view key, const std::vector<std::string>& values);
  void integer(std::string_view key, int64_t value);
  void real(std::string_view key, double value);

private:
  domain::json_text_writer& w_;
};

/// Writes one event line like log_event, with the fields written by
/// `fill` straight into the line's text (no JSON value is built): for the
/// line logged on every request.
void log_line(log_level level, std::string_view event,
              const std::function<void(log_fields&)>& fill,
              log_delivery delivery = log_delivery::immediate);

/// Writes every buffered line before returning (shutdown; a normal exit
/// does it too).
void flush_log();

/// Redirects log lines to a callback instead of stderr (tests). Passing an
/// empty function restores stderr.
void set_log_sink(void (*sink)(std::string_view line));

/// Writes the per-request JSON log line (event "request": requestId,
/// method, path, route, status, httpStatus, latencyMs, question cut to 200
/// characters, llmCalls, and blockedBy, error, warnings when set); level
/// error for a 5xx. Buffered (see log_delivery).
void log_request(const domain::request_record& rec);

} // namespace candor::data
