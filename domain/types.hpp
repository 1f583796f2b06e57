#pragma once

// Declares the value types that travel between the HTTP layer and the
// actor graph: nodes, routes, statuses, the request and its state.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// Value types that travel between the HTTP layer and the actor graph. All are
/// default-constructible and copyable, with a 0.17-style `inspect` so CAF can
/// register them (see actors/interfaces.hpp). No CAF header is included here.
namespace candor::domain {

// -- enumerations -------------------------------------------------------------

/// The nodes of the answer graph. Only the supervisor knows how they connect;
/// the edges are the pure functions in domain/routing.hpp.
enum class node : uint8_t {
  guard_input,
  router,
  out_of_scope,
  retrieve,
  rag_answer,
  check_citations,
  sql_generate,
  sql_validate,
  sql_correct,
  sql_execute,
  sql_answer,
  finalize,
  done, ///< terminal marker, never dispatched
};
constexpr size_t node_count = static_cast<size_t>(node::done);
std::string_view to_string(node x) noexcept;

enum class route_kind : uint8_t { none, docs, data, out_of_scope };
std::string_view to_string(route_kind x) noexcept;
/// Parses "docs", "data", "out_of_scope"; anything else gives `none`.
route_kind parse_route(std::string_view text) noexcept;

enum class status_kind : uint8_t {
  pending,
  answered,
  refused,
  no_results,
  blocked,
  error,
};
std::string_view to_string(status_kind x) noexcept;

/// The defence layer that blocked a request.
enum class layer_kind : uint8_t {
  none,
  input_rules,
  input_model,
  sql_policy,
  sql_authorizer,
  output_guard,
};
std::string_view to_string(layer_kind x) noexcept;

/// Failure injection for the model client, selectable per request in tests.
enum class chaos_mode : uint8_t {
  none,
  primary_timeout_once,
  primary_down,
  all_down,
};
std::string_view to_string(chaos_mode x) noexcept;
/// Parses the names above; returns false on an unknown name.
bool parse_chaos(std::string_view text, chaos_mode& out) noexcept;

// -- request ------------------------------------------------------------------

/// One earlier turn of a conversation, as the ledger keeps it and the graph
/// reads it (bounded: conversations.maxTurnBytes per text).
struct turn {
  std::string request_id;
  std::string question;   ///< as the user said it
  std::string standalone; ///< as the graph read it (empty: the same)
  std::string route;
  std::string status;
  std::string answer;     ///< cut to conversations.maxTurnBytes
  std::string sql;        ///< the statement run, if any
  int64_t at_us = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn& x) {
  return f(x.request_id, x.question, x.standalone, x.route, x.status,
           x.answer, x.sql, x.at_us);
}

/// The question as the conversation so far reads it: the standalone form
/// when there is one, else the words said.
inline const std::string& read_as(const turn& t) noexcept {
  return t.standalone.empty() ? t.question : t.standalone;
}

/// A validated `POST /ask`.
struct ask_request {
  std::string request_id;
  std::string question;
  route_kind force_route = route_kind::none;
  chaos_mode chaos = chaos_mode::none;
  /// Warnings raised before the graph runs (e.g. request_id_replaced).
  std::vector<std::string> warnings;
  /// Wall-clock arrival time, microseconds since the epoch.
  int64_t received_us = 0;
  /// How the question arrived, for its ledger row: "POST" "/ask" over
  /// HTTP, "CLI" "ask" from `candor ask`, "EVAL" "eval" from the gate.
  std::string method;
  std::string path;
  /// The name of the API key the request came with (never the key);
  /// empty without keys.
  std::string key_name;
  /// The conversation this question belongs to ("c_" and 32 hex digits);
  /// empty: none (the CLI, the eval gate).
  std::string conversation_id;
  /// True when the client named the conversation (a follow-up): its
  /// earlier turns are loaded into `history` before the graph runs, and a
  /// conversation that does not exist for this key is a 404. False: a new
  /// one.
  bool continues = false;
  /// The earlier turns the graph may read, oldest first: only those that
  /// were answered or refused (never a blocked one), at most
  /// conversations.historyTurns of them.
  std::vector<turn> history;
  /// SQL written by the caller (MCP `query_sales`), untrusted like a
  /// model's: when set, the graph starts at sql_validate and ends after
  /// sql_execute (no model writes, corrects or words anything).
  std::string sql;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ask_request& x) {
  return f(x.request_id, x.question, x.force_route, x.chaos, x.warnings,
           x.received_us, x.method, x.path, x.key_name, x.conversation_id,
           x.continues, x.history, x.sql);
}

// -- parts of the answer ------------------------------------------------------

struct citation {
  std::string chunk_id;
  std::string doc_title;
  std::string heading;
  double score = 0;
  std::string snippet;
  bool sanitized = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, citation& x) {
  return f(x.chunk_id, x.doc_title, x.heading, x.score, x.snippet, x.sanitized);
}

/// One passage the retrieve node found, as the documents branch carries it
/// from retrieval to the model prompt and the citation check.
struct passage {
  std::string chunk_id;
  std::string doc_title;
  std::string heading;
  double score = 0;
  bool sanitized = false; ///< the ingestion sanitizer redacted part of it
  std::string text;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, passage& x) {
  return f(x.chunk_id, x.doc_title, x.heading, x.score, x.sanitized, x.text);
}

/// One SQL result cell. `kind` follows SQLite's storage classes.
struct cell {
  enum kind_t : uint8_t { null, integer, real, text, blob };
  uint8_t kind = null;
  int64_t i = 0;
  double r = 0;
  std::string s; ///< text, or the summary of a blob
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cell& x) {
  return f(x.kind, x.i, x.r, x.s);
}

/// The `sql` block of a response.
struct sql_block {
  std::string query;
  std::string original_query;
  int32_t corrections = 0;
  bool limit_applied = false;
  std::vector<std::string> columns;
  std::vector<std::vector<cell>> rows;
  int64_t row_count = 0;
  bool truncated = false;
  std::string last_error;
  /// How the local provider's planner read the question (empty when a
  /// model wrote the query), e.g. "units sold by quarter, country BE, 2024".
  std::string plan;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sql_block& x) {
  return f(x.query, x.original_query, x.corrections, x.limit_applied, x.columns,
           x.rows, x.row_count, x.truncated, x.last_error, x.plan);
}

struct guardrail_info {
  std::string verdict = "pass"; ///< "pass" or "block"
  layer_kind layer = layer_kind::none;
  std::vector<std::string> reasons;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, guardrail_info& x) {
  return f(x.verdict, x.layer, x.reasons);
}

/// One executed graph step, as recorded by the supervisor.
struct trace_entry {
  node step = node::done;
  std::string outcome;
  int64_t micros = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trace_entry& x) {
  return f(x.step, x.outcome, x.micros);
}

/// What one logical model call cost; the llm actor reports it.
struct llm_usage {
  int32_t calls = 0;
  int32_t attempts = 0;
  int32_t retries = 0;
  /// A fallback answered: the fallback model, or the local provider.
  bool fallback_used = false;
  /// Every model failed and the local provider answered in their place.
  bool local_fallback = false;
  int64_t tokens_in = 0;
  int64_t tokens_out = 0;
  double cost_usd = 0;
  std::vector<std::string> models;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, llm_usage& x) {
  return f(x.calls, x.attempts, x.retries, x.fallback_used, x.local_fallback,
           x.tokens_in, x.tokens_out, x.cost_usd, x.models);
}

/// Adds `other` into `total`, keeping the model list unique.
/// `usd` rounded to a trillionth of a dollar: sums of prices per token
/// otherwise print as 0.0026386499999999985.
double round_usd(double usd) noexcept;

void accumulate(llm_usage& total, const llm_usage& other);

/// Static facts about the running service, copied into `meta`.
struct service_info {
  std::string provider;            ///< "local", "fake" or "openai"
  std::vector<std::string> models; ///< primary first
  std::string embedder;            ///< fingerprint, empty until indexed
  std::string guardrail_mode;      ///< "rules", "rules+model", "off"
  bool cost_is_fictional = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, service_info& x) {
  return f(x.provider, x.models, x.embedder, x.guardrail_mode,
           x.cost_is_fictional);
}

// -- the state that flows through the graph -----------------------------------

/// Everything a request accumulates on its way through the graph. Each node
/// receives the state, does one step and returns it.
struct ask_state {
  ask_request request;
  route_kind route = route_kind::none;
  std::string route_reason;
  /// A follow-up as the router resolved it against the conversation (the
  /// question the rest of the graph reads); empty: the question stood
  /// alone.
  std::string standalone;
  bool overridden = false;
  status_kind status = status_kind::pending;
  layer_kind blocked_by = layer_kind::none;
  std::string answer;
  std::vector<citation> citations;
  bool has_sql = false;
  sql_block sql;
  std::vector<std::string> follow_ups;
  guardrail_info guardrail;
  std::vector<std::string> warnings;
  llm_usage usage;
  /// Model calls still allowed for this request (set by the supervisor).
  int32_t llm_budget = 0;
  std::vector<trace_entry> trace;
  /// Text that must never reach the client (redacted spans of flagged
  /// passages); the output guard checks for it.
  std::vector<std::string> redacted_spans;
  /// A correctable error waiting for sql_correct (data branch).
  std::string pending_error;
  /// Passages retrieved for a documents question (retrieve node).
  std::vector<passage> passages;
  /// Chunk ids the model cited (rag_answer), checked by check_citations.
  std::vector<std::string> cited_ids;
  /// The model said it was confident (rag_answer).
  bool confident = false;
  /// The model declined to answer (rag_answer).
  bool model_refused = false;
  service_info service;
  int64_t latency_ms = 0;
  /// Set by finalize after the response schema check passed; the HTTP layer
  /// checks states without it itself.
  bool validated = false;

