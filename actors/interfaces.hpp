#pragma once

// All typed actor interfaces, application atoms and the type-ID block of
// candor (VAST's actors.hpp layout). Includes only light CAF headers.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include "domain/error.hpp"
#include "domain/records.hpp"
#include "domain/request_control.hpp"
#include "domain/sql/exec.hpp"
#include "domain/types.hpp"

namespace candor::data {
class retrieval_snapshot;
} // namespace candor::data

namespace candor::actors {

// -- messages that only actors exchange ---------------------------------------

/// One logical model call, as a node asks the LLM actor for it.
struct llm_request {
  std::string request_id;
  /// The request's arrival (with `request_id`, what a cancel names: a
  /// client may reuse its request ids).
  int64_t received_us = 0;
  std::string prompt; ///< prompt name, e.g. "router"
  std::string prompt_version;
  std::string key;    ///< fixture key: the question as asked
  std::string system; ///< rendered system text (real providers)
  std::string user;   ///< rendered user text (real providers)
  domain::chaos_mode chaos = domain::chaos_mode::none;
  int32_t budget = 0; ///< model calls still allowed
  int32_t max_tokens = 512;
  int32_t ordinal = 0; ///< 0 = first ask, 1 = parse re-ask
  /// JSON schema (as text) of the expected reply, for real providers'
  /// structured output; empty: a plain-text reply (e.g. the guard).
  std::string schema;
  /// Model to use instead of llm.model (e.g. CANDOR_GUARD_MODEL); the
  /// fallback model still follows it. Empty: the configured primary.
  std::string model;
  /// The retrieved passages (rag_answer), which the local provider reads
  /// instead of the rendered prompt.
  std::vector<domain::passage> passages;
  /// The query's result (sql_answer), which the local provider words
  /// instead of the rendered prompt.
  domain::sql_block sql;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, llm_request& x) {
  return f(x.request_id, x.received_us, x.prompt, x.prompt_version, x.key,
           x.system, x.user, x.chaos, x.budget, x.max_tokens, x.ordinal, x.schema, x.model,
           x.passages, x.sql);
}

/// The model's answer to one logical call.
struct llm_reply {
  std::string text;
  std::string model;
  std::string finish_reason; ///< "stop" or "length"
  domain::llm_usage usage;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, llm_reply& x) {
  return f(x.text, x.model, x.finish_reason, x.usage);
}

// The sandbox's messages are the domain's contract with the executor.
using domain::sql_exec_request;
using domain::sql_exec_result;

/// An immutable retrieval snapshot, shared by every reader (local only).
using snapshot_ptr = std::shared_ptr<const data::retrieval_snapshot>;

/// What the index actor is serving: the embedder fingerprint of the
/// configured mode and the size of the knowledge base.
struct index_info {
  std::string fingerprint;
  int64_t documents = 0;
  int64_t chunks = 0;
  int64_t flagged = 0; ///< chunks the ingestion sanitizer redacted
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, index_info& x) {
  return f(x.fingerprint, x.documents, x.chunks, x.flagged);
}

/// The result of loading the index file off the index actor's thread:
/// a new snapshot, or the error that kept the old one serving.
struct index_load {
  snapshot_ptr snapshot;
  domain::error err;
};

/// Callback through which a request's outcome leaves the actor system. It
/// holds the HTTP session alive and only posts to the session's executor.
using ask_responder = std::function<void(domain::outcome<domain::ask_box>)>;

} // namespace candor::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::ask_responder)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::domain::request_control_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::snapshot_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::index_load)

CAF_ERROR_CODE_ENUM(candor::domain::ec, "candor")

// -- type IDs and atoms -------------------------------------------------------

CAF_BEGIN_TYPE_ID_BLOCK(candor, caf::first_custom_type_id)

CAF_ADD_TYPE_ID(candor, (candor::domain::node))
CAF_ADD_TYPE_ID(candor, (candor::domain::ask_request))
CAF_ADD_TYPE_ID(candor, (candor::domain::ask_box))
CAF_ADD_TYPE_ID(candor, (candor::domain::request_record))
CAF_ADD_TYPE_ID(candor, (candor::domain::llm_call_record))
CAF_ADD_TYPE_ID(candor, (candor::domain::trace_record))
CAF_ADD_TYPE_ID(candor, (candor::domain::sql_audit_record))
CAF_ADD_TYPE_ID(candor, (candor::actors::llm_request))
CAF_ADD_TYPE_ID(candor, (candor::actors::llm_reply))
CAF_ADD_TYPE_ID(candor, (candor::domain::sql_exec_request))
CAF_ADD_TYPE_ID(candor, (candor::domain::sql_exec_result))
CAF_ADD_TYPE_ID(candor, (candor::actors::index_info))

