// The real `candor serve` with a sales database: the SQL sandbox's executor
// processes in /health and /metrics, sandboxed, and gone after a clean
// shutdown or with their parent (parent-death signal).

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <signal.h>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/http_client.hpp"
#include "tests/support/children.hpp"
#include "tests/support/process.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor;
using namespace std::chrono_literals;

namespace {

using test::eventually;
using test::executors_of;
using test::not_running;

struct seeded_server {
  test::server_process proc;

  seeded_server() {
    BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n"
                                          << proc.log());
  }

  boost::json::object health() {
    test::http_client c{proc.port()};
    auto r = c.request("GET", "/health");
    BOOST_REQUIRE(r);
    return boost::json::parse(r->body).as_object();
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_sandbox)

BOOST_AUTO_TEST_CASE(the_pool_is_in_health_and_metrics_and_stops_cleanly) {
  seeded_server s;
  BOOST_REQUIRE(eventually([&] {
    auto h = s.health();
    auto& sb = h.at("sandbox");
    return sb.is_object() && sb.at("ready").as_int64() == 2;
  }));
  auto sb = s.health().at("sandbox").as_object();
  BOOST_CHECK_EQUAL(sb.at("size").as_int64(), 2);
  BOOST_CHECK_EQUAL(sb.at("kills").as_int64(), 0);
  test::http_client c{s.proc.port()};
  auto m = c.request("GET", "/metrics");
  BOOST_REQUIRE(m);
  BOOST_CHECK_NE(m->body.find("candor_sql_sandbox_events_total{event=\"kill\"}"
                              " 0"),
                 std::string::npos);
  BOOST_CHECK_NE(m->body.find("candor_sql_sandbox_executors{state=\"ready\"}"
                              " 2"),
                 std::string::npos);
  auto kids = executors_of(s.proc.pid());
  BOOST_REQUIRE_EQUAL(kids.size(), 2u);
  for (auto& [pid, state] : kids) {
    std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
    std::string text{std::istreambuf_iterator<char>{status}, {}};
    BOOST_CHECK_NE(text.find("Seccomp:\t2"), std::string::npos);
  }
  BOOST_CHECK_EQUAL(s.proc.stop(SIGTERM), 0);
  for (auto& [pid, state] : kids)
    BOOST_CHECK(not_running(pid));
}

BOOST_AUTO_TEST_CASE(executors_die_with_a_killed_server) {
  seeded_server s;
  BOOST_REQUIRE(eventually([&] {
    auto h = s.health();
    auto& sb = h.at("sandbox");
    return sb.is_object() && sb.at("ready").as_int64() == 2;
  }));
  auto kids = executors_of(s.proc.pid());
  BOOST_REQUIRE_EQUAL(kids.size(), 2u);
  s.proc.stop(SIGKILL);
  for (auto& [pid, state] : kids)
    BOOST_CHECK(eventually([pid = pid] { return not_running(pid); }, 5s));
}

BOOST_AUTO_TEST_CASE(
  every_accepted_memory_setting_answers_with_the_log_in_a_file) {
  // `candor ask` with its stderr (the JSON log) in a regular file and
  // sql.executorMemoryMb of 32, 48 or 64 (all accepted) must answer data
  // questions, not "SQL executor failed" with the executor killed by
  // SIGXFSZ. run_candor captures stderr in a file.
  auto dir = test::make_temp_dir("candor-sandbox-memory");
  test::provide_sales_db(dir);
  for (auto* mb : {"32", "48", "64"}) {
    for (auto* q : {"What was our revenue by channel in 2024?",
                    "How many products are in each category?"}) {
      auto r = test::run_candor({"ask", q, "--json", "--data-dir", dir},
                                {{"CANDOR_SQL_EXECUTOR_MEMORY_MB", mb}});
      BOOST_CHECK_MESSAGE(r.exit_code == 0, mb << " MiB: " << r.err);
      BOOST_CHECK_MESSAGE(r.err.find("SIGXFSZ") == std::string::npos,
                          mb << " MiB: " << r.err);
      if (r.out.empty())
        continue;
      auto o = boost::json::parse(r.out).as_object();
      BOOST_CHECK_MESSAGE(o.at("status").as_string() == "answered",
                          mb << " MiB, " << q << ": " << r.out);
    }
  }
  test::remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(an_executor_killed_by_its_cpu_limit_is_named_to_the_user) {
  auto dir = test::make_temp_dir("candor-sandbox-cpu");
  test::provide_sales_db(dir);
  // The scripted query that runs until it is stopped, with a deadline far
  // past a 1 s CPU limit.
  auto r = test::run_candor(
    {"ask", "How many pairs of order lines have different quantities?",
     "--json", "--data-dir", dir},
    {{"CANDOR_SQL_EXECUTOR_CPU_SECONDS", "1"},
     {"CANDOR_SQL_DEADLINE_MS", "30000"}});
  BOOST_REQUIRE_MESSAGE(!r.out.empty(), r.err);
  auto o = boost::json::parse(r.out).as_object();
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "error");
  auto answer = std::string{o.at("answer").as_string()};
  for (auto* part : {"CPU time limit", "sql.executorCpuSeconds", "SIGXCPU"})
    BOOST_CHECK_MESSAGE(answer.find(part) != std::string::npos, answer);
  BOOST_CHECK(answer.find("SQL executor failed") == std::string::npos);
  bool warned = false;
  for (auto& w : o.at("warnings").as_array())
    warned = warned || w.as_string() == "sql_resource_limit";
  BOOST_CHECK_MESSAGE(warned, r.out);
  test::remove_tree(dir);
}

BOOST_AUTO_TEST_SUITE_END()
