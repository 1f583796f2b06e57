// The SQL sandbox actor: a pool of executor processes (one executor_worker
// actor each, see actors/executor_worker.cpp) that run generated SQL with
// deadlines, respawns and recycling.

#include "actors/sql_sandbox.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

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

// -- the sandbox --------------------------------------------------------------

sql_sandbox_state::~sql_sandbox_state() {
  if (queue)
    queue->stop();
  if (wake)
    wake->signal();
  for (auto& sl : slots)
    if (sl.worker)
      caf::anon_send_exit(sl.worker, caf::exit_reason::user_shutdown);
}

std::string sandbox_health_json(const sandbox_snapshot& snap) {
  int64_t ready = 0;
  int64_t busy = 0;
  boost::json::array executors;
  executors.reserve(snap.executors.size());
  for (size_t i = 0; i < snap.executors.size(); ++i) {
    auto& e = snap.executors[i];
    ready += e.state == "ready" ? 1 : 0;
    busy += e.state == "busy" ? 1 : 0;
    boost::json::object o;
    o["slot"] = static_cast<int64_t>(i);
    o["pid"] = e.pid;
    o["state"] = e.state;
    executors.push_back(std::move(o));
  }
  boost::json::object out;
  out["size"] = static_cast<int64_t>(snap.executors.size());
  out["ready"] = ready;
  out["busy"] = busy;
  out["queued"] = snap.queued;
  out["kills"] = snap.kills;
  out["respawns"] = snap.respawns;
  out["crashes"] = snap.crashes;
  out["recycles"] = snap.recycles;
  out["retries"] = snap.retries;
  out["served"] = snap.served;
  out["rejected"] = snap.rejected;
  out["deadlineMs"] = snap.deadline_ms;
  out["executors"] = std::move(executors);
  return domain::json_text(out);
}

