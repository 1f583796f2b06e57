// The scheduler with the lean clock (actors/scheduler.hpp): timeouts still
// fire, and actors that never armed one end without waking the clock
// thread.

#include "actors/scheduler.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/after.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>

#include <boost/test/unit_test.hpp>

#include "tests/support/threads.hpp"

using namespace std::chrono_literals;

namespace {

/// The voluntary context switches of this process's thread named `name`
/// (-1 when there is no such thread).
long voluntary_switches(const std::string& name) {
  for (const auto& task : candor::test::threads_named(name)) {
    std::ifstream status{task / "status"};
    std::string line;
    while (std::getline(status, line)) {
      const std::string key = "voluntary_ctxt_switches:";
      if (line.rfind(key, 0) == 0)
        return std::stol(line.substr(key.size()));
    }
  }
  return -1;
}

struct lean_system {
  caf::actor_system_config cfg;
  caf::actor_system sys;

  explicit lean_system(const char* policy) : sys{init(cfg, policy)} {
    // nop
  }

  static caf::actor_system_config& init(caf::actor_system_config& cfg,
                                        const char* policy) {
    cfg.set("scheduler.max-threads", size_t{2});
    candor::actors::use_lean_scheduler(cfg, policy);
    return cfg;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(actors_scheduler)

BOOST_AUTO_TEST_CASE(request_and_receive_timeouts_still_fire) {
  for (const char* policy : {"sharing", "stealing"}) {
    BOOST_TEST_CONTEXT("policy " << policy) {
      lean_system ls{policy};
      caf::scoped_actor self{ls.sys};
      // A request nobody answers ends in request_timeout.
      caf::scoped_actor silent{ls.sys};
      caf::error err;
      self->request(silent, 50ms, 1)
        .receive([](int) { BOOST_FAIL("a silent actor answered"); },
                 [&](caf::error& e) { err = std::move(e); });
      BOOST_CHECK(err == caf::sec::request_timeout);
      // An actor's receive timeout fires.
      caf::actor reporter = self;
      ls.sys.spawn([reporter](caf::event_based_actor* a) -> caf::behavior {
        return {
          [](int) {},
          caf::after(20ms) >>
            [a, reporter] {
              a->send(reporter, 42);
              a->quit();
            },
        };
      });
      int got = 0;
      self->receive([&](int x) { got = x; },
                    caf::after(10s) >>
                      [] { BOOST_FAIL("no receive timeout"); });
      BOOST_CHECK_EQUAL(got, 42);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_armed_timeout_of_a_finished_actor_is_cancelled) {
  lean_system ls{"sharing"};
  caf::scoped_actor self{ls.sys};
  caf::scoped_actor silent{ls.sys};
  // Arms a request timeout, then quits before it fires: the clock must
  // drop the timeout (a late one would reach a destroyed actor).
  caf::actor reporter = self;
  auto h = ls.sys.spawn(
    [silent = caf::actor{silent}, reporter](caf::event_based_actor* a) {
      a->request(silent, 30ms, 1).then([](int) {}, [](caf::error&) {});
      a->send(reporter, 1);
      a->quit();
    });
  self->wait_for(h);
  self->receive([](int) {}, caf::after(10s) >> [] { BOOST_FAIL("no start"); });
  // Past the would-be timeout the system still runs actors and timers.
  caf::error err;
  self->request(silent, 60ms, 2)
    .receive([](int) { BOOST_FAIL("a silent actor answered"); },
             [&](caf::error& e) { err = std::move(e); });
  BOOST_CHECK(err == caf::sec::request_timeout);
}

BOOST_AUTO_TEST_CASE(actors_without_timeouts_end_without_waking_the_clock) {
  lean_system ls{"sharing"};
  caf::scoped_actor self{ls.sys};
  // The clock thread names itself once it runs.
  auto before = voluntary_switches("candor.clock");
  for (int i = 0; i < 500 && before < 0; ++i) {
    std::this_thread::sleep_for(10ms);
    before = voluntary_switches("candor.clock");
  }
  BOOST_REQUIRE_MESSAGE(before >= 0, "no candor.clock thread");
  for (int i = 0; i < 300; ++i) {
    auto h = ls.sys.spawn([](caf::event_based_actor* a) { a->quit(); });
    self->wait_for(h);
  }
  auto after = voluntary_switches("candor.clock");
  // CAF's own clock wakes for each of these exits (hundreds of switches);
  // the lean clock is not told about them. A few wake-ups are left for
  // CAF's own start-up work.
  BOOST_CHECK_LT(after - before, 30);
}

BOOST_AUTO_TEST_CASE(the_worker_loop_runs_every_kind_of_job_outcome) {
  // Our worker loop (actors/scheduler.cpp) in place of CAF's: with a
  // throughput of one message per turn an actor with a full mailbox is put
  // back in the queue (resume_later), an idle one waits (awaiting_message),
  // a finished one is released (done), and the system's end stops the
  // workers (shutdown_execution_unit: the destructor would hang otherwise).
  for (const char* policy : {"sharing", "stealing"}) {
    BOOST_TEST_CONTEXT("policy " << policy) {
      caf::actor_system_config cfg;
      cfg.set("scheduler.max-threads", size_t{2});
      cfg.set("scheduler.max-throughput", size_t{1});
      candor::actors::use_lean_scheduler(cfg, policy);
      caf::actor_system sys{cfg};
      caf::scoped_actor self{sys};
      constexpr int n = 2000;
      std::vector<caf::actor> counters;
      for (int k = 0; k < 4; ++k)
        counters.push_back(sys.spawn([](caf::event_based_actor* a) {
          auto seen = std::make_shared<int>(0);
          return caf::behavior{
            [seen](int) { ++*seen; },
            [a, seen](const std::string&) {
              a->quit();
              return *seen;
            },
          };
        }));
      for (int i = 0; i < n; ++i)
        for (auto& c : counters)
          self->send(c, i);
      for (auto& c : counters) {
        int seen = -1;
        self->request(c, 10s, std::string{"total"})
          .receive([&](int x) { seen = x; },
                   [](caf::error& e) { BOOST_FAIL(caf::to_string(e)); });
        BOOST_CHECK_EQUAL(seen, n);
        self->wait_for(c);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
