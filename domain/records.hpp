#pragma once

// Declares the rows written to the ledger database: requests, model calls,
// trace steps and SQL audit rows.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "domain/types.hpp"

/// Rows for the ledger database. The ledger actor is their only writer.
namespace candor::domain {

/// One row per HTTP request that reached the service: every /ask outcome and
/// every HTTP error, whatever the route.
struct request_record {
  std::string request_id;
  int64_t ts_us = 0; ///< arrival, microseconds since the epoch
  std::string method;
  std::string path;
  std::string route;  ///< docs|data|out_of_scope, empty when unrouted
  std::string status; ///< answered|refused|...; empty for HTTP errors
  std::string blocked_by;
  int32_t http_status = 0;
  std::string error; ///< error code name for HTTP errors
  int64_t latency_us = 0;
  std::string question; ///< cut to 200 characters
  int32_t llm_calls = 0;
  int64_t tokens = 0;
  double cost_usd = 0;
  std::vector<std::string> warnings;
  /// The name of the API key (never the key); empty without keys.
  std::string key_name;
  /// The conversation the request is a turn of (empty: none). With a
  /// status, the ledger keeps `turn` as that conversation's newest turn.
  std::string conversation_id;
  turn said;
  /// The turn continues a conversation (false: its first turn, so the
  /// writer has nothing to trim).
  bool conversation_continues = false;
  /// The graph steps of an answered request. They travel with the request
  /// row (one ledger message instead of two) and are stored as trace rows;
  /// requests that ended in an HTTP error have their trace sent by the
  /// supervisor instead.
  std::vector<trace_entry> steps;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request_record& x) {
  return f(x.request_id, x.ts_us, x.method, x.path, x.route, x.status,
           x.blocked_by, x.http_status, x.error, x.latency_us, x.question,
           x.llm_calls, x.tokens, x.cost_usd, x.warnings, x.key_name,
           x.conversation_id, x.said, x.conversation_continues, x.steps);
}

/// Copies what a finished graph run contributes to its request row: route,
/// status, blocking layer, model usage, the trace and the warnings (those
/// raised before the graph first, each once).
void record_outcome(request_record& rec, const ask_state& st);

/// Fills `rec.said`, the conversation turn of a finished graph run: the
/// question as asked (`asked`, secrets masked), its standalone form, route,
/// status, the answer and the SQL, each text cut to `max_bytes` (at a
/// character boundary). Nothing when the request has no conversation.
void record_turn(request_record& rec, const ask_request& asked,
                 const ask_state& st, size_t max_bytes);

/// A blocked first question begins no conversation: there is nothing to
/// follow up on, so its turn is not kept and the answer carries no
/// conversationId (clears it in both). Keeps the ledger's writes on the
/// blocked path to the request row.
void settle_conversation(ask_request& asked, ask_state& st);

/// `text` cut to at most `max_bytes` bytes, at a UTF-8 character boundary.
std::string cut_utf8_bytes(const std::string& text, size_t max_bytes);

/// The request row of a question as its supervisor ends it: what the
/// request carried (id, arrival, method, path, the question cut to 200
/// characters with secrets masked, its warnings), the status code and the
/// latency. `record_outcome` adds an answer's part; an HTTP error's code,
/// spending and trace are set by the caller.
request_record request_row(const ask_request& req, int http_status,
                           int64_t latency_us);

/// Whether a finished request failed on the server's side (its answer
/// ended in error, a 5xx, or a missing fixture: 422 but no fault of the
/// client's), as opposed to a client's bad request: what /stats'
/// errorRate and candor_server_failures_total count.
bool server_failure(std::string_view status, int http_status,
                    std::string_view error) noexcept;

/// One row per logical model call (retries and fallbacks folded in).
struct llm_call_record {
  std::string request_id;
  int64_t ts_us = 0;
  std::string prompt; ///< prompt name, e.g. "router"
  std::string prompt_version;
  std::string provider;
  std::string model; ///< the model that answered (or last tried)
  int32_t attempts = 0;
  int32_t retries = 0;
  bool fallback_used = false;
  /// Every model failed and the local provider answered in their place
  /// (`provider` is then "local").
  bool local_fallback = false;
  std::string outcome; ///< ok | fixture_missing | unavailable | ...
  int64_t tokens_in = 0;
  int64_t tokens_out = 0;
  bool tokens_estimated = true;
  double cost_usd = 0;
  int64_t latency_us = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, llm_call_record& x) {
  return f(x.request_id, x.ts_us, x.prompt, x.prompt_version, x.provider,
           x.model, x.attempts, x.retries, x.fallback_used, x.local_fallback,
           x.outcome, x.tokens_in, x.tokens_out, x.tokens_estimated, x.cost_usd,
           x.latency_us);
}

/// The trace of one request: every graph step in order.
struct trace_record {
  std::string request_id;
  int64_t ts_us = 0;
  std::vector<trace_entry> steps;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trace_record& x) {
  return f(x.request_id, x.ts_us, x.steps);
}

/// One row per SQL statement the data branch saw, allowed or blocked.
struct sql_audit_record {
  std::string request_id;
  int64_t ts_us = 0;
  std::string sql;
  std::string verdict; ///< allow | block | error
  std::string layer;   ///< the deciding layer
  std::string reason;
  int64_t rows = 0;
  int64_t latency_us = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sql_audit_record& x) {
  return f(x.request_id, x.ts_us, x.sql, x.verdict, x.layer, x.reason, x.rows,
           x.latency_us);
}

/// Cuts `text` to at most `max_chars` UTF-8 code points, never splitting one.
std::string cut_utf8(const std::string& text, size_t max_chars);

} // namespace candor::domain

namespace candor::domain {} // namespace candor::domain
