#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/typed_event_based_actor.hpp>

#include "actors/interfaces.hpp"
#include "actors/telemetry.hpp"
#include "data/ledger_store.hpp"

namespace candor::actors {

struct ledger_settings {
  std::string path;
  std::chrono::milliseconds flush_interval{50};
  size_t max_batch = 512;
};

struct ledger_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  ledger_state() = default;

  static inline const char* name = "ledger";

  std::unique_ptr<data::ledger_store> store;
  data::ledger_batch batch;
  ledger_settings settings;
  std::shared_ptr<telemetry> metrics;
  bool tick_pending = false;
  int64_t written = 0;

  /// Writes the queued rows in one transaction. On failure the rows stay
  /// queued and the next tick retries.
  void flush();

  /// Nothing queued is lost when the actor stops: the state flushes here.
  ~ledger_state();
};

/// The LEDGER: the only writer of the ledger database. It queues rows and
/// writes them in batches (one transaction each) on a short timer or when
/// the batch is full. Runs detached, since SQLite blocks.
ledger_actor::behavior_type
ledger(ledger_actor::stateful_pointer<ledger_state> self,
       ledger_settings settings, std::shared_ptr<telemetry> metrics);

struct ledger_reader_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  ledger_reader_state() = default;

  static inline const char* name = "ledger_reader";
  std::unique_ptr<data::ledger_store> store;
  bool cost_is_fictional = true;
};

/// The LEDGER READER: a read-only connection for /stats and /runs.
ledger_reader_actor::behavior_type
ledger_reader(ledger_reader_actor::stateful_pointer<ledger_reader_state> self,
              std::string path, bool cost_is_fictional);

} // namespace candor::actors
