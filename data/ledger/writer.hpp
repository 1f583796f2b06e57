#pragma once

// Declares the ledger writer, which owns the ledger connection and commits
// batches off the actor threads, in order; its settings; and the inbox
// through which request rows reach the ledger actor.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "data/telemetry.hpp"
#include "data/ledger/store.hpp"
#include "domain/records.hpp"

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
  /// The ledger's database (a SQLite file or PostgreSQL).
  data::ledger_location where;
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
  /// conversations.maxTurns and the retention (microseconds).
  int64_t conversation_max_turns = 20;
  int64_t conversation_retention_us = int64_t{168} * 3600 * 1000000;
};

/// Owns the ledger connection and commits batches off the actor threads, in
/// order. A failed commit is retried (the rows stay queued) so nothing is
/// lost to a transient error such as a locked database. A batch that still
/// fails after every try is written row by row, so that a row the database
/// refuses for good costs only itself: it is logged (`ledger_row_dropped`,
/// with its kind and request id) and left out of the written count.
///
/// Writing the ledger is bookkeeping, not serving: the writer thread runs
/// `writer_nice` levels above the server's nice value, so on a busy machine
/// it commits in the gaps the request path leaves instead of taking a core
/// from it for a whole batch. An unprivileged thread cannot raise its
/// priority back, so a second thread at the server's own priority, the
/// catch-up thread, takes every batch while `catch_up_rows` or more records
/// wait, and when stopping (shutdown drains at full priority); the writer
/// takes batches only below that backlog. One batch is committed at a time,
/// in the order submitted, whichever thread commits it. With `writer_nice`
/// 0, or when the priority cannot be lowered, the writer works alone at the
/// server's priority.
class ledger_writer {
public:
  using done_fn = std::function<void(int64_t written)>;

  ledger_writer(data::ledger_store store, std::shared_ptr<telemetry> metrics,
                const ledger_settings& settings);

  /// Drains the queue and joins the threads.
  ~ledger_writer();

  ledger_writer(const ledger_writer&) = delete;
  ledger_writer& operator=(const ledger_writer&) = delete;

  /// Queues a batch (may be empty) and calls `done` after it is committed,
  /// with the number of records written so far.
  void submit(data::ledger_batch batch, done_fn done);

  /// Batches committed so far by the writer thread (`catch_up` false) or
  /// by the catch-up thread.
  int64_t commits(bool catch_up) const;

  /// The catch-up thread runs and the writer's priority is lowered (set by
  /// the writer thread when it starts).
  bool catching_up() const;

private:
  struct job {
    data::ledger_batch batch;
    done_fn done;
  };

  /// Whether the calling thread may take the next batch now (under mtx_).
  bool may_take(bool catch_up) const;
  void loop(bool catch_up);
  void commit(const data::ledger_batch& batch);
  int64_t commit_row_by_row(const data::ledger_batch& batch);

  data::ledger_store store_;
  std::shared_ptr<telemetry> metrics_;
  int attempts_;
  std::chrono::milliseconds retry_delay_;
  size_t catch_up_rows_;
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<job> jobs_;
  bool stopping_ = false;
  /// The catch-up thread runs and the writer's priority was lowered.
  bool catch_up_ = false;
  /// A thread is committing a batch it took (jobs_ holds only later ones).
  bool committing_ = false;
  /// Records in submitted batches not committed yet.
  size_t waiting_rows_ = 0;
  int64_t commits_[2] = {0, 0};
  /// Touched only by the thread committing (one at a time, under
  /// committing_).
  int64_t written_ = 0;
  std::thread writer_;
  std::thread catch_up_thread_;
};

} // namespace candor::actors
