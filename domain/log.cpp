#include "domain/log.hpp"

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <string>

#include <unistd.h>

#include <boost/json/serialize.hpp>

#include "domain/log_mask.hpp"

namespace candor::domain {

namespace {

std::atomic<int> min_level{static_cast<int>(log_level::info)};
std::atomic<void (*)(std::string_view)> sink_fn{nullptr};

std::string_view level_name(log_level l) {
  switch (l) {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warn: return "warn";
    case log_level::error: return "error";
  }
  return "info";
}

std::string iso_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms));
  return buf;
}

void mask_strings(boost::json::value& v) {
  if (v.is_string()) {
    auto masked = mask_secrets(v.as_string());
    if (masked != std::string_view{v.as_string()})
      v = masked;
  } else if (v.is_object()) {
    for (auto& kv : v.as_object())
      mask_strings(kv.value());
  } else if (v.is_array()) {
    for (auto& x : v.as_array())
      mask_strings(x);
  }
}

} // namespace

void set_log_level(std::string_view level) {
  for (auto l : {log_level::debug, log_level::info, log_level::warn,
                 log_level::error})
    if (level == level_name(l))
      min_level = static_cast<int>(l);
}

void set_log_sink(void (*sink)(std::string_view line)) {
  sink_fn = sink;
}

void log_event(log_level level, std::string_view event,
               boost::json::object fields) {
  if (static_cast<int>(level) < min_level.load(std::memory_order_relaxed))
    return;
  boost::json::object line;
  line.reserve(fields.size() + 3);
  line["ts"] = iso_now();
  line["level"] = level_name(level);
  line["event"] = event;
  for (auto& kv : fields) {
    mask_strings(kv.value());
    line[kv.key()] = std::move(kv.value());
  }
  auto text = boost::json::serialize(line);
  text += '\n';
  if (auto* sink = sink_fn.load()) {
    sink(text);
    return;
  }
  static std::mutex mtx;
  std::lock_guard<std::mutex> guard{mtx};
  size_t off = 0;
  while (off < text.size()) {
    auto n = ::write(STDERR_FILENO, text.data() + off, text.size() - off);
    if (n <= 0)
      break;
    off += static_cast<size_t>(n);
  }
}

} // namespace candor::domain
