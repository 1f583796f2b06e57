// The executor worker actor: owns one executor process of the SQL sandbox,
// starts it (retrying), runs one statement at a time on it and tells the
// sandbox when it starts, dies or is recycled; and the eventfd that wakes a
// worker blocked on its process.

#include "actors/sql_sandbox.hpp"

#include "data/sales/setup.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

#include <sys/eventfd.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/sec.hpp>

#include <boost/json.hpp>

#include "domain/json_text.hpp"
#include "data/log.hpp"

namespace candor::actors {

// -- wake_signal --------------------------------------------------------------

wake_signal::wake_signal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  // nop
}

wake_signal::~wake_signal() {
  if (fd_ >= 0)
    ::close(fd_);
}

void wake_signal::signal() noexcept {
  if (fd_ < 0)
    return;
  uint64_t one = 1;
  // Never read: the counter stays non-zero, so every poll sees it.
  [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
}

void wake_signal::clear() noexcept {
  if (fd_ < 0)
    return;
  uint64_t count = 0;
  // Non-blocking: nothing to read (EAGAIN) is fine.
  [[maybe_unused]] auto n = ::read(fd_, &count, sizeof count);
}

// -- settings -----------------------------------------------------------------

sandbox_settings sandbox_settings::from(const domain::config& cfg) {
  sandbox_settings s;
  s.exec.executable = data::default_executor_binary();
  s.exec.db_path = data::sales_db_path(cfg);
  if (!cfg.sql.catalog.empty())
    s.exec.catalog_path = data::catalog_path(cfg);
  s.exec.memory_mb = cfg.sql.executor_memory_mb;
  s.exec.heap_limit_mb = cfg.sql.heap_limit_mb;
  s.exec.cpu_seconds = cfg.sql.executor_cpu_seconds;
  s.pool_size = cfg.sql.executor_pool;
  s.deadline_ms = cfg.sql.deadline_ms;
  s.max_rows = cfg.sql.max_rows;
  s.backend = cfg.sql.backend;
  s.postgres_dsn = cfg.sql.postgres_dsn;
  return s;
}

std::unique_ptr<data::statement_runner> sandbox_settings::make_runner() const {
  if (backend == "postgres")
    return data::make_postgres_runner(postgres_dsn, connect_timeout);
  return data::make_process_runner(exec);
}

namespace {

using worker_ptr
  = executor_worker_actor::stateful_pointer<executor_worker_state>;

// -- the worker ---------------------------------------------------------------

void notify(worker_ptr self, worker_event event, int32_t pid) {
  auto& s = self->state;
  self->send(s.sandbox, atom::internal_v, atom::health_v, s.slot,
             static_cast<int32_t>(event), pid);
}

/// Queues an `(internal, exec)` to itself unless one is queued: the worker
/// goes on taking statements once its mailbox is handled.
void serve_soon(worker_ptr self) {
  auto& s = self->state;
  if (s.serving)
    return;
  s.serving = true;
  self->send(self, atom::internal_v, atom::exec_v);
}

/// Starts a process; tells the sandbox either way.
bool start_process(worker_ptr self) {
  auto& s = self->state;
  if (auto err = s.runner->start()) {
    data::log_event(data::log_level::error, "sql_executor_start_failed",
                    {{"slot", s.slot},
                     {"backend", s.settings.backend},
                     {"message", err.message}});
    notify(self, worker_event::spawn_failed, 0);
    return false;
  }
  notify(self, s.started_once ? worker_event::respawned : worker_event::ready,
         s.runner->pid());
  s.started_once = true;
  return true;
}

/// Starts a process, or schedules a retry; serves the queue once one runs.
void start_or_retry(worker_ptr self) {
  if (start_process(self))
    serve_soon(self);
  else
    self->delayed_send(self, self->state.settings.respawn_backoff,
                       atom::internal_v, atom::run_v);
}

/// Sends the outcome of statement `job` to the sandbox.
template <class T>
void reply(worker_ptr self, uint64_t job, T&& x) {
  auto& s = self->state;
  self->send(s.sandbox, atom::internal_v, atom::exec_v, s.slot, job,
             std::forward<T>(x));
}

/// Runs one statement taken from the queue and sends its outcome.
void run_job(worker_ptr self, statement_queue::job& j) {
  auto& s = self->state;
  auto& req = j.req;
  auto slot = static_cast<size_t>(s.slot);
  // A process that died while idle is replaced before it is used, so
  // that this statement does not pay for it.
  if (s.runner->running() && s.runner->check_gone())
    notify(self, worker_event::crashed, 0);
  if (!s.runner->running() && !start_process(self)) {
    // A retry is scheduled, so that the slot comes back once starting
    // works again instead of staying lost.
    s.queue->done(slot, s.generation);
    reply(self, j.id,
          to_caf(domain::ec::sql_executor_failed,
                 "no SQL executor process could be started"));
    self->delayed_send(self, s.settings.respawn_backoff, atom::internal_v,
                       atom::run_v);
    return;
  }
  auto pid = s.runner->pid();
  auto res = s.runner->run(req, std::chrono::milliseconds{req.deadline_ms},
                           s.queue->interrupt_fd(slot));
  bool cancelled = s.queue->take_cancelled(slot, s.generation);
  s.queue->done(slot, s.generation);
  if (s.runner->running() && s.runner->pid() != pid) {
    // The runner replaced a connection lost before the statement was sent
    // and ran it on the new one: the loss and the replacement are counted
    // like any other.
    notify(self, worker_event::crashed, 0);
    notify(self, worker_event::respawned, s.runner->pid());
  }
  if (res) {
    reply(self, j.id, std::move(*res));
    if (s.runner->worn_out()) {
      s.runner->stop();
      notify(self, worker_event::recycled, 0);
      start_or_retry(self);
    }
    return;
  }
  // Interrupted for a cancelled request: the runner killed the executor
  // (or cancelled the statement and dropped the connection) as on the
  // sandbox's stop; it is replaced below like one killed at its deadline.
  auto code = cancelled ? domain::ec::cancelled : res.err().code;
  auto request_id = req.request_id; // `j` may go back to the queue
  // The process was lost mid-statement by no fault of the statement (a
  // SIGKILL from outside, a crash, a stopped process, a garbled reply):
  // the statement is read-only, so it goes back to the queue once and
  // runs on a healthy executor (this slot's replacement or another).
  // A timeout or one of the executor's limits is the statement's own
  // doing and is not retried; neither is a second loss.
  bool retry = code == domain::ec::sql_executor_failed
               && !data::is_executor_limit(res.err()) && !s.runner->running()
               && j.lost_runs == 0 && !s.queue->stopped();
  if (retry) {
    data::log_event(data::log_level::warn, "sql_statement_retried",
                    {{"slot", s.slot},
                     {"pid", static_cast<int64_t>(pid)},
                     {"requestId", request_id},
                     {"message", res.err().message}});
    ++j.lost_runs;
    s.queue->retry(std::move(j));
    notify(self, worker_event::retried, 0);
  } else if (cancelled) {
    data::log_event(data::log_level::info, "sql_statement_cancelled",
                    {{"slot", s.slot},
                     {"pid", static_cast<int64_t>(pid)},
                     {"requestId", request_id}});
    reply(self, j.id,
          to_caf(code, "the request was cancelled; its executor was killed"));
  } else {
    reply(self, j.id, to_caf(code, res.err().message));
  }
  if (!s.runner->running()) {
    if (!cancelled) { // a cancel is logged above
      data::log_event(data::log_level::warn, "sql_executor_lost",
                      {{"slot", s.slot},
                       {"pid", static_cast<int64_t>(pid)},
                       {"requestId", request_id},
                       {"error", domain::to_string(code)},
                       {"message", res.err().message}});
    }
    if (code == domain::ec::shutting_down || s.queue->stopped())
      return;
    notify(self,
           code == domain::ec::sql_timeout || code == domain::ec::cancelled
             ? worker_event::killed
             : worker_event::crashed,
           0);
    start_or_retry(self);
  }
}

/// Takes statements from the queue and runs them, one after the other,
/// for as long as there are some and nothing waits in the mailbox (an
/// exit, a timer): then it hands back to the mailbox and goes on after.
void serve(worker_ptr self) {
  auto& s = self->state;
  s.serving = false;
  auto slot = static_cast<size_t>(s.slot);
  for (;;) {
    // Without a process the retry timer serves again once one starts.
    if (!s.runner->running() || s.queue->stopped())
      return;
    if (!self->mailbox().empty()) {
      serve_soon(self);
      return;
    }
    auto j = s.queue->take(slot, s.generation, s.settings.idle_check);
    if (!j) {
      // Stopped, or given up on by the sandbox (which kills this worker):
      // take nothing more. Else the queue stayed empty: look at the
      // mailbox (the idle check's timer) and wait again.
      if (!s.queue->stopped() && !s.queue->given_up(slot, s.generation))
        serve_soon(self);
      return;
    }
    run_job(self, *j);
  }
}

} // namespace

executor_worker_actor::behavior_type executor_worker(
  executor_worker_actor::stateful_pointer<executor_worker_state> self,
  sandbox_settings settings, int32_t slot, sql_sandbox_actor sandbox,
  std::shared_ptr<wake_signal> wake, std::shared_ptr<statement_queue> queue,
  uint64_t generation) {
  auto& s = self->state;
  s.settings = std::move(settings);
  s.slot = slot;
  s.sandbox = std::move(sandbox);
  s.wake = std::move(wake);
  s.queue = std::move(queue);
  s.generation = generation;
  s.runner = s.settings.make_runner();
  start_or_retry(self);
  self->delayed_send(self, s.settings.idle_check, atom::internal_v,
                     atom::tick_v);
  return {
    [self](atom::internal, atom::exec) { serve(self); },
    [self](atom::internal, atom::run) {
      if (!self->state.runner->running())
        start_or_retry(self);
    },
    [self](atom::internal, atom::tick) {
      auto& s = self->state;
      if (s.runner->check_gone()) {
        data::log_event(data::log_level::warn, "sql_executor_lost",
                        {{"slot", s.slot}, {"message", "died while idle"}});
        notify(self, worker_event::crashed, 0);
        start_or_retry(self);
      }
      self->delayed_send(self, s.settings.idle_check, atom::internal_v,
                         atom::tick_v);
    },
  };
}

} // namespace candor::actors