  bool finished() const noexcept {
    return status != status_kind::pending;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ask_state& x) {
  return f(x.request, x.route, x.route_reason, x.standalone, x.overridden,
           x.status,
           x.blocked_by, x.answer, x.citations, x.has_sql, x.sql, x.follow_ups,
           x.guardrail, x.warnings, x.usage, x.llm_budget, x.trace,
           x.redacted_spans, x.pending_error, x.passages, x.cited_ids,
           x.confident, x.model_refused, x.service, x.latency_ms, x.validated);
}

// -- an owning box for the state ----------------------------------------------

/// Owns one `T` on the heap with value semantics: a copy is deep and
/// independent, a move is one pointer move however large `T` is. The
/// request state travels in one (`ask_box`) because it is moved about 20
/// times per request (CAF messages and results, response promises, the
/// HTTP callbacks), and moving `ask_state` itself costs some 600
/// instructions each time.
///
/// As with C++26's `std::indirect`, a default-constructed box holds a
/// value-initialized `T`, and a box that was moved from is empty
/// ("valueless"): it may then only be assigned to, copied (the copy is
/// valueless too), inspected (see below) or destroyed; dereferencing it is
/// undefined. Every holder in candor either moves the box on and forgets
/// it, or assigns a new one before using it again.
template <class T>
class indirect {
public:
  indirect() : ptr_(std::make_unique<T>()) {}
  explicit indirect(T value) : ptr_(std::make_unique<T>(std::move(value))) {}
  indirect(const indirect& other)
      : ptr_(other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr) {}
  indirect(indirect&&) noexcept = default;

