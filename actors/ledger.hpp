#pragma once

// Declares the ledger actor, the ledger inbox that carries request rows to
// it, and the read-only ledger reader.

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

namespace candor::actors {

/// Request rows on their way from the HTTP threads to the ledger actor.
/// Sending each row as a message would schedule the ledger (and often wake
/// a scheduler thread) once per request; rows put here are collected by the
/// ledger on its flush timer instead, and the ledger is told only about the
/// first row since it last collected (so that it arms the timer) and about
/// every full batch. The ledger stays the only writer: it alone takes rows
/// out of the inbox and writes them.
class ledger_inbox {
public:
  /// Queues a row. True when the ledger must be told (the inbox was empty
  /// since the ledger last collected it, or it holds `max_batch` rows more).
  bool push(domain::request_record rec, size_t max_batch);

  /// Moves every queued row out.
  std::vector<domain::request_record> take();

  size_t size() const;

private:
  mutable std::mutex mtx_;
  std::vector<domain::request_record> rows_;
  /// The ledger was told about the rows queued now.
  bool told_ = false;
};

using ledger_inbox_ptr = std::shared_ptr<ledger_inbox>;

struct ledger_settings {
  std::string path;
  std::chrono::milliseconds flush_interval{50};
  size_t max_batch = 512;
  /// Request rows queued outside the mailbox (null: rows only arrive as
  /// messages). A restarted ledger takes over the same inbox.
  ledger_inbox_ptr inbox;
  /// Tries of a batch's transaction before the writer gives up on it as a
  /// whole, and the pause between them: a locked or busy database clears
  /// within that time (about 10 s by default).
  int write_attempts = 51;
  std::chrono::milliseconds retry_delay{200};
  /// How many nice levels below the server the writer thread runs (0: at
  /// the server's own priority, and no catch-up thread), and the backlog
  /// in records from which the catch-up thread, at the server's priority,
  /// takes the batches instead (see ledger_writer).
  int writer_nice = 10;
  size_t catch_up_rows = 16384;
};

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
};

/// The LEDGER READER: a read-only connection for /stats and /runs. Runs
/// detached, since SQLite blocks.
ledger_reader_actor::behavior_type
ledger_reader(ledger_reader_actor::stateful_pointer<ledger_reader_state> self,
              std::string path, bool cost_is_fictional);

} // namespace candor::actors
