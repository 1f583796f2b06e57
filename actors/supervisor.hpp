#pragma once

// Declares the supervisor actor, the graph it drives, the per-request
// limits and the deadline slot the guardian's sweep reaches it through.

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/interfaces.hpp"
#include "domain/routing.hpp"

namespace candor::actors {

/// What a supervisor drives: one actor per node (an invalid handle means the
/// node is not part of this build), the edge function and the ledger.
struct graph {
  std::array<node_actor, domain::node_count> nodes;
  std::function<domain::node(domain::node, const domain::ask_state&)> edge
    = domain::next_node;
  ledger_actor ledger;
  /// Reads a follow-up's conversation before the graph runs.
  ledger_reader_actor reader;
  /// Writes the request's row (metrics, log line, ledger): called once per
  /// request, when it ends (unset: nothing is recorded).
  std::function<void(domain::request_record)> record;
  /// Told when a request is cancelled, to stop its model calls and its
  /// query (invalid: nothing to tell).
  llm_actor llm;
  sql_sandbox_actor sandbox;

  node_actor& at(domain::node n) {
    return nodes[static_cast<size_t>(n)];
  }
  const node_actor& at(domain::node n) const {
    return nodes[static_cast<size_t>(n)];
  }
};

/// Supervisors share one immutable graph; the guardian publishes a new one
/// when it replaces an actor.
using graph_ptr = std::shared_ptr<const graph>;

/// The per-request caps.
struct limits {
  int32_t step_cap = 25;
  int32_t llm_budget = 8;
  std::chrono::milliseconds deadline{30000};
  /// Arm a timer for the deadline. The guardian turns this off and sends
  /// the deadline tick itself from one shared sweep (one timer for all
  /// requests instead of one per request).
  bool own_timer = true;
  /// conversations.historyTurns and conversations.maxTurnBytes.
  int32_t history_turns = 6;
  int32_t turn_bytes = 4096;
};

/// How the guardian's deadline sweep reaches a running supervisor without
/// keeping a finished one in memory: the supervisor puts its own handle here
/// when it starts and clears it when it ends, so the sweep holds only this
/// small slot (a weak handle would pin the whole actor's memory).
struct deadline_slot {
  std::mutex mtx;
  caf::actor target;
  /// The caller's control of a request (cancel, progress), handed to the
  /// supervisor when it starts (it takes it out of the slot).
  domain::request_control_ptr control;

  void set(caf::actor h) {
    std::lock_guard<std::mutex> guard{mtx};
    target = std::move(h);
  }

  caf::actor get() {
    std::lock_guard<std::mutex> guard{mtx};
    return target;
  }
};

using deadline_slot_ptr = std::shared_ptr<deadline_slot>;

struct supervisor_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  supervisor_state() = default;

  static inline const char* name = "supervisor";

  graph_ptr g;
  limits lim;
  /// The request state while no node holds it (it travels with each step
  /// and is valueless meanwhile; only a node's reply or a reset refills it).
  domain::ask_box st;
  /// Kept outside `st` so that a timeout or a failed node still has them.
  std::string request_id;
  int64_t received_us = 0;
  domain::ask_request request;
  /// What the response's meta reports (shared by every request).
  std::shared_ptr<const domain::service_info> info;
  std::vector<domain::trace_entry> trace;
  /// Route and usage as of the last node that answered, for the ledger row
  /// of a request that then fails (the state is with the failing node).
  domain::spent_so_far spent;
  ask_responder respond;
  deadline_slot_ptr slot;
  int32_t steps = 0;
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point deadline_at;
  /// The node being waited for and when it was asked.
  domain::node current = domain::node::done;
  std::chrono::steady_clock::time_point current_since;
  /// The caller's control (null: none): its progress callback is told of
  /// each step, and raising its stop cancels the request.
  domain::request_control_ptr control;
  /// The `route` progress event was sent.
  bool route_told = false;
};

/// The SUPERVISOR of one request: runs the graph one node at a time, records
/// a trace entry per step, enforces the step cap, the model-call budget and
/// the deadline, hands the outcome to `respond` and quits. Late replies are
/// dropped with it. The message `(internal, tick)` means "the deadline has
/// passed" (sent by its own timer or by the guardian's sweep);
/// `(internal, cancel)` that the caller raised the control's stop (its
/// client hung up): the model calls and the query of the request are
/// stopped and it ends as `cancelled` (HTTP 499 in its ledger row).
caf::behavior supervisor(caf::stateful_actor<supervisor_state>* self,
                         graph_ptr g, limits lim, domain::ask_request req,
                         std::shared_ptr<const domain::service_info> info,
                         ask_responder respond, deadline_slot_ptr slot);

} // namespace candor::actors