CAF_END_TYPE_ID_BLOCK(candor)

CAF_ADD_ATOM(candor, candor::atom, step, "step")
CAF_ADD_ATOM(candor, candor::atom, ask, "ask")
CAF_ADD_ATOM(candor, candor::atom, call, "call")
CAF_ADD_ATOM(candor, candor::atom, put, "put")
CAF_ADD_ATOM(candor, candor::atom, flush, "flush")
CAF_ADD_ATOM(candor, candor::atom, tick, "tick")
CAF_ADD_ATOM(candor, candor::atom, stats, "stats")
CAF_ADD_ATOM(candor, candor::atom, run, "run")
CAF_ADD_ATOM(candor, candor::atom, count, "count")
CAF_ADD_ATOM(candor, candor::atom, get, "get")
CAF_ADD_ATOM(candor, candor::atom, llm, "llm")
CAF_ADD_ATOM(candor, candor::atom, ledger, "ledger")
CAF_ADD_ATOM(candor, candor::atom, restarts, "restarts")
CAF_ADD_ATOM(candor, candor::atom, health, "health")
CAF_ADD_ATOM(candor, candor::atom, internal, "internal")
CAF_ADD_ATOM(candor, candor::atom, exec, "exec")
CAF_ADD_ATOM(candor, candor::atom, cancel, "cancel")
CAF_ADD_ATOM(candor, candor::atom, reload, "reload")
CAF_ADD_ATOM(candor, candor::atom, index, "index")

