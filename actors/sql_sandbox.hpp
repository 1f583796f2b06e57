#pragma once

// Declares the SQL sandbox actor, its executor workers, their settings and
// the health status it mirrors for /health.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "data/sql/executor.hpp"
#include "data/sql/runner.hpp"
#include "actors/interfaces.hpp"
#include "data/telemetry.hpp"
#include "domain/config.hpp"

namespace candor::actors {

// -- shared status ------------------------------------------------------------

/// An eventfd that, once signalled, stays readable (until cleared): wakes
/// an executor worker blocked on a reply when the sandbox stops, or when
/// the request of its statement is cancelled.
class wake_signal {
public:
  wake_signal();
  ~wake_signal();
  wake_signal(const wake_signal&) = delete;
  wake_signal& operator=(const wake_signal&) = delete;

  void signal() noexcept;

  /// Makes it unreadable again.
  void clear() noexcept;

  int fd() const noexcept {
    return fd_;
  }

private:
  int fd_ = -1;
};

/// The statements waiting for an executor, shared by the SQL sandbox (which
/// adds them) and its executor workers (which take them, each as soon as
/// it is free). Taking a statement from a shared queue instead of being
/// handed one by message keeps a busy worker from going to sleep on its
/// mailbox between statements, and the sandbox from waking it for each
/// one. Thread-safe.
class statement_queue {
public:
  using clock_type = std::chrono::steady_clock;

  struct job {
    uint64_t id = 0;
    domain::sql_exec_request req;
    /// Runs so far that ended with the executor process lost (a statement
    /// is read-only, so one such run is retried on another process).
    int32_t lost_runs = 0;
  };

  /// What the worker of a slot is doing.
  struct slot_view {
    bool busy = false;
    uint64_t job = 0;
    /// The request of the statement (what a cancel names).
    std::string request_id;
    int64_t received_us = 0;
    /// While busy: when the sandbox gives up on the worker.
    clock_type::time_point give_up_at;
  };

  explicit statement_queue(size_t slots, std::chrono::milliseconds grace)
      : slots_(slots), grace_(grace) {
    // nop
  }

