// The SQL sandbox with CAF's real scheduler and real executor processes
// (the `candor` binary next to the test binary) on a generated sales
// database: results, caps, the executor's own checks, a full queue, restarts
// and clean shutdown. Its process limits: sql_sandbox_limits.cpp.

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

BOOST_AUTO_TEST_SUITE(actors_sql_sandbox)

BOOST_AUTO_TEST_CASE(a_legitimate_query_returns_the_right_rows) {
  pool p{settings_for(false)};
  auto sql = std::string{"SELECT channel, count(*) AS n, sum(total_cents) "
                         "FROM orders GROUP BY channel ORDER BY channel"};
  auto r = p.exec(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto expected = direct(sql);
  BOOST_REQUIRE_EQUAL(r->columns.size(), 3u);
  BOOST_CHECK_EQUAL(r->columns[1], "n");
  BOOST_REQUIRE_EQUAL(r->rows.size(), expected.size());
  BOOST_CHECK(!expected.empty());
  for (size_t i = 0; i < expected.size(); ++i)
    for (size_t j = 0; j < 3; ++j)
      BOOST_CHECK_EQUAL(cell_text(r->rows[i][j]), expected[i][j]);
  BOOST_CHECK_EQUAL(r->row_count, static_cast<int64_t>(expected.size()));
  BOOST_CHECK(!r->truncated);
  BOOST_CHECK_GT(r->elapsed_us, 0);
  BOOST_CHECK(r->rows[0][1].kind == domain::cell::integer);
}

BOOST_AUTO_TEST_CASE(rows_are_capped_and_counted) {
  pool p{settings_for(false)};
  auto r = p.exec("SELECT order_id FROM orders ORDER BY order_id", 0, 7);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->rows.size(), 7u);
  BOOST_CHECK(r->truncated);
  auto total = direct("SELECT count(*) FROM orders");
  BOOST_CHECK_EQUAL(std::to_string(r->row_count), total[0][0]);
  auto first = direct("SELECT min(order_id) FROM orders");
  BOOST_CHECK_EQUAL(cell_text(r->rows[0][0]), first[0][0]);
  // The sandbox's own cap applies to a request that asks for more.
  auto s = settings_for(false);
  s.max_rows = 5;
  pool q{s};
  auto r2 = q.exec("SELECT order_id FROM orders", 0, 1000);
  BOOST_REQUIRE(r2.ok());
  BOOST_CHECK_EQUAL(r2->rows.size(), 5u);
}

