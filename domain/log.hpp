#pragma once

#include <string_view>

#include <boost/json/object.hpp>

/// JSON logs: one line per event on stderr, each with `ts`, `level` and
/// `event`. String values pass through mask_secrets() before they are
/// written, so a key or bearer token never reaches a log.
namespace candor::domain {

enum class log_level : int { debug = 0, info = 1, warn = 2, error = 3 };

/// Sets the lowest level written ("debug", "info", "warn", "error").
void set_log_level(std::string_view level);

/// Writes one event line (thread-safe; one write(2) per line).
void log_event(log_level level, std::string_view event,
               boost::json::object fields = {});

/// Redirects log lines to a callback instead of stderr (tests). Passing an
/// empty function restores stderr.
void set_log_sink(void (*sink)(std::string_view line));

} // namespace candor::domain
