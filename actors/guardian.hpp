#pragma once

// Declares the guardian actor and the setup it needs to (re)spawn the
// service actors.

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <caf/actor_addr.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/index.hpp"
#include "actors/interfaces.hpp"
#include "data/local/provider.hpp"
#include "actors/ledger.hpp"
#include "actors/llm.hpp"
#include "actors/sql_sandbox.hpp"
#include "actors/supervisor.hpp"
#include "data/telemetry.hpp"
#include "data/fixtures.hpp"
#include "data/sales/setup.hpp"
#include "data/prompts.hpp"
#include "domain/config.hpp"

namespace candor::domain {
class output_guard;
} // namespace candor::domain

namespace candor::actors {

/// Everything the guardian needs to (re)spawn the service actors.
struct services_setup {
  domain::config cfg;
  domain::service_info info;
  std::shared_ptr<const data::fixture_store> fixtures;
  std::map<std::string, data::prompt> prompts;
  std::shared_ptr<const domain::output_guard> output_guard;
  std::shared_ptr<telemetry> metrics;
  /// Told about every (re)spawned ledger, so that request rows can go to it
  /// directly instead of through the guardian.
  std::function<void(const ledger_actor&)> on_ledger;
  /// Where request rows are queued for the ledger (null: they arrive as
  /// messages only).
  ledger_inbox_ptr ledger_inbox;
  /// Ends a request: its metrics, its log line and its ledger row. Every
  /// supervisor calls it once, from the actor that finished the request.
  std::function<void(domain::request_record)> record;
  /// The HTTP client of the openai provider (null for the scripted one).
  std::shared_ptr<domain::http_transport> transport;
  /// The data branch: sales database, catalog, schema text, row counts
  /// (see data/sales/setup.hpp). Empty `sales.path`: no data nodes.
  data::sales_setup sales;
  /// The index file, the configured embedders and mode.
  index_settings index;
  /// The snapshot serving now (the startup one until a re-index); the
  /// index actor publishes swaps here, a restarted one starts from it.
  snapshot_cell_ptr snapshots;
  /// The local provider (llm.provider "local", or "openai" with
  /// llm.localFallback); null otherwise.
  std::shared_ptr<const data::local_provider> local;
};

struct guardian_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  guardian_state() = default;

  static inline const char* name = "guardian";

  services_setup setup;
  llm_actor llm;
  ledger_actor ledger;
  ledger_reader_actor reader;
  sql_sandbox_actor sandbox;
  index_actor index;
  graph g;
  /// The published copy of `g` that supervisors share (see publish()).
  graph_ptr shared_graph;
  /// setup.info, shared by every supervisor.
  std::shared_ptr<const domain::service_info> info;
  /// Role of every monitored child ("llm", "ledger", "node:router", ...).
  std::map<caf::actor_addr, std::string> roles;
  /// Children replaced on purpose: their exit is not a failure.
  std::set<caf::actor_addr> retired;
  /// Recent restart times, to stop a crash loop.
  std::deque<std::chrono::steady_clock::time_point> recent_restarts;
  int64_t restarts = 0;
  bool stopping = false;
  /// Supervisors in start order with their deadlines (all deadlines have
  /// the same length, so this is sorted). One timer sweeps them.
  std::deque<
    std::pair<std::chrono::steady_clock::time_point, deadline_slot_ptr>>
    deadlines;
  bool sweep_armed = false;
  /// The SQL sandbox pool's state for /health (set by the sandbox).
  std::shared_ptr<sandbox_status> pool_status;
};

/// The GUARDIAN: spawns and monitors the service actors (llm, ledger, ledger
/// reader, one actor per graph node), restarts one that dies (and re-wires
/// the actors that depended on it), and spawns one supervisor per request.
guardian_actor::behavior_type
guardian(guardian_actor::stateful_pointer<guardian_state> self,
         services_setup setup);

} // namespace candor::actors
