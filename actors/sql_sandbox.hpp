#pragma once

// Declares the SQL sandbox actor, its executor workers, their settings and
// the health status it mirrors for /health.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "data/sql/executor.hpp"
#include "actors/interfaces.hpp"
#include "data/telemetry.hpp"
#include "domain/config.hpp"

namespace candor::actors {

// -- shared status ------------------------------------------------------------

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
  int64_t served = 0;
  int64_t rejected = 0;
  int64_t deadline_ms = 0;
};

/// The health JSON of a snapshot: {size, ready, busy, queued, kills,
/// respawns, crashes, recycles, served, rejected, deadlineMs, executors:
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
    snap_.served = snap.served;
    snap_.rejected = snap.rejected;
    snap_.deadline_ms = snap.deadline_ms;
    has_ = true;
  }

  /// The health JSON; empty before the first `set`.
  std::string get() const {
    sandbox_snapshot copy;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!has_)
        return {};
      copy = snap_;
    }
    return sandbox_health_json(copy);
  }

private:
  mutable std::mutex mtx_;
  sandbox_snapshot snap_;
  bool has_ = false;
};

/// An eventfd that, once signalled, stays readable: wakes every executor
/// worker blocked on a reply when the sandbox stops.
class wake_signal {
public:
  wake_signal();
  ~wake_signal();
  wake_signal(const wake_signal&) = delete;
  wake_signal& operator=(const wake_signal&) = delete;

  void signal() noexcept;

  int fd() const noexcept {
    return fd_;
  }

private:
  int fd_ = -1;
};

// -- settings -----------------------------------------------------------------

struct sandbox_settings {
  /// How each executor is started (executable, database, limits).
  data::executor_settings exec;
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
};

/// One EXECUTOR WORKER: a detached actor (its own thread) that owns one
/// executor process, runs statements on it with blocking I/O and a
/// deadline, and replaces the process when it is killed or dies.
using executor_worker_actor = caf::typed_actor<
  // Runs one statement (the request's deadline is already resolved).
  caf::replies_to<atom::exec, sql_exec_request>::with<sql_exec_result>,
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
  data::executor_process proc;
  /// A process was up before (the next ready is a respawn).
  bool started_once = false;
};

executor_worker_actor::behavior_type executor_worker(
  executor_worker_actor::stateful_pointer<executor_worker_state> self,
  sandbox_settings settings, int32_t slot, sql_sandbox_actor sandbox,
  std::shared_ptr<wake_signal> wake);

// -- the sandbox --------------------------------------------------------------

struct sql_sandbox_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_sandbox_state() = default;

  static inline const char* name = "sql_sandbox";

  enum class slot_state { starting, idle, busy, down };

  /// The promise of a statement being executed; emptied once answered
  /// (by the worker's reply or by the sandbox stopping).
  using inflight_ptr = std::shared_ptr<
    std::optional<caf::typed_response_promise<sql_exec_result>>>;

  struct slot {
    executor_worker_actor worker;
    slot_state state = slot_state::starting;
    int32_t pid = 0;
    inflight_ptr inflight;
    /// While busy: when the sandbox gives up on the worker (the
    /// statement's deadline plus a grace; the worker itself kills the
    /// process at the deadline).
    std::chrono::steady_clock::time_point give_up_at;
  };

  struct pending {
    sql_exec_request req;
    caf::typed_response_promise<sql_exec_result> rp;
  };

  sandbox_settings settings;
  std::vector<slot> slots;
  std::deque<pending> queue;
  std::shared_ptr<wake_signal> wake;
  int64_t kills = 0;
  int64_t respawns = 0;
  int64_t crashes = 0;
  int64_t recycles = 0;
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
/// crashes, recycles, served, rejected, deadlineMs, executors: [{slot, pid,
/// state}]}. A process whose CPU time passes half of RLIMIT_CPU is
/// replaced after its statement (a recycle), since the limit counts the
/// whole life of the process.
sql_sandbox_actor::behavior_type
sql_sandbox(sql_sandbox_actor::stateful_pointer<sql_sandbox_state> self,
            sandbox_settings settings);

} // namespace candor::actors