  /// Adds a statement and wakes a waiting worker.
  void push(job j) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      jobs_.push_back(std::move(j));
    }
    cv_.notify_one();
  }

  /// Puts back a statement whose executor was lost, ahead of the others
  /// (it has waited longest), and wakes a waiting worker.
  void retry(job j) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      jobs_.push_front(std::move(j));
    }
    cv_.notify_one();
  }

  /// A new worker takes over `slot`: returns its generation. A worker of an
  /// older generation (given up on) takes nothing more.
  uint64_t adopt(size_t slot) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& s = slots_.at(slot);
    s.view = slot_view{};
    return ++s.generation;
  }

  /// For the worker of `slot` and generation `gen`: the next statement,
  /// waiting up to `wait` for one; the slot is busy with it until `done`.
  /// Nothing on timeout, once stopped, or for a stale generation.
  std::optional<job> take(size_t slot, uint64_t gen,
                          std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock{mtx_};
    auto ready = [&] {
      return stopped_ || slots_.at(slot).generation != gen || !jobs_.empty();
    };
    if (!ready())
      cv_.wait_for(lock, wait, ready);
    auto& s = slots_.at(slot);
    if (stopped_ || s.generation != gen || jobs_.empty())
      return std::nullopt;
    auto j = std::move(jobs_.front());
    jobs_.pop_front();
    s.view.busy = true;
    s.view.job = j.id;
    s.view.request_id = j.req.request_id;
    s.view.received_us = j.req.received_us;
    // A cancel meant for the slot's previous statement came too late.
    s.cancelled = false;
    s.interrupt->clear();
    s.view.give_up_at = clock_type::now()
                        + std::chrono::milliseconds{j.req.deadline_ms} + grace_;
    return j;
  }

  /// What the worker of `slot` passes its runner as the wake fd: readable
  /// once the sandbox stops or the running statement is cancelled.
  int interrupt_fd(size_t slot) const {
    std::lock_guard<std::mutex> guard{mtx_};
    return slots_.at(slot).interrupt->fd();
  }

  /// Cancels the statements of a request (id and arrival): the waiting
  /// ones are taken out of the queue and returned; a worker running one
  /// is interrupted (its runner kills the executor, see
  /// executor_process::run). The signal is raised under the lock while
  /// the slot still runs that statement, and cleared when the slot takes
  /// its next one, so it never reaches another request's statement.
  std::vector<job> cancel(const std::string& request_id, int64_t received_us) {
    std::vector<job> out;
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      if (it->req.request_id == request_id
          && it->req.received_us == received_us) {
        out.push_back(std::move(*it));
        it = jobs_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& s : slots_)
      if (s.view.busy && s.view.request_id == request_id
          && s.view.received_us == received_us) {
        s.cancelled = true;
        s.interrupt->signal();
      }
    return out;
  }

  /// For the worker of `slot` (generation `gen`) after its statement:
  /// whether it was cancelled (and the flag cleared).
  bool take_cancelled(size_t slot, uint64_t gen) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& s = slots_.at(slot);
    return s.generation == gen && std::exchange(s.cancelled, false);
  }

  /// True when the worker of `slot` with generation `gen` was given up on
  /// (or replaced).
  bool given_up(size_t slot, uint64_t gen) const {
    std::lock_guard<std::mutex> guard{mtx_};
    return slots_.at(slot).generation != gen;
  }

  /// The statement the worker of `slot` is running; 0 when none.
  uint64_t current_job(size_t slot) const {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& s = slots_.at(slot);
    return s.view.busy ? s.view.job : 0;
  }

  /// The worker of `slot` (generation `gen`) finished its statement.
  void done(size_t slot, uint64_t gen) {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& s = slots_.at(slot);
    if (s.generation == gen)
      s.view = slot_view{};
  }

  /// Gives up on every slot busy past its give-up time: the slot's
  /// generation moves on (its worker takes nothing more). Returns the
  /// slots and their statements.
  std::vector<std::pair<size_t, uint64_t>> overdue(clock_type::time_point now) {
    std::vector<std::pair<size_t, uint64_t>> out;
    std::lock_guard<std::mutex> guard{mtx_};
    for (size_t i = 0; i < slots_.size(); ++i) {
      auto& s = slots_[i];
      if (s.view.busy && now >= s.view.give_up_at) {
        out.emplace_back(i, s.view.job);
        s.view = slot_view{};
        ++s.generation;
      }
    }
    if (!out.empty())
      cv_.notify_all();
    return out;
  }

  /// True while some slot is busy (the sandbox keeps its sweep armed).
  bool any_busy() const {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& s : slots_)
      if (s.view.busy)
        return true;
    return false;
  }

  /// The busy flags of the slots, and the number of waiting statements.
  void view(std::vector<bool>& busy, int64_t& queued) const {
    std::lock_guard<std::mutex> guard{mtx_};
    busy.resize(slots_.size());
    for (size_t i = 0; i < slots_.size(); ++i)
      busy[i] = slots_[i].view.busy;
    queued = static_cast<int64_t>(jobs_.size());
  }

  size_t size() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return jobs_.size();
  }

  /// Removes and returns every waiting statement.
  std::deque<job> take_all() {
    std::lock_guard<std::mutex> guard{mtx_};
    return std::exchange(jobs_, {});
  }

  /// Wakes every waiting worker, and every running one; nothing is taken
  /// from now on.
  void stop() {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stopped_ = true;
      for (auto& s : slots_)
        s.interrupt->signal();
    }
    cv_.notify_all();
  }

  bool stopped() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return stopped_;
  }

private:
  struct slot_record {
    uint64_t generation = 0;
    slot_view view;
    /// Raised to interrupt the slot's statement (cancel, stop).
    std::unique_ptr<wake_signal> interrupt = std::make_unique<wake_signal>();
    /// The running statement was cancelled.
    bool cancelled = false;
  };

  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<job> jobs_;
  std::vector<slot_record> slots_;
  std::chrono::milliseconds grace_;
  bool stopped_ = false;
};

/// What the pool looked like at its last change: enough to write the
/// health JSON, which is only written when someone reads it.
struct sandbox_snapshot {
  struct executor {
    int32_t pid = 0;
    std::string_view state; ///< "starting", "ready", "busy" or "down"
  };
  std::vector<executor> executors;
  int64_t queued = 0;
  int64_t kills = 0;
  int64_t respawns = 0;
  int64_t crashes = 0;
  int64_t recycles = 0;
  int64_t retries = 0;
  int64_t served = 0;
  int64_t rejected = 0;
  int64_t deadline_ms = 0;
};

