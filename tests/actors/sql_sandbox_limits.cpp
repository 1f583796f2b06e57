// The SQL sandbox's process limits with real executor processes: deadline
// kills under load, memory bombs, CPU limits, crashes, writes and the seccomp
// filter, mostly with the guard bypassed (`executor_settings::unguarded`).

#include "actors/sql_sandbox.hpp"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/sales/gen.hpp"
#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/config.hpp"
#include "domain/records.hpp"
#include "domain/text.hpp"
#include "tests/support/sales_db.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/sql_sandbox_pool.hpp"

using namespace candor;
using namespace std::chrono_literals;
using domain::sql_exec_request;
using domain::sql_exec_result;
using namespace candor::test::sql_sandbox_support;

BOOST_AUTO_TEST_SUITE(actors_sql_sandbox_limits)

BOOST_AUTO_TEST_CASE(a_runaway_query_is_killed_while_others_are_served) {
  pool p{settings_for(true, 2)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto start = std::chrono::steady_clock::now();
  auto slow = p.exec_async(runaway, 400);
  std::vector<std::future<exec_outcome>> others;
  for (int i = 0; i < 50; ++i)
    others.push_back(
      p.exec_async("SELECT count(*) FROM orders WHERE order_id % 50 = "
                   + std::to_string(i)));
  auto killed = slow.get();
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE(!killed.ok());
  BOOST_CHECK(killed.err().code == domain::ec::sql_timeout);
  BOOST_CHECK_LT(took, 3s);
  int ok = 0;
  for (auto& f : others) {
    auto r = f.get();
    BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    ok += r.ok() ? 1 : 0;
  }
  BOOST_CHECK_EQUAL(ok, 50);
  BOOST_CHECK(p.wait_health([](const boost::json::object& h) {
    return pool_full(h) && num(h, "kills") == 1 && num(h, "respawns") == 1;
  }));
}

BOOST_AUTO_TEST_CASE(bombs_mixed_into_200_parallel_queries) {
  pool p{settings_for(true, 2)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  const char* bombs[] = {
    runaway,
    "SELECT length(printf('%.*c', 900000000, 'x'))",
    "SELECT count(*) FROM (SELECT randomblob(90000) FROM orders ORDER BY 1)",
    "SELECT length(group_concat(hex(zeroblob(50000)))) FROM order_items",
  };
  std::vector<std::future<exec_outcome>> good;
  std::vector<std::future<exec_outcome>> bad;
  for (int i = 0; i < 200; ++i) {
    if (i % 25 == 0)
      bad.push_back(p.exec_async(bombs[(i / 25) % 4], 500));
    else
      good.push_back(p.exec_async("SELECT count(*) FROM order_items WHERE "
                                  "order_id = "
                                  + std::to_string(i + 1)));
  }
  for (auto& f : good) {
    auto r = f.get();
    BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  }
  for (auto& f : bad)
    BOOST_CHECK(!f.get().ok());
  BOOST_CHECK(p.wait_health(pool_full));
  BOOST_CHECK_EQUAL(num(p.health(), "crashes"), 0);
  // The pool converges to two processes: a replacement reported ready may
  // be counted a moment before the process it replaced is reaped, or (on a
  // loaded machine) the other way round.
  BOOST_CHECK(
    test::eventually([] { return executor_children().size() == 2u; }, 5s));
}

BOOST_AUTO_TEST_CASE(a_memory_bomb_is_contained) {
  pool p{settings_for(true, 1)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  BOOST_REQUIRE(p.exec("SELECT count(*) FROM orders").ok());
  auto before = own_rss();
  for (auto* bomb :
       {"SELECT length(group_concat(hex(zeroblob(50000)))) FROM order_items",
        "SELECT count(*) FROM (SELECT randomblob(90000) FROM orders ORDER "
        "BY 1)",
        "SELECT length(printf('%.*c', 900000000, 'x'))"}) {
    auto r = p.exec(bomb, 1500);
    BOOST_CHECK_MESSAGE(!r.ok(), bomb);
    if (!r.ok())
      BOOST_CHECK_MESSAGE(r.err().code == domain::ec::sql_failed
                            || r.err().code == domain::ec::sql_timeout,
                          bomb << ": " << r.err().message);
  }
  auto after = own_rss();
  BOOST_CHECK_LT(after - before, 8 * 1024 * 1024);
  auto next = p.exec("SELECT count(*) FROM regions");
  BOOST_CHECK_MESSAGE(next.ok(), (next.ok() ? "" : next.err().message));
}

BOOST_AUTO_TEST_CASE(every_accepted_memory_setting_runs_real_queries) {
  // sql.executorMemoryMb of 32, 48 or 64 (all accepted) used to fail
  // every query needing a little memory: RLIMIT_AS was the whole address
  // space, and the executor's image alone (binary, libraries, ICU data)
  // maps about 70 MiB, so no allocation could grow the heap.
  const std::string queries[] = {
    // The scripted "revenue by channel" query.
    "SELECT o.channel, ROUND(SUM(o.total_cents - COALESCE((SELECT "
    "SUM(r.amount_cents) FROM refunds r WHERE r.order_id = o.order_id), 0)) "
    "/ 100.0, 2) AS revenue_eur FROM orders o WHERE o.status IN ('paid', "
    "'partially_refunded', 'refunded') GROUP BY o.channel ORDER BY "
    "revenue_eur DESC",
    // A few MiB of sorter and distinct set.
    "SELECT count(DISTINCT order_id || '-' || product_id) FROM order_items",
    "SELECT count(*) FROM (SELECT order_number, customer_id FROM orders "
    "ORDER BY order_number DESC)",
  };
  auto smallest = smallest_accepted_memory_mb();
  for (int64_t mb : {smallest, smallest + 16, smallest + 32}) {
    auto s = settings_for(false);
    s.exec.memory_mb = mb;
    auto proc = data::executor_process::spawn(s.exec);
    BOOST_REQUIRE_MESSAGE(
      proc.ok(), mb << " MiB: " << (proc.ok() ? "" : proc.err().message));
    for (auto& sql : queries) {
      sql_exec_request req;
      req.sql = sql;
      req.max_rows = 10;
      auto r = proc->run(req, 10s);
      BOOST_CHECK_MESSAGE(r.ok(), mb << " MiB: " << sql << ": "
                                     << (r.ok() ? "" : r.err().message));
      if (r.ok())
        BOOST_CHECK_EQUAL(direct(sql).size(),
                          static_cast<size_t>(r->row_count));
    }
  }
}

BOOST_AUTO_TEST_CASE(memory_runs_out_as_an_error_with_stderr_in_a_file) {
  // With the server's log in a file, the allocator's message on a failed
  // allocation ("tcmalloc: allocation failed") is a write to a regular
  // file, which RLIMIT_FSIZE=0 turned into SIGXFSZ: the executor died
  // instead of the statement failing. The limit is the smallest accepted
  // one and below the SQLite heap limit, so the allocator fails first.
  test::temp_dir dir{"candor-sandbox-stderr"};
  auto s = settings_for(true);
  s.exec.memory_mb = smallest_accepted_memory_mb();
  s.exec.heap_limit_mb = 256;
  domain::outcome<data::executor_process> proc
    = domain::make_error(domain::ec::internal, "not started");
  {
    stderr_to_file redirect{dir.file("server.log")};
    proc = data::executor_process::spawn(s.exec);
  }
  BOOST_REQUIRE_MESSAGE(proc.ok(), (proc.ok() ? "" : proc.err().message));
  auto pid = proc->pid();
  sql_exec_request req;
  req.sql = "SELECT count(*) FROM (SELECT randomblob(90000) FROM orders "
            "ORDER BY 1)";
  req.max_rows = 10;
  auto bomb = proc->run(req, 10s);
  BOOST_REQUIRE(!bomb.ok());
  BOOST_CHECK_MESSAGE(bomb.err().code == domain::ec::sql_failed,
                      bomb.err().message);
  BOOST_CHECK_NE(bomb.err().message.find("out of memory"), std::string::npos);
  BOOST_CHECK_NE(bomb.err().message.find("sql.executorMemoryMb"),
                 std::string::npos);
  // The same process serves the next statement.
  BOOST_CHECK(proc->running());
  BOOST_CHECK_EQUAL(proc->pid(), pid);
  req.sql = "SELECT count(*) FROM regions";
  auto next = proc->run(req, 10s);
  BOOST_CHECK_MESSAGE(next.ok(), (next.ok() ? "" : next.err().message));
}

BOOST_AUTO_TEST_CASE(an_executor_killed_by_its_cpu_limit_names_the_limit) {
  auto s = settings_for(true);
  s.exec.cpu_seconds = 1;
  auto proc = data::executor_process::spawn(s.exec);
  BOOST_REQUIRE_MESSAGE(proc.ok(), (proc.ok() ? "" : proc.err().message));
  sql_exec_request req;
  req.sql = runaway;
  req.max_rows = 10;
  // A deadline well past the CPU limit: SIGXCPU comes first.
  auto r = proc->run(req, 20s);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
  BOOST_CHECK_MESSAGE(data::is_executor_limit(r.err()), r.err().message);
  for (auto* part : {"CPU time limit", "RLIMIT_CPU 1 s",
                     "sql.executorCpuSeconds", "SIGXCPU"})
    BOOST_CHECK_MESSAGE(r.err().message.find(part) != std::string::npos,
                        r.err().message);
  BOOST_CHECK(!proc->running());
  // A kill from outside names no limit.
  auto other = data::executor_process::spawn(s.exec);
  BOOST_REQUIRE(other.ok());
  auto victim = other->pid();
  std::thread killer{[victim] {
    std::this_thread::sleep_for(200ms);
    ::kill(victim, SIGKILL);
  }};
  auto killed = other->run(req, 20s);
  killer.join();
  BOOST_REQUIRE(!killed.ok());
  BOOST_CHECK(!data::is_executor_limit(killed.err()));
  BOOST_CHECK_NE(killed.err().message.find("signal 9"), std::string::npos);
}

/// About 1.4 s of CPU on the shared database: long enough to be hit
/// mid-statement, short enough to finish when run again.
constexpr const char* slow_but_finite
  = "SELECT count(*) FROM orders a JOIN regions b JOIN regions c ON "
    "b.country_code < c.country_code JOIN regions d ON d.country_code < 'DE' "
    "WHERE a.total_cents + length(b.country_name) > 0";

/// Waits until exactly one executor of `p` is busy and returns its pid.
pid_t busy_executor(pool& p, pid_t other_than = 0) {
  pid_t found = 0;
  bool ok = p.wait_health([&](const boost::json::object&) {
    auto busy = p.busy_pids();
    found = busy.size() == 1 ? busy[0] : 0;
    return found > 0 && found != other_than;
  });
  return ok ? found : 0;
}

BOOST_AUTO_TEST_CASE(a_statement_whose_executor_is_killed_runs_again) {
  // Read-only, so the sandbox runs it once more on a healthy executor:
  // the caller gets its rows, not "try again".
  pool p{settings_for(false, 2, 20000)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto expected = p.exec(slow_but_finite);
  BOOST_REQUIRE_MESSAGE(expected.ok(),
                        (expected.ok() ? "" : expected.err().message));
  auto slow = p.exec_async(slow_but_finite);
  auto victim = busy_executor(p);
  BOOST_REQUIRE(victim > 0);
  BOOST_REQUIRE_EQUAL(::kill(victim, SIGKILL), 0);
  auto r = slow.get();
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_REQUIRE_EQUAL(r->rows.size(), 1u);
  BOOST_REQUIRE_EQUAL(expected->rows.size(), 1u);
  BOOST_CHECK_GT(expected->rows[0][0].i, 0);
  BOOST_CHECK_EQUAL(r->rows[0][0].i, expected->rows[0][0].i);
  for (int i = 0; i < 10; ++i)
    BOOST_CHECK(p.exec("SELECT count(*) FROM products").ok());
  BOOST_CHECK(p.wait_health([&](const boost::json::object& h) {
    return pool_full(h) && num(h, "crashes") == 1 && num(h, "retries") == 1
           && num(h, "kills") == 0;
  }));
  auto pids = executor_children();
  BOOST_CHECK_EQUAL(pids.size(), 2u);
  BOOST_CHECK(pids.count(victim) == 0);
}

BOOST_AUTO_TEST_CASE(a_statement_whose_executor_is_stopped_runs_again) {
  // SIGSTOP: the executor neither answers nor dies. At the deadline the
  // sandbox finds it stopped (not slow), kills it and runs the statement
  // again on a healthy executor.
  pool p{settings_for(false, 2, 4000)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto slow = p.exec_async(slow_but_finite);
  auto victim = busy_executor(p);
  BOOST_REQUIRE(victim > 0);
  BOOST_REQUIRE_EQUAL(::kill(victim, SIGSTOP), 0);
  auto r = slow.get();
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK(p.wait_health([&](const boost::json::object& h) {
    return pool_full(h) && num(h, "retries") == 1 && num(h, "kills") == 0;
  }));
  BOOST_CHECK(executor_children().count(victim) == 0);
}

BOOST_AUTO_TEST_CASE(a_statement_is_retried_only_once) {
  // Its second executor lost too: the caller gets the failure (a
  // statement that kills every executor it runs on is not retried on and
  // on), and only that statement fails.
  pool p{settings_for(true, 2, 20000)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto slow = p.exec_async(runaway);
  auto first = busy_executor(p);
  BOOST_REQUIRE(first > 0);
  BOOST_REQUIRE_EQUAL(::kill(first, SIGKILL), 0);
  auto second = busy_executor(p, first);
  BOOST_REQUIRE(second > 0);
  BOOST_REQUIRE_EQUAL(::kill(second, SIGKILL), 0);
  auto r = slow.get();
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
  BOOST_CHECK_NE(r.err().message.find("signal 9"), std::string::npos);
  for (int i = 0; i < 10; ++i)
    BOOST_CHECK(p.exec("SELECT count(*) FROM products").ok());
  BOOST_CHECK(p.wait_health([&](const boost::json::object& h) {
    return pool_full(h) && num(h, "crashes") == 2 && num(h, "retries") == 1;
  }));
}

BOOST_AUTO_TEST_CASE(a_statement_that_hits_an_executor_limit_is_not_retried) {
  auto s = settings_for(true, 2, 20000);
  s.exec.cpu_seconds = 1;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto r = p.exec(runaway);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK_MESSAGE(data::is_executor_limit(r.err()), r.err().message);
  BOOST_CHECK(p.wait_health([&](const boost::json::object& h) {
    return pool_full(h) && num(h, "retries") == 0;
  }));
}

BOOST_AUTO_TEST_CASE(an_executor_killed_while_idle_is_replaced_first) {
  pool p{settings_for(true, 1)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[0].at("pid").as_int64());
  BOOST_REQUIRE_EQUAL(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(50ms);
  auto r = p.exec("SELECT count(*) FROM orders");
  BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto h = p.health();
  BOOST_CHECK_EQUAL(num(h, "crashes"), 1);
  BOOST_CHECK_EQUAL(num(h, "respawns"), 1);
}

BOOST_AUTO_TEST_CASE(an_executor_killed_while_idle_is_replaced_unasked) {
  auto s = settings_for(true, 2);
  s.idle_check = 50ms;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[1].at("pid").as_int64());
  BOOST_REQUIRE_EQUAL(::kill(pid, SIGKILL), 0);
  BOOST_CHECK(p.wait_health([pid](const boost::json::object& h) {
    auto now = h.at("executors").as_array()[1].at("pid").as_int64();
    return pool_full(h) && num(h, "crashes") == 1 && now != pid && now > 0;
  }));
  BOOST_CHECK_EQUAL(executor_children().size(), 2u);
}

BOOST_AUTO_TEST_CASE(executors_are_recycled_before_their_cpu_limit) {
  // RLIMIT_CPU of 1 s over the life of a process; each statement burns
  // about 0.17 s of CPU, so without recycling the process would die of
  // SIGXCPU within these 16 statements.
  auto s = settings_for(false, 1);
  s.exec.cpu_seconds = 1;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  for (int i = 0; i < 16; ++i) {
    auto r = p.exec("SELECT count(*) FROM orders a JOIN regions b JOIN "
                    "regions c ON b.country_code < c.country_code WHERE "
                    "a.total_cents + length(b.country_name) > 0");
    BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  }
  BOOST_CHECK(p.wait_health(pool_full));
  auto h = p.health();
  BOOST_CHECK_EQUAL(num(h, "crashes"), 0);
  BOOST_CHECK_GE(num(h, "recycles"), 1);
}

BOOST_AUTO_TEST_CASE(writes_are_impossible_even_without_the_authorizer) {
  test::temp_dir dir{"candor-sandbox-writes"};
  auto before = data::sales_fingerprint(shared_db());
  BOOST_REQUIRE(before.ok());
  pool p{settings_for(true, 1)};
  std::vector<std::string> writes = {
    "VACUUM INTO '" + dir.file("copy.db") + "'",
    "ATTACH '" + dir.file("new.db") + "' AS extra",
    "CREATE TABLE t(x)",
    "INSERT INTO regions (country_code, country_name, shipping_zone, in_eu) "
    "VALUES ('XX', 'X', 'A', 0)",
    "UPDATE orders SET total_cents = 0",
    "DELETE FROM orders",
    "DROP TABLE orders",
    "WITH x AS (SELECT 1) DELETE FROM orders",
    "PRAGMA writable_schema = 1",
  };
  for (auto& w : writes) {
    auto r = p.exec(w);
    // Statements that returned normally must have changed nothing (checked
    // below); a write verb must fail outright.
    if (w.rfind("PRAGMA", 0) != 0)
      BOOST_CHECK_MESSAGE(!r.ok(), w);
  }
  // Even with query_only switched off, the connection is read-only.
  BOOST_CHECK(p.exec("PRAGMA query_only = 0").ok());
  BOOST_CHECK(!p.exec("DELETE FROM orders").ok());
  BOOST_CHECK(std::filesystem::is_empty(dir.path));
  auto after = data::sales_fingerprint(shared_db());
  BOOST_REQUIRE(after.ok());
  BOOST_CHECK_EQUAL(*before, *after);
}

BOOST_AUTO_TEST_CASE(the_seccomp_filter_is_installed_and_denies_open) {
  pool p{settings_for(false, 1)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[0].at("pid").as_int64());
  BOOST_CHECK_EQUAL(proc_status_field(pid, "Seccomp"), "2");
  BOOST_CHECK_EQUAL(proc_status_field(pid, "NoNewPrivs"), "1");
  // Only stdin, stdout, stderr, the socket and the database (the running
  // and the checking connection) are open.
  std::set<int> fds;
  for (auto& e : std::filesystem::directory_iterator(
         "/proc/" + std::to_string(pid) + "/fd"))
    fds.insert(std::stoi(e.path().filename().string()));
  BOOST_CHECK((fds == std::set<int>{0, 1, 2, 3, 4, 5}));
  // A fully set-up executor cannot create a file.
  test::temp_dir dir{"candor-sandbox-probe"};
  auto s = settings_for(false);
  auto probe = data::executor_process::probe_open(s.exec, dir.file("x"));
  BOOST_REQUIRE_MESSAGE(probe.ok(), (probe.ok() ? "" : probe.err().message));
  auto report = boost::json::parse(*probe).as_object();
  BOOST_CHECK_EQUAL(report.at("probe").as_string(), "denied");
  BOOST_CHECK_EQUAL(report.at("errno").as_int64(), EPERM);
  BOOST_CHECK(!std::filesystem::exists(dir.file("x")));
}

BOOST_AUTO_TEST_SUITE_END()
