#pragma once

// Declares domain::service, the interface the HTTP layer needs from the
// rest of candor.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/error.hpp"
#include "domain/records.hpp"
#include "domain/request_control.hpp"
#include "domain/types.hpp"

namespace candor::domain {

/// What the HTTP layer needs from the rest of candor. net/ depends only on
/// this interface (so it is testable without actors); actors/app.cpp
/// implements it on top of the actor system.
///
/// Every method returns at once: none may block the calling (Asio) thread.
/// Callbacks run on an arbitrary thread; the caller must post back to its own
/// executor before touching a socket.
class service {
public:
  /// The state comes boxed: handing it on (e.g. posting it to a session's
  /// executor) moves one pointer.
  using ask_callback = std::function<void(outcome<ask_box>)>;
  using text_callback = std::function<void(outcome<std::string>)>;
  using passages_callback = std::function<void(outcome<std::vector<passage>>)>;

  virtual ~service() = default;

  /// Runs one question through the graph (or, with `req.sql` set, the
  /// caller's SQL through the data branch's layers and sandbox). The service writes the
  /// question's request row (metrics, log line, ledger) itself, whatever the
  /// outcome, before the callback runs: the caller only renders.
  virtual void ask(ask_request req, ask_callback cb) = 0;

  /// `ask` for a caller that may stop the question or follow its steps
  /// through `control` (see domain/request_control.hpp): a raised
  /// `control->stop` ends it as `cancelled` (the callback still runs
  /// once), and `control->progress` is told of each step. A service that
  /// cannot do either answers as `ask` does.
  virtual void ask_controlled(ask_request req, ask_callback cb,
                              request_control_ptr control) {
    (void)control;
    ask(std::move(req), std::move(cb));
  }

  /// `/stats` JSON for a validated window ("15m", "1h", "24h", "7d").
  virtual void stats(std::string window, text_callback cb) = 0;

  /// `/runs/{id}` JSON, or `not_found`.
  virtual void run(std::string request_id, text_callback cb) = 0;

  /// `/conversations/{id}` JSON for the key named `key_name` (empty
  /// without keys), or `not_found` (none, expired, or another key's).
  virtual void conversation(std::string id, std::string key_name,
                            text_callback cb) {
    (void)id;
    (void)key_name;
    cb(make_error(ec::not_found, "this service keeps no conversations"));
  }

  /// `/health` JSON.
  virtual void health(text_callback cb) = 0;

  /// `/demo/questions` JSON.
  virtual void demo_questions(text_callback cb) = 0;

  /// Prometheus text exposition (thread-safe, non-blocking).
  virtual std::string metrics() = 0;

  /// Records a request that ended in an HTTP error without reaching `ask`
  /// (a bad body, an unknown route, no free slot, ...): ledger row,
  /// metrics, JSON log line. Called once per such request.
  virtual void record_error(request_record rec) = 0;

  /// In-flight gauge bookkeeping.
  virtual void in_flight(int64_t value) = 0;

  /// A connection the listener refused or closed before it sent a whole
  /// request: `reason` is per_address_limit, capacity, shed,
  /// header_timeout or body_timeout (/metrics). Thread-safe.
  virtual void connection_dropped(std::string_view reason) {
    (void)reason;
  }

  /// Reloads the retrieval index from its file and swaps it in (SIGHUP,
  /// `POST /admin/reindex`); the callback gets JSON {fingerprint,
  /// documents, chunks, flagged}. A service without an index answers
  /// `not_found`.
  virtual void reindex(text_callback cb) {
    cb(make_error(ec::not_found, "this service has no retrieval index"));
  }

  /// Retrieval only (MCP `search_documents`): the `k` best passages for
  /// `query` in the serving snapshot, best first, as the retrieve node
  /// would find them (sanitized text; no threshold, no model).
  virtual void search(std::string query, int32_t k, passages_callback cb) {
    (void)query;
    (void)k;
    cb(make_error(ec::not_found, "this service has no retrieval index"));
  }

  /// The sales catalog as JSON for callers (MCP `describe_catalog`):
  /// tables, readable columns with descriptions and value domains,
  /// metrics. Denied tables and columns are not named.
  virtual void catalog(text_callback cb) {
    cb(make_error(ec::not_found, "this service has no sales catalog"));
  }

  /// The documents of the serving snapshot as JSON: slug, title, chunks.
  virtual void documents(text_callback cb) {
    cb(make_error(ec::not_found, "this service has no retrieval index"));
  }
};

} // namespace candor::domain