/// The health JSON of a snapshot: {size, ready, busy, queued, kills,
/// respawns, crashes, recycles, retries, served, rejected, deadlineMs, executors:
/// [{slot, pid, state}]}.
std::string sandbox_health_json(const sandbox_snapshot& snap);

/// The pool's latest state, mirrored for readers outside the actor (the
/// guardian's /health). Thread-safe. The sandbox stores a snapshot at every
/// change (twice per statement); the JSON is written only on `get`.
class sandbox_status {
public:
  void set(const sandbox_snapshot& snap) {
    std::lock_guard<std::mutex> guard{mtx_};
    // Assigning keeps the vector's storage: no allocation per statement.
    snap_.executors.assign(snap.executors.begin(), snap.executors.end());
    snap_.queued = snap.queued;
    snap_.kills = snap.kills;
    snap_.respawns = snap.respawns;
    snap_.crashes = snap.crashes;
    snap_.recycles = snap.recycles;
    snap_.retries = snap.retries;
    snap_.served = snap.served;
    snap_.rejected = snap.rejected;
    snap_.deadline_ms = snap.deadline_ms;
    has_ = true;
  }

  /// The statement queue whose busy slots and waiting statements the
  /// health JSON shows as they are when it is read.
  void watch(std::shared_ptr<const statement_queue> queue) {
    std::lock_guard<std::mutex> guard{mtx_};
    queue_ = std::move(queue);
  }

  /// The health JSON; empty before the first `set`.
  std::string get() const {
    sandbox_snapshot copy;
    std::shared_ptr<const statement_queue> queue;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!has_)
        return {};
      copy = snap_;
      queue = queue_;
    }
    if (queue)
      overlay(*queue, copy);
    return sandbox_health_json(copy);
  }

  /// Marks the ready executors that are running a statement as busy and
  /// takes the number of waiting statements from `queue`.
  static void overlay(const statement_queue& queue, sandbox_snapshot& snap) {
    std::vector<bool> busy;
    queue.view(busy, snap.queued);
    for (size_t i = 0; i < snap.executors.size() && i < busy.size(); ++i)
      if (busy[i] && snap.executors[i].state == "ready")
        snap.executors[i].state = "busy";
  }

private:
  mutable std::mutex mtx_;
  sandbox_snapshot snap_;
  std::shared_ptr<const statement_queue> queue_;
  bool has_ = false;
};

// -- settings -----------------------------------------------------------------

struct sandbox_settings {
  /// Where statements run: "sqlite" (executor processes over the file) or
  /// "postgres" (connections to the warehouse at `postgres_dsn`).
  std::string backend = "sqlite";
  /// How each executor is started (executable, database, limits).
  data::executor_settings exec;
  /// The warehouse's reading role (`sql.postgresDsn`).
  std::string postgres_dsn;
  /// How long opening a warehouse connection may take.
  std::chrono::milliseconds connect_timeout{5000};
  /// Pre-started executor processes.
  int32_t pool_size = 2;
  /// Default deadline of a statement (a request may ask for its own,
  /// capped at `max_deadline_ms`).
  int64_t deadline_ms = 5000;
  int64_t max_deadline_ms = 60000;
  /// Rows kept per statement (a request may ask for fewer).
  int32_t max_rows = 200;
  /// Requests waiting for a free executor; beyond it, `overloaded`.
  size_t queue_limit = 256;
  /// Pause before retrying an executor that failed to start.
  std::chrono::milliseconds respawn_backoff{500};
  /// How often an idle worker checks that its process is still there.
  std::chrono::milliseconds idle_check{1000};
  std::shared_ptr<telemetry> metrics;
  std::shared_ptr<sandbox_status> status;

  /// The `sql.*` keys of the configuration, the sales database in the data
  /// directory and `default_executor_binary()`.
  static sandbox_settings from(const domain::config& cfg);

  /// A runner of the configured backend (not started).
  std::unique_ptr<data::statement_runner> make_runner() const;
};

// -- the executor worker ------------------------------------------------------

/// What a worker tells the sandbox about its executor process.
enum class worker_event : int32_t {
  ready = 0,        ///< the first process is up
  killed = 1,       ///< the process was SIGKILLed at its deadline
  crashed = 2,      ///< the process died on its own (or was killed)
  spawn_failed = 3, ///< no process could be started; retrying
  respawned = 4,    ///< a replacement process is up
  recycled = 5,     ///< the process neared RLIMIT_CPU and was replaced
  retried = 6, ///< a statement whose process was lost went back to the queue
};

