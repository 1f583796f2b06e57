#pragma once

// Declares the ledger actor and the read-only ledger reader (the inbox that
// carries request rows to the ledger is in data/ledger/writer.hpp).

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "data/telemetry.hpp"
#include "data/ledger/store.hpp"
#include "data/ledger/writer.hpp"

namespace candor::actors {

class ledger_writer;

struct ledger_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  ledger_state();

  static inline const char* name = "ledger";

  /// Rows queued since the last hand-over to the writer.
  data::ledger_batch batch;
  /// The thread that owns the database connection and commits batches.
  std::unique_ptr<ledger_writer> writer;
  ledger_settings settings;
  bool tick_pending = false;
  /// Flush requests waiting for the writer, by ticket.
  std::map<uint64_t, caf::typed_response_promise<int64_t>> waiting;
  uint64_t next_ticket = 1;

  /// Nothing queued is lost when the actor stops: the remaining rows are
  /// handed over and the writer drains its queue before it is joined.
  ~ledger_state();
};

/// The LEDGER: the only writer of the ledger database. It queues rows in
/// memory and hands them in batches (on a short timer, or when a batch is
/// full) to its own writer thread, which commits each batch in one
/// transaction. The actor itself never blocks, so it runs on the scheduler
/// and recording a row costs no thread wake-up.
ledger_actor::behavior_type
ledger(ledger_actor::stateful_pointer<ledger_state> self,
       ledger_settings settings, std::shared_ptr<telemetry> metrics);

struct ledger_reader_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  ledger_reader_state() = default;

  static inline const char* name = "ledger_reader";
  std::unique_ptr<data::ledger_store> store;
  bool cost_is_fictional = true;
  /// conversations.retentionHours, in microseconds.
  int64_t conversation_retention_us = 0;
};

/// The LEDGER READER: a read-only connection for /stats and /runs. Runs
/// detached, since both backends' calls block.
ledger_reader_actor::behavior_type
ledger_reader(ledger_reader_actor::stateful_pointer<ledger_reader_state> self,
              data::ledger_location where, bool cost_is_fictional,
              int64_t conversation_retention_us);

} // namespace candor::actors
