// Building ledger request rows from requests and finished graph runs, and
// the request's log line.

#include "domain/records.hpp"

#include <algorithm>
#include <cstdio>

#include "domain/log_mask.hpp"

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

} // namespace candor::domain

namespace candor::domain {

request_record request_row(const ask_request& req, int http_status,
                           int64_t latency_us) {
  request_record rec;
  rec.request_id = req.request_id;
  rec.ts_us = req.received_us;
  rec.method = req.method;
  rec.path = req.path;
  rec.http_status = http_status;
  rec.latency_us = latency_us;
  // Masked like the log line: /runs serves the ledger's copy.
  rec.question = cut_utf8(req.question, 200);
  if (may_hold_secret(rec.question)) // a copy only when needed
    rec.question = mask_secrets(rec.question);
  rec.warnings = req.warnings;
  rec.key_name = req.key_name;
  return rec;
}

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

std::string cut_utf8_bytes(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes)
    return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return text.substr(0, end);
}

void settle_conversation(ask_request& asked, ask_state& st) {
  if (asked.continues || st.status != status_kind::blocked)
    return;
  asked.conversation_id.clear();
  st.request.conversation_id.clear();
}

void record_turn(request_record& rec, const ask_request& asked,
                 const ask_state& st, size_t max_bytes) {
  if (asked.conversation_id.empty())
    return;
  rec.conversation_id = asked.conversation_id;
  rec.conversation_continues = asked.continues;
  auto masked = [max_bytes](const std::string& text) {
    auto cut = cut_utf8_bytes(text, max_bytes);
    return may_hold_secret(cut) ? mask_secrets(cut) : cut;
  };
  auto& t = rec.said;
  t.request_id = asked.request_id;
  t.at_us = asked.received_us;
  t.question = masked(asked.question);
  t.standalone = masked(st.standalone);
  t.route = rec.route;
  t.status = rec.status;
  t.answer = masked(st.answer);
  if (st.has_sql)
    t.sql = cut_utf8_bytes(st.sql.query, max_bytes);
}

} // namespace candor::domain

namespace candor::domain {bool server_failure(std::string_view status, int http_status,
                    std::string_view error) noexcept {
  return status == "error" || http_status >= 500
         || error == to_string(ec::fixture_missing);
}

} // namespace candor::domain