namespace {

using sandbox_ptr = sql_sandbox_actor::stateful_pointer<sql_sandbox_state>;
using slot_state = sql_sandbox_state::slot_state;

std::string_view slot_state_name(slot_state st) {
  switch (st) {
    case slot_state::starting: return "starting";
    case slot_state::idle: return "ready";
    case slot_state::busy: return "busy";
    case slot_state::down: return "down";
  }
  return "down";
}

/// The pool as it is now, into `out` (whose storage is reused). Which ready
/// executors are busy, and how many statements wait, is the queue's to
/// say (see sandbox_status::overlay).
void snapshot(sandbox_ptr self, sandbox_snapshot& out) {
  auto& s = self->state;
  out.executors.resize(s.slots.size());
  for (size_t i = 0; i < s.slots.size(); ++i) {
    out.executors[i].pid = s.slots[i].pid;
    out.executors[i].state = slot_state_name(s.slots[i].state);
  }
  out.queued = 0;
  out.kills = s.kills;
  out.respawns = s.respawns;
  out.crashes = s.crashes;
  out.recycles = s.recycles;
  out.retries = s.retries;
  out.served = s.served;
  out.rejected = s.rejected;
  out.deadline_ms = s.settings.deadline_ms;
}

std::string health_json(sandbox_ptr self) {
  sandbox_snapshot snap;
  snapshot(self, snap);
  sandbox_status::overlay(*self->state.queue, snap);
  return sandbox_health_json(snap);
}

/// Mirrors the pool's state to /health and /metrics. Runs once per
/// statement, so it only copies a few numbers: the JSON is written when
/// /health asks for it, and the gauges are cached series.
void publish(sandbox_ptr self) {
  auto& s = self->state;
  if (!s.settings.status && !s.settings.metrics)
    return;
  snapshot(self, s.snap);
  if (s.settings.status)
    s.settings.status->set(s.snap);
  if (s.settings.metrics) {
    sandbox_status::overlay(*s.queue, s.snap);
    int64_t ready = 0;
    int64_t busy = 0;
    for (auto& e : s.snap.executors) {
      ready += e.state == "ready" ? 1 : 0;
      busy += e.state == "busy" ? 1 : 0;
    }
    s.settings.metrics->sandbox_pool(static_cast<int64_t>(s.slots.size()),
                                     ready, busy, s.snap.queued);
  }
}

void spawn_worker(sandbox_ptr self, size_t i) {
  auto& s = self->state;
  auto& sl = s.slots[i];
  auto generation = s.queue->adopt(i);
  sl.worker = self->spawn<caf::detached>(
    executor_worker, s.settings, static_cast<int32_t>(i),
    caf::actor_cast<sql_sandbox_actor>(self), s.wake, s.queue, generation);
  sl.state = slot_state::starting;
  sl.pid = 0;
  self->monitor(sl.worker);
}

/// Answers statement `job` (if it is still waiting for an answer).
template <class T>
bool answer(sandbox_ptr self, uint64_t job, T&& x) {
  auto& s = self->state;
  auto it = s.promises.find(job);
  if (it == s.promises.end())
    return false;
  it->second.deliver(std::forward<T>(x));
  s.promises.erase(it);
  ++s.served;
  return true;
}

/// Fails every queued statement when no worker can take one.
void fail_queue_if_all_down(sandbox_ptr self) {
  auto& s = self->state;
  bool any = std::any_of(s.slots.begin(), s.slots.end(),
                         [](auto& sl) { return sl.state != slot_state::down; });
  if (any)
    return;
  for (auto& j : s.queue->take_all())
    answer(self, j.id,
           to_caf(domain::ec::sql_executor_failed,
                  "no SQL executor process is available"));
}

/// Grace on top of a statement's deadline before the sandbox gives up on
/// its worker (a replacement process may have to start first).
constexpr auto worker_grace = std::chrono::seconds{15};

/// How often the sweep looks for stuck workers while statements run.
constexpr auto sweep_interval = std::chrono::seconds{1};

/// Arms the sweep once (it re-arms itself while statements run). One timer
/// for the pool instead of a request timeout per statement: arming and
/// cancelling a timeout wakes CAF's clock thread twice per statement.
void arm_sweep(sandbox_ptr self) {
  auto& s = self->state;
  if (s.sweep_pending)
    return;
  s.sweep_pending = true;
  self->delayed_send(self, sweep_interval, atom::internal_v, atom::tick_v);
}

/// The sweep: gives up on every worker whose statement is past its
/// deadline plus `worker_grace`. Its statement fails with
/// `sql_executor_failed` and the worker is killed (its process goes with
/// it); the down handler replaces it.
void sweep(sandbox_ptr self) {
  auto& s = self->state;
  s.sweep_pending = false;
  if (s.stopping)
    return;
  auto stuck = s.queue->overdue(std::chrono::steady_clock::now());
  for (auto [i, job] : stuck) {
    data::log_event(data::log_level::error, "sql_worker_stuck",
                    {{"slot", static_cast<int64_t>(i)}});
    self->send_exit(s.slots[i].worker, caf::exit_reason::kill);
    s.slots[i].state = slot_state::starting;
    answer(self, job,
           to_caf(domain::ec::sql_executor_failed,
                  "the SQL executor did not answer"));
  }
  if (!s.promises.empty())
    arm_sweep(self);
  if (!stuck.empty())
    publish(self);
}

void on_worker_event(sandbox_ptr self, int32_t slot, int32_t event,
                     int32_t pid) {
  auto& s = self->state;
  if (slot < 0 || static_cast<size_t>(slot) >= s.slots.size())
    return;
  auto& sl = s.slots[static_cast<size_t>(slot)];
  auto* metrics = s.settings.metrics.get();
  switch (static_cast<worker_event>(event)) {
    case worker_event::ready:
    case worker_event::respawned:
      if (static_cast<worker_event>(event) == worker_event::respawned) {
        ++s.respawns;
        if (metrics)
          metrics->sandbox_event("respawn");
      }
      sl.pid = pid;
      sl.state = slot_state::idle;
      break;
    case worker_event::killed:
      ++s.kills;
      sl.pid = 0;
      sl.state = slot_state::starting;
      if (metrics)
        metrics->sandbox_event("kill");
      break;
    case worker_event::crashed:
      ++s.crashes;
      sl.pid = 0;
      sl.state = slot_state::starting;
      if (metrics)
        metrics->sandbox_event("crash");
      break;
    case worker_event::retried:
      ++s.retries;
      if (metrics)
        metrics->sandbox_event("retry");
      break;
    case worker_event::recycled:
      ++s.recycles;
      sl.pid = 0;
      sl.state = slot_state::starting;
      break;
    case worker_event::spawn_failed:
      sl.pid = 0;
      sl.state = slot_state::down;
      fail_queue_if_all_down(self);
      break;
  }
  publish(self);
}

} // namespace