namespace candor::actors {

// -- interfaces ---------------------------------------------------------------

/// A GRAPH NODE: does one step on the request state and returns it. Every
/// node (guard_input, router, out_of_scope, finalize, ...) implements it.
/// The state travels boxed, so that the many moves of a step (message,
/// result, promise, reply) are pointer moves.
using node_actor = caf::typed_actor<
  // Runs the node's step on a request state.
  caf::replies_to<atom::step, domain::ask_box>::with<domain::ask_box>>;

/// The LEDGER actor: the only writer of the ledger database.
using ledger_actor = caf::typed_actor<
  // Queues a request row.
  caf::reacts_to<atom::put, domain::request_record>,
  // Queues a model-call row.
  caf::reacts_to<atom::put, domain::llm_call_record>,
  // Queues the trace of one request.
  caf::reacts_to<atom::put, domain::trace_record>,
  // Queues a SQL audit row.
  caf::reacts_to<atom::put, domain::sql_audit_record>,
  // Writes everything queued; replies with the rows written so far.
  caf::replies_to<atom::flush>::with<int64_t>,
  // Timer: flush what is queued.
  caf::reacts_to<atom::internal, atom::tick>,
  // The inbox of request rows (ledger_inbox) has rows to collect.
  caf::reacts_to<atom::internal, atom::put>,
  // The writer committed everything up to flush `ticket`; `written` rows
  // so far.
  caf::reacts_to<atom::internal, atom::flush, uint64_t, int64_t>>;

/// The LLM actor: the only place that talks to a model provider.
using llm_actor = caf::typed_actor<
  // Performs one logical call (retries and fallback included).
  caf::replies_to<atom::call, llm_request>::with<llm_reply>,
  // Replaces the ledger handle after the guardian restarted the ledger.
  caf::reacts_to<atom::put, ledger_actor>,
  // The request (id, arrival) was cancelled: its calls end as `cancelled`
  // and an HTTP attempt in flight is aborted (its connection closed).
  caf::reacts_to<atom::cancel, std::string, int64_t>,
  // Timer: the backoff of pending call `id` is over; try again.
  caf::reacts_to<atom::internal, atom::call, uint64_t>,
  // The HTTP transport finished an attempt of call `id`: failure kind
  // (domain::transport_failure), HTTP status, body or failure detail,
  // Retry-After.
  caf::reacts_to<atom::internal, atom::exec, uint64_t, int32_t, int32_t,
                 std::string, std::string>>;

/// The LEDGER READER: read-only queries for /stats and /runs.
using ledger_reader_actor = caf::typed_actor<
  // /stats JSON for a window label and its length in seconds.
  caf::replies_to<atom::stats, std::string, int64_t>::with<std::string>,
  // /runs/{id} JSON.
  caf::replies_to<atom::run, std::string>::with<std::string>,
  // Number of request rows (tests, health).
  caf::replies_to<atom::count>::with<int64_t>>;

/// The SQL SANDBOX: the only thing that runs generated SQL. It owns a pool
/// of executor processes and enforces the deadline with SIGKILL. (The
/// implementation may add internal messages to this interface.)
using sql_sandbox_actor = caf::typed_actor<
  // Runs one statement in an executor process.
  caf::replies_to<atom::exec, sql_exec_request>::with<sql_exec_result>,
  // Pool readiness as JSON: {"size", "ready", "busy", "kills", "respawns"}.
  caf::replies_to<atom::health>::with<std::string>,
  // The request (id, arrival) was cancelled: its waiting statements are
  // dropped and the executor running one is killed (then replaced).
  caf::reacts_to<atom::cancel, std::string, int64_t>,
  // From executor worker `slot`: `event` (actors::worker_event) about its
  // process `pid` (0 when none).
  caf::reacts_to<atom::internal, atom::health, int32_t, int32_t, int32_t>,
  // Timer: give up on workers whose statement is past its deadline plus a
  // grace (armed while statements run).
  caf::reacts_to<atom::internal, atom::tick>,
  // From executor worker `slot`: the result of statement `job`.
  caf::reacts_to<atom::internal, atom::exec, int32_t, uint64_t,
                 sql_exec_result>,
  // From executor worker `slot`: why statement `job` has no result.
  caf::reacts_to<atom::internal, atom::exec, int32_t, uint64_t, caf::error>>;

/// The INDEX actor: holds the immutable retrieval snapshot and swaps in a
/// new one on re-index. Readers search the snapshot on their own threads.
using index_actor = caf::typed_actor<
  // The snapshot serving now.
  caf::replies_to<atom::get>::with<snapshot_ptr>,
  // What is serving (fingerprint, documents, chunks, flagged).
  caf::replies_to<atom::health>::with<index_info>,
  // Loads the index file into a new snapshot (off this actor's thread),
  // checks its embedder fingerprint and swaps it in; an error keeps the
  // old snapshot serving.
  caf::replies_to<atom::reload>::with<index_info>,
  // The loader finished.
  caf::reacts_to<atom::internal, atom::reload, index_load>>;

/// The GUARDIAN: owns the service actors, restarts one that dies and spawns
/// one supervisor per request.
using guardian_actor = caf::typed_actor<
  // Starts a request; the outcome goes to the responder. The control (may
  // be null) cancels it and receives its progress events.
  caf::reacts_to<atom::ask, domain::ask_request, ask_responder,
                 domain::request_control_ptr>,
  // The current LLM actor (tests kill it to check restarts).
  caf::replies_to<atom::get, atom::llm>::with<llm_actor>,
  // The current ledger actor.
  caf::replies_to<atom::get, atom::ledger>::with<ledger_actor>,
  // Forwards a request row to the current ledger.
  caf::reacts_to<atom::put, domain::request_record>,
  // How many service actors were restarted so far.
  caf::replies_to<atom::restarts>::with<int64_t>,
  // Readiness summary as JSON.
  caf::replies_to<atom::health>::with<std::string>,
  // /stats JSON (forwarded to the ledger reader).
  caf::replies_to<atom::stats, std::string, int64_t>::with<std::string>,
  // /runs/{id} JSON (forwarded to the ledger reader).
  caf::replies_to<atom::run, std::string>::with<std::string>,
  // Request rows in the ledger (forwarded to the ledger reader).
  caf::replies_to<atom::count>::with<int64_t>,
  // Flushes the ledger; replies with the rows written so far.
  caf::replies_to<atom::flush>::with<int64_t>,
  // Timer: tell supervisors whose deadline passed.
  caf::reacts_to<atom::internal, atom::tick>,
  // Re-index: forwarded to the index actor.
  caf::replies_to<atom::reload>::with<index_info>,
  // The current index actor (tests kill it to check restarts).
  caf::replies_to<atom::get, atom::index>::with<index_actor>>;

/// Registers candor's message types and error category with CAF.
void add_message_types(caf::actor_system_config& cfg);

/// Converts an error that crossed the actor system to a domain error.
domain::error to_domain(const caf::error& err);

/// Makes a CAF error from a domain error code and message.
caf::error to_caf(domain::ec code, std::string message);

} // namespace candor::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::node_actor)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::llm_actor)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::ledger_actor)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::sql_sandbox_actor)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(candor::actors::index_actor)
