#include "actors/scheduler.hpp"

#include <mutex>
#include <thread>
#include <unordered_set>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/set_thread_name.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>

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
    cfg.module_factories.emplace_back(
      make_coordinator<caf::policy::work_stealing>);
  else
    cfg.module_factories.emplace_back(
      make_coordinator<caf::policy::work_sharing>);
}

} // namespace candor::actors
