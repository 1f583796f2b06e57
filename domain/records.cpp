#include "domain/records.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "domain/log.hpp"

namespace candor::domain {

std::string cut_utf8(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) {
      if (chars == max_chars)
        return text.substr(0, i);
      ++chars;
    }
  }
  return text;
}

int64_t wall_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch())
    .count();
}

std::string new_request_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  using namespace std::chrono;
  auto ms = static_cast<uint64_t>(
    duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count());
  uint64_t hi = (ms << 16) | 0x7000u | (rng() & 0x0FFFu);
  uint64_t lo = (rng() & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  // 8-4-4-4-12 lower-case hex digits (hi's 16, then lo's 16), written
  // without printf (this runs once per request).
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(36, '-');
  size_t at = 0;
  auto put = [&](uint64_t x, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i, ++at) {
      if (at == 8 || at == 13 || at == 18 || at == 23)
        ++at;
      out[at] = digits[(x >> (4 * i)) & 0xF];
    }
  };
  put(hi, 16);
  put(lo, 16);
  return out;
}

} // namespace candor::domain

namespace candor::domain {

void record_outcome(request_record& rec, const ask_state& st) {
  if (st.route != route_kind::none)
    rec.route = std::string{to_string(st.route)};
  rec.status = std::string{to_string(st.status)};
  if (st.blocked_by != layer_kind::none)
    rec.blocked_by = std::string{to_string(st.blocked_by)};
  rec.llm_calls = st.usage.calls;
  rec.tokens = st.usage.tokens_in + st.usage.tokens_out;
  rec.cost_usd = st.usage.cost_usd;
  rec.steps = st.trace;
  rec.warnings = st.request.warnings;
  for (const auto& w : st.warnings)
    if (std::find(rec.warnings.begin(), rec.warnings.end(), w)
        == rec.warnings.end())
      rec.warnings.push_back(w);
}

} // namespace candor::domain

namespace candor::domain {

void log_request(const request_record& rec) {
  auto level = rec.http_status >= 500 ? log_level::error : log_level::info;
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
      if (!rec.blocked_by.empty())
        f.text("blockedBy", rec.blocked_by);
      if (!rec.error.empty())
        f.text("error", rec.error);
      if (!rec.warnings.empty())
        f.texts("warnings", rec.warnings);
    },
    log_delivery::buffered);
}

} // namespace candor::domain