sql_sandbox_actor::behavior_type
sql_sandbox(sql_sandbox_actor::stateful_pointer<sql_sandbox_state> self,
            sandbox_settings settings) {
  auto& s = self->state;
  settings.pool_size = std::clamp(settings.pool_size, 1, 64);
  settings.max_rows = std::max(settings.max_rows, 1);
  settings.deadline_ms = std::max<int64_t>(settings.deadline_ms, 1);
  settings.max_deadline_ms
    = std::max(settings.max_deadline_ms, settings.deadline_ms);
  s.settings = std::move(settings);
  s.wake = std::make_shared<wake_signal>();
  s.slots.resize(static_cast<size_t>(s.settings.pool_size));
  s.queue = std::make_shared<statement_queue>(s.slots.size(), worker_grace);
  if (s.settings.status)
    s.settings.status->watch(s.queue);
  for (size_t i = 0; i < s.slots.size(); ++i)
    spawn_worker(self, i);
  publish(self);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& s = self->state;
    if (s.stopping)
      return;
    for (size_t i = 0; i < s.slots.size(); ++i) {
      if (s.slots[i].worker.address() != dm.source)
        continue;
      data::log_event(data::log_level::warn, "sql_worker_down",
                      {{"slot", static_cast<int64_t>(i)},
                       {"reason", caf::to_string(dm.reason)}});
      // The statement it was running (if any) gets no result from it.
      if (auto job = s.queue->current_job(i); job != 0)
        answer(self, job,
               to_caf(domain::ec::sql_executor_failed,
                      "the SQL executor worker stopped"));
      spawn_worker(self, i);
      publish(self);
    }
  });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& s = self->state;
    s.stopping = true;
    s.queue->stop();
    s.wake->signal();
    s.queue->take_all();
    for (auto& [job, rp] : s.promises)
      rp.deliver(
        to_caf(domain::ec::shutting_down, "the SQL sandbox is stopping"));
    s.promises.clear();
    for (auto& sl : s.slots)
      self->send_exit(sl.worker, msg.reason);
    self->quit(msg.reason);
  });
  return {
    [self](atom::exec, sql_exec_request& req) -> caf::result<sql_exec_result> {
      auto& s = self->state;
      if (s.stopping)
        return to_caf(domain::ec::shutting_down, "the SQL sandbox is stopping");
      if (req.sql.empty() || req.sql.size() > data::executor_max_sql)
        return to_caf(domain::ec::invalid_request,
                      "the statement is empty or longer than "
                        + std::to_string(data::executor_max_sql) + " bytes");
      if (req.max_rows <= 0 || req.max_rows > s.settings.max_rows)
        req.max_rows = s.settings.max_rows;
      if (req.deadline_ms <= 0)
        req.deadline_ms = static_cast<int32_t>(s.settings.deadline_ms);
      req.deadline_ms = static_cast<int32_t>(
        std::min<int64_t>(req.deadline_ms, s.settings.max_deadline_ms));
      bool any_up = std::any_of(s.slots.begin(), s.slots.end(), [](auto& sl) {
        return sl.state != slot_state::down;
      });
      if (!any_up)
        return to_caf(domain::ec::sql_executor_failed,
                      "no SQL executor process is available");
      // Statements wait in the queue only while every worker is busy: a
      // free worker takes one at once.
      if (s.queue->size() >= s.settings.queue_limit) {
        ++s.rejected;
        return to_caf(domain::ec::overloaded, "the SQL sandbox queue is full");
      }
      auto rp = self->make_response_promise<sql_exec_result>();
      auto id = s.next_job++;
      s.promises.emplace(id, rp);
      s.queue->push({id, std::move(req)});
      arm_sweep(self);
      return rp;
    },
    [self](atom::health) { return health_json(self); },
    [self](atom::cancel, const std::string& request_id, int64_t received_us) {
      auto& s = self->state;
      // Waiting statements are answered here; a running one by its worker
      // once its executor is gone.
      for (auto& j : s.queue->cancel(request_id, received_us))
        answer(self, j.id,
               to_caf(domain::ec::cancelled, "the request was cancelled"));
      publish(self);
    },
    [self](atom::internal, atom::health, int32_t slot, int32_t event,
           int32_t pid) { on_worker_event(self, slot, event, pid); },
    [self](atom::internal, atom::tick) { sweep(self); },
    [self](atom::internal, atom::exec, int32_t, uint64_t job,
           sql_exec_result& res) {
      answer(self, job, std::move(res));
      publish(self);
    },
    [self](atom::internal, atom::exec, int32_t, uint64_t job, caf::error& err) {
      answer(self, job, std::move(err));
      publish(self);
    },
  };
}

} // namespace candor::actors
