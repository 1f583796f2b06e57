// The executor worker actor: owns one executor process of the SQL sandbox,
// starts it (retrying), runs one statement at a time on it and tells the
// sandbox when it starts, dies or is recycled; and the eventfd that wakes a
// worker blocked on its process.

#include "actors/sql_sandbox.hpp"

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

// -- settings -----------------------------------------------------------------

sandbox_settings sandbox_settings::from(const domain::config& cfg) {
  sandbox_settings s;
  s.exec.executable = data::default_executor_binary();
  s.exec.db_path = cfg.data_dir + "/sales.db";
  s.exec.memory_mb = cfg.sql.executor_memory_mb;
  s.exec.heap_limit_mb = cfg.sql.heap_limit_mb;
  s.exec.cpu_seconds = cfg.sql.executor_cpu_seconds;
  s.pool_size = cfg.sql.executor_pool;
  s.deadline_ms = cfg.sql.deadline_ms;
  s.max_rows = cfg.sql.max_rows;
  return s;
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

/// Starts a process; tells the sandbox either way.
bool start_process(worker_ptr self) {
  auto& s = self->state;
  auto proc = data::executor_process::spawn(s.settings.exec);
  if (!proc) {
    data::log_event(data::log_level::error, "sql_executor_start_failed",
                    {{"slot", s.slot}, {"message", proc.err().message}});
    notify(self, worker_event::spawn_failed, 0);
    return false;
  }
  s.proc = std::move(*proc);
  notify(self, s.started_once ? worker_event::respawned : worker_event::ready,
         static_cast<int32_t>(s.proc.pid()));
  s.started_once = true;
  return true;
}

void start_or_retry(worker_ptr self) {
  if (!start_process(self))
    self->delayed_send(self, self->state.settings.respawn_backoff,
                       atom::internal_v, atom::run_v);
}

} // namespace

executor_worker_actor::behavior_type executor_worker(
  executor_worker_actor::stateful_pointer<executor_worker_state> self,
  sandbox_settings settings, int32_t slot, sql_sandbox_actor sandbox,
  std::shared_ptr<wake_signal> wake) {
  auto& s = self->state;
  s.settings = std::move(settings);
  s.slot = slot;
  s.sandbox = std::move(sandbox);
  s.wake = std::move(wake);
  start_or_retry(self);
  self->delayed_send(self, s.settings.idle_check, atom::internal_v,
                     atom::tick_v);
  return {
    [self](atom::exec, sql_exec_request& req) -> caf::result<sql_exec_result> {
      auto& s = self->state;
      // A process that died while idle is replaced before it is used, so
      // that this statement does not pay for it.
      if (s.proc.running() && s.proc.check_gone())
        notify(self, worker_event::crashed, 0);
      if (!s.proc.running()) {
        // On failure a retry is scheduled, so that the slot comes back
        // once starting works again instead of staying lost.
        start_or_retry(self);
        if (!s.proc.running())
          return to_caf(domain::ec::sql_executor_failed,
                        "no SQL executor process could be started");
      }
      auto rp = self->make_response_promise<sql_exec_result>();
      auto pid = s.proc.pid();
      auto res = s.proc.run(req, std::chrono::milliseconds{req.deadline_ms},
                            s.wake->fd());
      if (res) {
        rp.deliver(std::move(*res));
        // RLIMIT_CPU counts the process's whole life: replace it well
        // before a legitimate statement could hit the limit.
        auto budget
          = static_cast<int64_t>(s.settings.exec.cpu_seconds) * 500000;
        if (s.proc.cpu_us() > budget) {
          s.proc.kill();
          notify(self, worker_event::recycled, 0);
          start_or_retry(self);
        }
        return rp;
      }
      auto code = res.err().code;
      rp.deliver(to_caf(code, res.err().message));
      if (!s.proc.running()) {
        data::log_event(data::log_level::warn, "sql_executor_lost",
                        {{"slot", s.slot},
                         {"pid", static_cast<int64_t>(pid)},
                         {"requestId", req.request_id},
                         {"error", domain::to_string(code)},
                         {"message", res.err().message}});
        if (code == domain::ec::shutting_down)
          return rp;
        notify(self,
               code == domain::ec::sql_timeout ? worker_event::killed
                                               : worker_event::crashed,
               0);
        start_or_retry(self);
      }
      return rp;
    },
    [self](atom::internal, atom::run) {
      if (!self->state.proc.running())
        start_or_retry(self);
    },
    [self](atom::internal, atom::tick) {
      auto& s = self->state;
      if (s.proc.running() && s.proc.check_gone()) {
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