  indirect& operator=(const indirect& other) {
    // Copy first: self-assignment and a throwing copy leave *this intact.
    indirect tmp{other};
    ptr_ = std::move(tmp.ptr_);
    return *this;
  }
  indirect& operator=(indirect&&) noexcept = default;

  T& operator*() noexcept {
    return *ptr_;
  }
  const T& operator*() const noexcept {
    return *ptr_;
  }
  T* operator->() noexcept {
    return ptr_.get();
  }
  const T* operator->() const noexcept {
    return ptr_.get();
  }

  bool valueless_after_move() const noexcept {
    return ptr_ == nullptr;
  }

private:
  std::unique_ptr<T> ptr_;
};

/// Inspects the boxed value as if it were not boxed: `to_string` and the
/// serialized bytes are those of the `T` itself. A valueless box gets a
/// fresh `T` first, so that loading into it works and printing it is
/// defined. `T` needs an `inspect` overload of its own.
template <class Inspector, class T>
typename Inspector::result_type inspect(Inspector& f, indirect<T>& x) {
  if (x.valueless_after_move())
    x = indirect<T>{};
  return inspect(f, *x);
}

/// The request state as it travels between the actors and to the HTTP
/// layer.
using ask_box = indirect<ask_state>;

/// The value out of its box, for callers off the hot path (CLI, eval,
/// tests) that would rather hold it directly.
template <class T>
outcome<T> unbox(outcome<indirect<T>> r) {
  if (!r)
    return r.err();
  return std::move(**r);
}

/// Adds a warning once.
void add_warning(ask_state& st, std::string warning);

/// Ends the request as refused/blocked/error with an answer text.
void finish(ask_state& st, status_kind status, std::string answer);

/// Ends the request as blocked by `layer` for `reasons`; drops the
/// follow-up questions the refused model reply suggested.
void block(ask_state& st, layer_kind layer, std::vector<std::string> reasons,
           std::string answer);

} // namespace candor::domain