BOOST_AUTO_TEST_CASE(long_text_is_cut_on_a_character_boundary) {
  pool p{settings_for(false)};
  auto sql = std::string{"SELECT group_concat('é' || order_number, '') FROM "
                         "(SELECT order_number FROM orders ORDER BY order_id "
                         "LIMIT 200)"};
  auto r = p.exec(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto& s = r->rows.at(0).at(0).s;
  auto full = direct(sql)[0][0];
  BOOST_CHECK_GT(full.size(), 2000u);
  BOOST_CHECK(domain::valid_utf8(s));
  // 1,000 code points and the ellipsis.
  BOOST_CHECK_EQUAL(s, domain::cut_utf8(full, data::max_cell_chars)
                         + "\xE2\x80\xA6");
}

BOOST_AUTO_TEST_CASE(blobs_are_summarised) {
  pool p{settings_for(false)};
  auto r = p.exec("SELECT CAST(order_number AS BLOB) FROM orders ORDER BY "
                  "order_id LIMIT 1");
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto& c = r->rows.at(0).at(0);
  auto len = direct("SELECT length(order_number) FROM orders ORDER BY "
                    "order_id LIMIT 1")[0][0];
  BOOST_CHECK(c.kind == domain::cell::blob);
  BOOST_CHECK_EQUAL(c.s, "<blob " + len + " bytes>");
}

BOOST_AUTO_TEST_CASE(every_kind_of_cell_survives_the_trip) {
  pool p{settings_for(false)};
  auto r = p.exec("SELECT 1e999, -1e999, 0.25, 9223372036854775807, "
                  "-9223372036854775807 - 1, NULL, 'x' FROM regions LIMIT 1");
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto& row = r->rows.at(0);
  BOOST_CHECK(row[0].kind == domain::cell::real && std::isinf(row[0].r)
              && row[0].r > 0);
  BOOST_CHECK(row[1].kind == domain::cell::real && std::isinf(row[1].r)
              && row[1].r < 0);
  BOOST_CHECK_EQUAL(row[2].r, 0.25);
  BOOST_CHECK_EQUAL(row[3].i, INT64_MAX);
  BOOST_CHECK_EQUAL(row[4].i, INT64_MIN);
  BOOST_CHECK(row[5].kind == domain::cell::null);
  BOOST_CHECK_EQUAL(row[6].s, "x");
  BOOST_CHECK_EQUAL(num(p.health(), "crashes"), 0);
}

BOOST_AUTO_TEST_CASE(the_executor_applies_the_authorizer_and_shape_checks) {
  pool p{settings_for(false)};
  auto pii = p.exec("SELECT email FROM customers");
  BOOST_REQUIRE(!pii.ok());
  BOOST_CHECK(pii.err().code == domain::ec::sql_failed);
  BOOST_CHECK_NE(pii.err().message.find("customers.email"), std::string::npos);
  auto two = p.exec("SELECT 1 FROM orders; SELECT 2 FROM orders");
  BOOST_REQUIRE(!two.ok());
  BOOST_CHECK_MESSAGE(two.err().message.find("multiple_statements")
                        != std::string::npos,
                      two.err().message);
  auto write = p.exec("DELETE FROM orders");
  BOOST_REQUIRE(!write.ok());
  BOOST_CHECK(write.err().code == domain::ec::sql_failed);
  // G1: a join with USING reads customers.email without a column read the
  // authorizer could see; the executor's bytecode audit refuses it.
  auto g1 = p.exec("SELECT count(*) FROM (SELECT 'a@b.example' AS email) g "
                   "JOIN customers USING (email)");
  BOOST_REQUIRE(!g1.ok());
  BOOST_CHECK(g1.err().code == domain::ec::sql_failed);
  auto nul = p.exec(std::string{"SELECT 1 FROM orders \0; DROP TABLE x", 36});
  BOOST_REQUIRE(!nul.ok());
  BOOST_CHECK_NE(nul.err().message.find("NUL"), std::string::npos);
  auto empty = p.exec("");
  BOOST_REQUIRE(!empty.ok());
  BOOST_CHECK(empty.err().code == domain::ec::invalid_request);
  // A refusal leaves the executor alive.
  auto h = p.health();
  BOOST_CHECK_EQUAL(num(h, "crashes"), 0);
  BOOST_CHECK_EQUAL(num(h, "respawns"), 0);
  BOOST_CHECK(p.exec("SELECT count(*) FROM orders").ok());
}

BOOST_AUTO_TEST_CASE(a_repeated_statement_runs_its_kept_program_afresh) {
  // One executor, so every repeat lands on the process that kept the
  // statement prepared.
  pool p{settings_for(false, 1)};
  auto sql = std::string{"SELECT channel, count(*) FROM orders GROUP BY "
                         "channel ORDER BY channel"};
  auto expected = direct(sql);
  BOOST_REQUIRE(!expected.empty());
  for (int round = 0; round < 3; ++round) {
    auto r = p.exec(sql);
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    BOOST_REQUIRE_EQUAL(r->rows.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      BOOST_CHECK_EQUAL(cell_text(r->rows[i][1]), expected[i][1]);
  }
  // Cut short by the row cap, the statement is reset: the next run starts
  // from the first row and takes its own cap.
  auto ids = std::string{"SELECT order_id FROM orders ORDER BY order_id"};
  auto first = p.exec(ids, 0, 3);
  BOOST_REQUIRE(first.ok());
  BOOST_CHECK(first->truncated);
  BOOST_CHECK_EQUAL(first->rows.size(), 3u);
  auto again = p.exec(ids, 0, 5);
  BOOST_REQUIRE(again.ok());
  BOOST_CHECK_EQUAL(again->rows.size(), 5u);
  BOOST_CHECK_EQUAL(cell_text(again->rows[0][0]), cell_text(first->rows[0][0]));
  BOOST_CHECK_EQUAL(again->row_count, first->row_count);
  // A statement that fails while it runs (an integer overflow on the
  // fourth row) fails the same way every time and leaves the executor
  // serving.
  auto overflow = std::string{
    "SELECT CASE WHEN order_id > (SELECT min(order_id) + 2 FROM orders) THEN "
    "abs(-9223372036854775807 - 1) ELSE order_id END FROM orders ORDER BY "
    "order_id"};
  for (int round = 0; round < 2; ++round) {
    auto r = p.exec(overflow);
    BOOST_REQUIRE(!r.ok());
    BOOST_CHECK(r.err().code == domain::ec::sql_failed);
    BOOST_CHECK_MESSAGE(r.err().message.find("overflow") != std::string::npos,
                        r.err().message);
  }
  // A refused statement is refused again: nothing refused is kept.
  for (int round = 0; round < 2; ++round) {
    auto pii = p.exec("SELECT email FROM customers");
    BOOST_REQUIRE(!pii.ok());
    BOOST_CHECK_NE(pii.err().message.find("customers.email"),
                   std::string::npos);
  }
  // More distinct statements than an executor keeps: each still right.
  for (int i = 0; i < 40; ++i) {
    auto q = "SELECT count(*) FROM orders WHERE order_id % 41 = "
             + std::to_string(i);
    auto r = p.exec(q);
    BOOST_REQUIRE(r.ok());
    BOOST_CHECK_EQUAL(cell_text(r->rows.at(0).at(0)), direct(q)[0][0]);
  }
  auto r = p.exec(sql);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(cell_text(r->rows.at(0).at(1)), expected[0][1]);
  BOOST_CHECK_EQUAL(num(p.health(), "crashes"), 0);
}

BOOST_AUTO_TEST_CASE(a_full_queue_is_overloaded) {
  auto s = settings_for(true, 1);
  s.queue_limit = 2;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto slow = p.exec_async(runaway, 600);
  BOOST_REQUIRE(p.wait_health(
    [](const boost::json::object& h) { return num(h, "busy") == 1; }));
  auto q1 = p.exec_async("SELECT 1 FROM regions LIMIT 1");
  auto q2 = p.exec_async("SELECT 2 FROM regions LIMIT 1");
  BOOST_REQUIRE(p.wait_health(
    [](const boost::json::object& h) { return num(h, "queued") == 2; }));
  auto over = p.exec("SELECT 3 FROM regions LIMIT 1");
  BOOST_REQUIRE(!over.ok());
  BOOST_CHECK(over.err().code == domain::ec::overloaded);
  BOOST_CHECK(slow.get().err().code == domain::ec::sql_timeout);
  BOOST_CHECK(q1.get().ok());
  BOOST_CHECK(q2.get().ok());
  BOOST_CHECK_EQUAL(num(p.health(), "rejected"), 1);
}

BOOST_AUTO_TEST_CASE(a_missing_database_fails_fast) {
  auto s = settings_for(false, 1);
  s.exec.db_path = "/nonexistent/sales.db";
  pool p{s};
  BOOST_REQUIRE(p.wait_health([](const boost::json::object& h) {
    return h.at("executors").as_array()[0].at("state").as_string() == "down";
  }));
  auto r = p.exec("SELECT 1");
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
}

BOOST_AUTO_TEST_CASE(a_slot_whose_restart_failed_comes_back) {
  // The executor dies while idle and cannot be restarted at first (its
  // database is gone): that statement fails, and the slot must keep
  // retrying instead of staying lost once the database is back.
  test::temp_dir dir{"candor-sandbox-restart"};
  auto path = dir.file("sales.db");
  std::filesystem::copy_file(shared_db(), path);
  auto s = settings_for(false, 1);
  s.exec.db_path = path;
  s.idle_check = 60s; // only the statement notices the death
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[0].at("pid").as_int64());
  std::filesystem::rename(path, path + ".away");
  BOOST_REQUIRE_EQUAL(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(50ms);
  auto r = p.exec("SELECT count(*) FROM orders");
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
  std::filesystem::rename(path + ".away", path);
  BOOST_CHECK(p.wait_health(pool_full));
  auto again = p.exec("SELECT count(*) FROM orders");
  BOOST_CHECK_MESSAGE(again.ok(), (again.ok() ? "" : again.err().message));
}

BOOST_AUTO_TEST_CASE(shutdown_leaves_no_children) {
  std::set<pid_t> seen;
  {
    pool p{settings_for(true, 2)};
    BOOST_REQUIRE(p.wait_health(pool_full));
    // One executor busy with a runaway statement at shutdown.
    auto slow = p.exec_async(runaway, 30000);
    BOOST_REQUIRE(p.wait_health(
      [](const boost::json::object& h) { return num(h, "busy") == 1; }));
    seen = executor_children();
    BOOST_CHECK_EQUAL(seen.size(), 2u);
    auto start = std::chrono::steady_clock::now();
    p.stop();
    BOOST_CHECK_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  BOOST_CHECK(executor_children().empty());
  for (auto pid : seen)
    BOOST_CHECK(!std::filesystem::exists("/proc/" + std::to_string(pid)));
}

BOOST_AUTO_TEST_SUITE_END()
