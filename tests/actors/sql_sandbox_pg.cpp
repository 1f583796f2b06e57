// The SQL sandbox on the PostgreSQL warehouse: a bounded pool of sessions
// of the reading role, statements in parallel, a deadline that cancels on
// the server while the other session goes on, and sessions killed on the
// server replaced without losing a statement.

#include "tests/support/sql_sandbox_pool.hpp"

#include "data/pg/connection.hpp"
#include "tests/support/pg_warehouse.hpp"

using namespace candor;
using namespace candor::test;
using namespace candor::test::sql_sandbox_support;
using namespace std::chrono_literals;

namespace {

actors::sandbox_settings pg_settings(int32_t pool_size = 2) {
  actors::sandbox_settings s;
  s.backend = "postgres";
  s.postgres_dsn = shared_pg_warehouse().reader_dsn;
  s.pool_size = pool_size;
  s.deadline_ms = 5000;
  s.respawn_backoff = 100ms;
  return s;
}

/// Ends every session of the reading role on the server.
int64_t terminate_reader_sessions() {
  auto admin = data::pg::connection::open(shared_pg_warehouse().admin_dsn);
  BOOST_REQUIRE(admin.ok());
  auto r = admin->query(
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
    "WHERE usename = 'candor_reader'");
  BOOST_REQUIRE(r.ok());
  return std::stoll(*r->values.at(0).at(0));
}

const char* slow_sql = "SELECT count(*) FROM order_items a JOIN order_items b "
                       "ON a.quantity < b.quantity";

} // namespace

BOOST_AUTO_TEST_SUITE(actors_sql_sandbox_pg)

BOOST_AUTO_TEST_CASE(the_pool_runs_statements_on_the_warehouse) {
  pool p{pg_settings()};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto h = p.health();
  BOOST_TEST(num(h, "size") == 2);
  // The executors' pids are the server processes of the sessions.
  for (auto& e : h.at("executors").as_array())
    BOOST_TEST(e.at("pid").as_int64() > 0);
  std::vector<std::future<exec_outcome>> runs;
  for (int i = 0; i < 6; ++i)
    runs.push_back(p.exec_async("SELECT count(*) AS n FROM orders WHERE "
                                "channel = 'web'"));
  int64_t first = -1;
  for (auto& f : runs) {
    auto r = f.get();
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    if (first < 0)
      first = r->rows.at(0).at(0).i;
    BOOST_TEST(r->rows.at(0).at(0).i == first);
  }
  // The same count as the SQLite file holds.
  BOOST_TEST(std::to_string(first)
             == direct("SELECT count(*) FROM orders WHERE channel = 'web'")
                  .at(0)
                  .at(0));
  BOOST_TEST(num(p.health(), "served") == 6);
}

BOOST_AUTO_TEST_CASE(a_deadline_stops_one_statement_not_the_pool) {
  pool p{pg_settings()};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto slow = p.exec_async(slow_sql, 400);
  auto quick = p.exec("SELECT count(*) AS n FROM regions");
  BOOST_REQUIRE(quick.ok());
  BOOST_TEST(quick->rows.at(0).at(0).i == 18);
  auto r = slow.get();
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::sql_timeout);
  // Cancelled on the server: the session stays and serves again.
  auto after = p.exec("SELECT 1 AS one");
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(num(p.health(), "respawns") == 0);
}

BOOST_AUTO_TEST_CASE(sessions_ended_on_the_server_are_replaced) {
  pool p{pg_settings()};
  BOOST_REQUIRE(p.wait_health(pool_full));
  BOOST_TEST(terminate_reader_sessions() >= 2);
  // Whether a worker notices on its idle check or on its next statement,
  // the statement is answered.
  for (int i = 0; i < 4; ++i) {
    auto r = p.exec("SELECT count(*) AS n FROM regions");
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    BOOST_TEST(r->rows.at(0).at(0).i == 18);
  }
  BOOST_TEST(p.wait_health([](const boost::json::object& h) {
    return pool_full(h) && num(h, "respawns") >= 2;
  }));
}

BOOST_AUTO_TEST_CASE(an_unreachable_warehouse_fails_fast_and_says_so) {
  auto s = pg_settings(1);
  s.postgres_dsn = "host=/nonexistent-candor-dir";
  s.connect_timeout = 1s;
  pool p{s};
  auto r = p.exec("SELECT 1 AS one");
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::sql_executor_failed);
}

BOOST_AUTO_TEST_SUITE_END()