/// One EXECUTOR WORKER: a detached actor (its own thread) that owns one
/// statement runner (an executor process, or a connection to the
/// PostgreSQL warehouse), takes statements from the sandbox's statement_queue
/// as soon as it is free, runs each on its process with blocking I/O and a
/// deadline, sends the outcome to the sandbox, and replaces the process
/// when it is killed or dies.
using executor_worker_actor = caf::typed_actor<
  // Take and run statements until the queue is empty for a while, the
  // mailbox has something, or the queue stops.
  caf::reacts_to<atom::internal, atom::exec>,
  // Timer: try to start a process again.
  caf::reacts_to<atom::internal, atom::run>,
  // Timer: notice a process that died while idle and replace it.
  caf::reacts_to<atom::internal, atom::tick>>;

struct executor_worker_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  executor_worker_state() = default;

  static inline const char* name = "sql_executor";

  sandbox_settings settings;
  int32_t slot = 0;
  sql_sandbox_actor sandbox;
  std::shared_ptr<wake_signal> wake;
  std::shared_ptr<statement_queue> queue;
  /// This worker's generation of its slot (see statement_queue::adopt).
  uint64_t generation = 0;
  std::unique_ptr<data::statement_runner> runner;
  /// A process was up before (the next ready is a respawn).
  bool started_once = false;
  /// An `(internal, exec)` to itself is in the mailbox.
  bool serving = false;
};

executor_worker_actor::behavior_type executor_worker(
  executor_worker_actor::stateful_pointer<executor_worker_state> self,
  sandbox_settings settings, int32_t slot, sql_sandbox_actor sandbox,
  std::shared_ptr<wake_signal> wake, std::shared_ptr<statement_queue> queue,
  uint64_t generation);

// -- the sandbox --------------------------------------------------------------

struct sql_sandbox_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_sandbox_state() = default;

  static inline const char* name = "sql_sandbox";

  enum class slot_state { starting, idle, busy, down };

  struct slot {
    executor_worker_actor worker;
    slot_state state = slot_state::starting;
    int32_t pid = 0;
  };

  sandbox_settings settings;
  std::vector<slot> slots;
  /// Statements waiting for a worker, shared with the workers.
  std::shared_ptr<statement_queue> queue;
  /// The promises of statements queued or running, by job id.
  std::unordered_map<uint64_t, caf::typed_response_promise<sql_exec_result>>
    promises;
  uint64_t next_job = 1;
  std::shared_ptr<wake_signal> wake;
  int64_t kills = 0;
  int64_t respawns = 0;
  int64_t crashes = 0;
  int64_t recycles = 0;
  int64_t retries = 0;
  int64_t served = 0;
  int64_t rejected = 0;
  bool stopping = false;
  /// The sweep for stuck workers is armed (one timer for the whole pool
  /// while statements run, not one per statement).
  bool sweep_pending = false;
  /// Reused for every `publish`.
  sandbox_snapshot snap;

  /// Wakes and stops the workers (which kill and reap their processes).
  ~sql_sandbox_state();
};

/// The SQL SANDBOX: the only thing that runs generated SQL. It owns a pool
/// of `pool_size` executor workers (each a detached actor with one executor
/// process), hands each statement to an idle one, queues statements while
/// all are busy (bounded; beyond it `overloaded`), and keeps the pool full:
/// a worker replaces a process killed at its deadline or dead of any cause,
/// and a worker actor that dies is respawned. A slow statement occupies one
/// worker thread only; the sandbox itself never blocks.
///
/// Replies to `exec`: the result, or `sql_timeout`, `sql_executor_failed`,
/// `sql_failed`, `invalid_request` (empty or oversized statement) or
/// `overloaded`. `health` JSON: {size, ready, busy, queued, kills, respawns,
/// crashes, recycles, retries, served, rejected, deadlineMs, executors:
/// [{slot, pid,
/// state}]}. A process whose CPU time passes half of RLIMIT_CPU is
/// replaced after its statement (a recycle), since the limit counts the
/// whole life of the process.
sql_sandbox_actor::behavior_type
sql_sandbox(sql_sandbox_actor::stateful_pointer<sql_sandbox_state> self,
            sandbox_settings settings);

} // namespace candor::actors
