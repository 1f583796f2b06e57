// The JSON log: event lines built and masked here, written to stderr by a
// shared writer (a flusher thread for the per-request line).

#include "data/log.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include <boost/json/serialize.hpp>

#include "domain/json_text.hpp"
#include "domain/log_mask.hpp"
#include "domain/records.hpp"

namespace candor::data {

using namespace candor::domain;

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
  // The date and time part changes once a second: format it only then.
  thread_local std::time_t cached_secs = -1;
  thread_local char cached[24];
  thread_local size_t cached_len = 0;
  if (secs != cached_secs) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    cached_len = std::strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm);
    cached_secs = secs;
  }
  char buf[32];
  std::memcpy(buf, cached, cached_len);
  auto* p = buf + cached_len;
  p[0] = '.';
  p[1] = static_cast<char>('0' + ms / 100);
  p[2] = static_cast<char>('0' + ms / 10 % 10);
  p[3] = static_cast<char>('0' + ms % 10);
  p[4] = 'Z';
  return std::string{buf, cached_len + 5};
}

void write_all(std::string_view text) {
  size_t off = 0;
  while (off < text.size()) {
    auto n = ::write(STDERR_FILENO, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    off += static_cast<size_t>(n);
  }
}

struct line_writer;
line_writer& stderr_writer();

/// Lines on their way to stderr. Threads that log at the same time share
/// write(2) calls: a thread appends its line and, when no other thread is
/// writing, writes everything pending (its own line and whatever others
/// append meanwhile) until nothing is left. A thread that finds a writer
/// at work leaves its line to it; warnings and errors wait until their
/// line is written, so that a line logged right before the process ends
/// is not lost.
///
/// Buffered lines (the per-request line, see `log_delivery`) are only
/// appended; a flusher thread writes them every `flush_interval`, or as
/// soon as `flush_bytes` are waiting, and any unbuffered line written in
/// the meantime takes them along first, so the order of lines is kept.
/// flush_log() and a normal exit (return from main, exit()) write what is
/// left; a crash, _exit() or a signal that ends the process without exit()
/// loses the buffered lines (at most about 20 ms of them when stderr keeps
/// up).
struct line_writer {
  static constexpr auto flush_interval = std::chrono::milliseconds{20};
  static constexpr size_t flush_bytes = 64 * 1024;

  std::mutex mtx;
  std::condition_variable cv;       ///< a write finished
  std::condition_variable flush_cv; ///< the flusher has work or must stop
  std::string pending;
  bool writing = false;
  bool stopping = false;
  std::thread flusher;
  uint64_t appended = 0; ///< bytes appended so far
  uint64_t written = 0;  ///< bytes written so far

  /// Stops the flusher and writes what is pending; later lines are
  /// written at once. Runs at exit (std::atexit, registered when the
  /// flusher starts). The writer itself is never destroyed, so a line
  /// logged after this, from a static destructor or a thread still
  /// running, is still written.
  void stop() {
    std::thread t;
    {
      std::lock_guard<std::mutex> lk{mtx};
      stopping = true;
      t = std::move(flusher);
    }
    flush_cv.notify_all();
    if (t.joinable())
      t.join();
    emit({}, true);
  }

  void emit(std::string_view text, bool wait) {
    std::unique_lock<std::mutex> lk{mtx};
    pending.append(text);
    appended += text.size();
    auto mine = appended;
    if (writing) {
      if (wait)
        cv.wait(lk, [&] { return written >= mine; });
      return;
    }
    drain(lk);
  }

  void buffer(std::string_view text) {
    std::unique_lock<std::mutex> lk{mtx};
    if (stopping || !start_flusher()) {
      lk.unlock();
      emit(text, true);
      return;
    }
    bool was_empty = pending.empty();
    pending.append(text);
    appended += text.size();
    // Wake the flusher when it sleeps on an empty buffer, or early when
    // much is waiting.
    if (was_empty || pending.size() >= flush_bytes)
      flush_cv.notify_one();
  }

  /// Starts the flusher on first use (with `mtx` held); false when the
  /// thread cannot be created, and the line is then written at once.
  bool start_flusher() {
    if (flusher.joinable())
      return true;
    try {
      flusher = std::thread{[this] { run_flusher(); }};
    } catch (const std::system_error&) {
      return false;
    }
    static const bool registered = [] {
      std::atexit([] { stderr_writer().stop(); });
      return true;
    }();
    (void)registered;
    return true;
  }

  /// Writes until nothing is pending. Called with `lk` held and no other
  /// writer at work; returns with `lk` held.
  void drain(std::unique_lock<std::mutex>& lk) {
    writing = true;
    std::string buf;
    while (!pending.empty()) {
      buf.swap(pending);
      auto upto = appended;
      lk.unlock();
      write_all(buf);
      buf.clear();
      lk.lock();
      written = upto;
      cv.notify_all();
    }
    writing = false;
  }

  void run_flusher() {
    pthread_setname_np(pthread_self(), "candor.log");
    std::unique_lock<std::mutex> lk{mtx};
    while (!stopping) {
      // Sleep until a line arrives, then give others 20 ms to add theirs
      // (less when much is waiting) and write them all at once.
      flush_cv.wait(lk, [&] { return stopping || !pending.empty(); });
      flush_cv.wait_for(lk, flush_interval, [&] {
        return stopping || (pending.size() >= flush_bytes && !writing);
      });
      if (!writing && !pending.empty())
        drain(lk);
    }
  }
};

line_writer& stderr_writer() {
  // Never destroyed (see line_writer::stop).
  static line_writer& w = *new line_writer;
  return w;
}

void mask_strings(boost::json::value& v) {
  if (v.is_string()) {
    if (!may_hold_secret(v.as_string()))
      return;
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
  for (auto l :
       {log_level::debug, log_level::info, log_level::warn, log_level::error})
    if (level == level_name(l))
      min_level = static_cast<int>(l);
}

void set_log_sink(void (*sink)(std::string_view line)) {
  sink_fn = sink;
}

void flush_log() {
  stderr_writer().emit({}, true);
}

namespace {

bool enabled(log_level level) {
  return static_cast<int>(level) >= min_level.load(std::memory_order_relaxed);
}

/// Hands a finished line (with its newline) to the sink or stderr.
void deliver(log_level level, const std::string& text, log_delivery delivery) {
  if (auto* sink = sink_fn.load()) {
    sink(text);
    return;
  }
  auto& w = stderr_writer();
  if (delivery == log_delivery::buffered && level < log_level::warn)
    w.buffer(text);
  else
    w.emit(text, level >= log_level::warn);
}

} // namespace

void log_event(log_level level, std::string_view event,
               boost::json::object fields, log_delivery delivery) {
  if (!enabled(level))
    return;
  // Same storage as `fields` (a caller's stack buffer, say), so that the
  // values below move instead of being copied.
  boost::json::object line(fields.storage());
  line.reserve(fields.size() + 3);
  line["ts"] = iso_now();
  line["level"] = level_name(level);
  line["event"] = event;
  for (auto& kv : fields) {
    mask_strings(kv.value());
    line[kv.key()] = std::move(kv.value());
  }
  auto text = json_text(line);
  text += '\n';
  deliver(level, text, delivery);
}

void log_fields::text(std::string_view key, std::string_view value) {
  w_.key(key);
  if (may_hold_secret(value))
    w_.string(mask_secrets(value));
  else
    w_.string(value);
}

void log_fields::text_or_null(std::string_view key, std::string_view value) {
  if (value.empty()) {
    w_.key(key);
    w_.null();
  } else {
    text(key, value);
  }
}

void log_fields::texts(std::string_view key,
                       const std::vector<std::string>& values) {
  w_.key(key);
  w_.begin_array();
  for (const auto& v : values)
    w_.string(may_hold_secret(v) ? mask_secrets(v) : v);
  w_.end_array();
}

void log_fields::integer(std::string_view key, int64_t value) {
  w_.key(key);
  w_.integer(value);
}

void log_fields::real(std::string_view key, double value) {
  w_.key(key);
  w_.real(value);
}

void log_line(log_level level, std::string_view event,
              const std::function<void(log_fields&)>& fill,
              log_delivery delivery) {
  if (!enabled(level))
    return;
  std::string text;
  text.reserve(512);
  json_text_writer w{text};
  w.begin_object();
  w.key("ts");
  w.string(iso_now());
  w.key("level");
  w.string(level_name(level));
  w.key("event");
  w.string(event);
  log_fields fields{w};
  fill(fields);
  w.end_object();
  text += '\n';
  deliver(level, text, delivery);
}

void log_request(const domain::request_record& rec) {
  // The server's own failures are loud: a 5xx at error, a request that
  // ended as `status: error` or with a missing fixture at warn.
  auto level = rec.http_status >= 500 ? log_level::error
               : domain::server_failure(rec.status, rec.http_status, rec.error)
                 ? log_level::warn
                 : log_level::info;
  log_line(
    level, "request",
    [&rec](log_fields& f) {
      f.text("requestId", rec.request_id);
      f.text("method", rec.method);
      f.text("path", rec.path);
      f.text_or_null("route", rec.route);
      f.text_or_null("status", rec.status);
      f.integer("httpStatus", rec.http_status);
      f.real("latencyMs", static_cast<double>(rec.latency_us) / 1000.0);
      // 200 bytes hold at most 200 code points: only a longer text is cut.
      if (rec.question.size() <= 200)
        f.text("question", rec.question);
      else
        f.text("question", cut_utf8(rec.question, 200));
      f.integer("llmCalls", rec.llm_calls);
      // The API key's name (never the key) when the request had one.
      if (!rec.key_name.empty())
        f.text("key", rec.key_name);
      if (!rec.blocked_by.empty())
        f.text("blockedBy", rec.blocked_by);
      if (!rec.error.empty())
        f.text("error", rec.error);
      if (!rec.warnings.empty())
        f.texts("warnings", rec.warnings);
    },
    log_delivery::buffered);
}

} // namespace candor::data
