// The lean scheduler: CAF's worker loop without its per-job logger cast,
// and an actor clock that only hears about actors that armed a timeout.

#include "actors/scheduler.hpp"

#include <mutex>
#include <thread>
#include <unordered_set>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/config.hpp>
#include <caf/detail/set_thread_name.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/logger.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/scheduler/worker.hpp>

// The worker loop below is CAF 0.17.6's (caf/scheduler/worker.hpp) less one
// line; another CAF version may have changed it.
#if CAF_VERSION != 1706
#error "actors/scheduler.cpp copies CAF 0.17.6's worker loop: check it"
#endif

namespace candor::actors::detail {
namespace {

/// CAF's two scheduling policies under names of our own. They change
/// nothing by themselves; they give `worker<Policy>::run` instantiations
/// that are ours to specialise (below) without touching the ones libcaf
/// compiled for its own policies. Unnamed: no other translation unit can
/// name them, so no other `worker<...>::run` of them can exist.
struct lean_sharing : caf::policy::work_sharing {};
struct lean_stealing : caf::policy::work_stealing {};

} // namespace
} // namespace candor::actors::detail

namespace caf::scheduler {

namespace {

/// CAF 0.17's worker loop (caf/scheduler/worker.hpp) without its first
/// statement per job, `CAF_PUSH_AID_FROM_PTR(dynamic_cast<abstract_actor*>(
/// job))`, which stores the job's actor id in the logger's thread-local
/// slot for log lines. Debian's libcaf is built with CAF_LOG_LEVEL_QUIET,
/// so no log statement reads that slot, yet the cast ran for every job:
/// through the deep class hierarchy of a typed actor about 1,300
/// instructions a job, six or seven jobs per request. Everything else is
/// the loop as CAF has it.
template <class Worker, class Policy>
void run_jobs(Worker* self, Policy& policy, size_t max_throughput) {
  CAF_SET_LOGGER_SYS(&self->system());
  for (;;) {
    auto job = policy.dequeue(self);
    CAF_ASSERT(job != nullptr);
    CAF_ASSERT(job->subtype() != resumable::io_actor);
    policy.before_resume(self, job);
    auto res = job->resume(self, max_throughput);
    policy.after_resume(self, job);
    switch (res) {
      case resumable::resume_later:
        // keeps the reference: the job stays in the loop
        policy.resume_job_later(self, job);
        break;
      case resumable::done:
        policy.after_completion(self, job);
        intrusive_ptr_release(job);
        break;
      case resumable::awaiting_message:
        // enqueued again when a message arrives
        intrusive_ptr_release(job);
        break;
      case resumable::shutdown_execution_unit:
        policy.after_completion(self, job);
        policy.before_shutdown(self);
        return;
    }
  }
}

} // namespace

template <>
void worker<candor::actors::detail::lean_sharing>::run() {
  run_jobs(this, policy_, max_throughput_);
}

template <>
void worker<candor::actors::detail::lean_stealing>::run() {
  run_jobs(this, policy_, max_throughput_);
}

} // namespace caf::scheduler

namespace candor::actors {

namespace {

/// CAF's thread-safe clock, told about actor exits only for actors that
/// armed a per-actor timeout.
class lean_clock : public caf::detail::thread_safe_actor_clock {
public:
  using super = caf::detail::thread_safe_actor_clock;

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self,
                            caf::atom_value type, uint64_t id) override {
    remember(self);
    super::set_ordinary_timeout(t, self, type, id);
  }

  void set_request_timeout(time_point t, caf::abstract_actor* self,
                           caf::message_id id) override {
    remember(self);
    super::set_request_timeout(t, self, id);
  }

  void set_multi_timeout(time_point t, caf::abstract_actor* self,
                         caf::atom_value type, uint64_t id) override {
    remember(self);
    super::set_multi_timeout(t, self, type, id);
  }

  // cancel_all is inherited unchanged and keeps the set: a stale entry
  // costs one unneeded forward at that actor's exit, while clearing it
  // could race with an actor between remember() and its timeout's push.

  /// Called by every terminating actor (local_actor::cleanup). An actor
  /// arms and cancels from its own execution, so its `remember` always
  /// happens before its exit; an address reused by a later actor is not in
  /// the set until that actor arms a timeout itself.
  void cancel_timeouts(caf::abstract_actor* self) override {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (armed_.erase(self) == 0)
        return;
    }
    super::cancel_timeouts(self);
  }

private:
  void remember(caf::abstract_actor* self) {
    std::lock_guard<std::mutex> guard{mtx_};
    armed_.insert(self);
  }

  std::mutex mtx_;
  std::unordered_set<caf::abstract_actor*> armed_;
};

/// CAF's coordinator with the lean clock. The base class still owns (and
/// starts and stops) its own clock thread, which stays idle: nothing reaches
/// a clock that `clock()` no longer returns.
template <class Policy>
class lean_coordinator : public caf::scheduler::coordinator<Policy> {
public:
  using super = caf::scheduler::coordinator<Policy>;

  explicit lean_coordinator(caf::actor_system& sys) : super(sys) {
    // nop
  }

  ~lean_coordinator() override {
    stop_clock();
  }

  caf::detail::thread_safe_actor_clock& clock() noexcept override {
    return clock_;
  }

protected:
  void start() override {
    thread_ = std::thread{[this] {
      caf::detail::set_thread_name("candor.clock");
      this->system().thread_started();
      clock_.run_dispatch_loop();
      this->system().thread_terminates();
    }};
    try {
      super::start();
    } catch (...) {
      stop_clock();
      throw;
    }
  }

  void stop() override {
    // Actors stopped by the base class still cancel their timeouts here.
    super::stop();
    stop_clock();
  }

private:
  void stop_clock() {
    if (thread_.joinable()) {
      clock_.cancel_dispatch_loop();
      thread_.join();
    }
  }

  lean_clock clock_;
  std::thread thread_;
};

template <class Policy>
caf::actor_system::module* make_coordinator(caf::actor_system& sys) {
  return new lean_coordinator<Policy>(sys);
}

} // namespace

void use_lean_scheduler(caf::actor_system_config& cfg,
                        std::string_view policy) {
  // A scheduler module loaded here takes the place of the one CAF would
  // pick from "scheduler.policy".
  if (policy == "stealing")
    cfg.module_factories.emplace_back(make_coordinator<detail::lean_stealing>);
  else
    cfg.module_factories.emplace_back(make_coordinator<detail::lean_sharing>);
}

} // namespace candor::actors
