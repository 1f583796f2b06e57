// The fault suite, signals: a SIGHUP storm (thirty re-index requests, 20 ms
// apart) while four clients ask documents questions. Every request is
// answered from one index snapshot or the next, none fails, the server stays
// healthy, and a SIGTERM after it exits 0 with one ledger row per request.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/http_client.hpp"
#include "tests/support/ledger_rows.hpp"
#include "tests/support/process.hpp"

using namespace candor;
using namespace std::chrono_literals;

namespace {

constexpr const char* docs_question
  = R"({"question":"How long is the warranty on an e-bike battery?"})";

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(faults_signals)

BOOST_AUTO_TEST_CASE(a_sighup_storm_under_load_fails_no_request) {
  test::server_process s{{{"CANDOR_LLM_PROVIDER", "local"}}};
  BOOST_REQUIRE_MESSAGE(s.start(std::chrono::seconds{120}), s.log());
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i)
    clients.emplace_back([&] {
      auto c = std::make_unique<test::http_client>(
        s.port(), std::chrono::milliseconds{10000});
      while (!stop) {
        auto r = c->ask(docs_question);
        if (r && r->status == 200
            && boost::json::parse(r->body).at("status").as_string()
                 == "answered")
          ++answered;
        else
          ++failed;
        if (!r)
          c = std::make_unique<test::http_client>(
            s.port(), std::chrono::milliseconds{10000});
      }
    });
  std::this_thread::sleep_for(300ms);
  for (int i = 0; i < 30; ++i) {
    BOOST_REQUIRE_EQUAL(::kill(s.pid(), SIGHUP), 0);
    std::this_thread::sleep_for(20ms);
  }
  std::this_thread::sleep_for(500ms);
  stop = true;
  for (auto& t : clients)
    t.join();
  BOOST_TEST_MESSAGE(answered.load() << " answered, " << failed.load()
                                     << " failed during 30 SIGHUPs");
  BOOST_CHECK_EQUAL(failed.load(), 0);
  BOOST_CHECK_GT(answered.load(), 50);
  {
    test::http_client c{s.port()};
    auto h = c.request("GET", "/health");
    BOOST_REQUIRE(h);
    BOOST_CHECK_EQUAL(boost::json::parse(h->body).at("status").as_string(),
                      "ok");
  }
  BOOST_CHECK_EQUAL(s.stop(SIGTERM), 0);
  auto log = s.log();
  BOOST_CHECK_GE(occurrences(log, R"("event":"reindex_done")"), 1u);
  // A failed reload names its reason in the log: show those lines.
  std::string failures;
  {
    std::istringstream lines{log};
    for (std::string line; std::getline(lines, line);)
      if (line.find(R"("event":"reindex_failed")") != std::string::npos)
        failures += line + "\n";
  }
  BOOST_CHECK_MESSAGE(failures.empty(), "reloads failed:\n" << failures);
  // One row per answered request plus the /health read (a read: no row).
  BOOST_CHECK_EQUAL(test::stored_requests(s.data_dir()), answered.load());
}

BOOST_AUTO_TEST_CASE(a_stop_right_after_sighups_is_prompt_and_fails_no_reload) {
  // Reloads still loading or queued when SIGTERM arrives: each is answered
  // as abandoned when the service stops, instead of the stop waiting out
  // the reload requests' 30 s timeout.
  test::server_process s{{{"CANDOR_LLM_PROVIDER", "local"}}};
  BOOST_REQUIRE_MESSAGE(s.start(std::chrono::seconds{120}), s.log());
  for (int i = 0; i < 5; ++i) {
    BOOST_REQUIRE_EQUAL(::kill(s.pid(), SIGHUP), 0);
    std::this_thread::sleep_for(15ms); // signals sent at once coalesce
  }
  auto start = std::chrono::steady_clock::now();
  BOOST_CHECK_EQUAL(s.stop(SIGTERM, std::chrono::seconds{20}), 0);
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_TEST_MESSAGE("stopped in "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(
                          took)
                          .count()
                     << " ms");
  BOOST_CHECK(took < std::chrono::seconds{10} * test::time_scale());
  auto log = s.log();
  auto requested = occurrences(log, R"("event":"reindex_requested")");
  auto done = occurrences(log, R"("event":"reindex_done")");
  auto abandoned = occurrences(log, R"("event":"reindex_abandoned")");
  BOOST_TEST_MESSAGE(requested << " reloads asked, " << done << " done, "
                               << abandoned << " abandoned at the stop");
  BOOST_CHECK_GE(requested, 2u);
  BOOST_CHECK_EQUAL(done + abandoned, requested);
  BOOST_CHECK_EQUAL(occurrences(log, R"("event":"reindex_failed")"), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
