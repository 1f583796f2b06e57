// The SQL sandbox's PostgreSQL session on a real warehouse, as the reading
// role: cells typed as the SQLite executor reports them, rows counted past
// max_rows, the READ ONLY transaction and the role's grants refusing a
// write, one statement per call, the deadline cancelling on the server
// (the connection kept), a server-side kill and the stop signal.

#include "data/pg/session.hpp"

#include <chrono>
#include <cmath>
#include <thread>

#include <sys/eventfd.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "data/pg/connection.hpp"
#include "data/sql/executor.hpp"
#include "tests/support/pg_warehouse.hpp"

using namespace candor;
using namespace std::chrono_literals;
using domain::cell;

namespace {

data::pg::session open_reader() {
  auto s = data::pg::session::open(test::shared_pg_warehouse().reader_dsn, 5s);
  BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.err().message));
  return std::move(*s);
}

domain::sql_exec_request statement(std::string sql, int32_t max_rows = 200) {
  domain::sql_exec_request req;
  req.sql = std::move(sql);
  req.max_rows = max_rows;
  return req;
}

bool starts(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// Statements of the reading role still running on the server.
int64_t active_reader_statements() {
  auto admin = data::pg::connection::open(test::shared_pg_warehouse().admin_dsn);
  BOOST_REQUIRE(admin.ok());
  auto r = admin->query("SELECT count(*) FROM pg_stat_activity WHERE usename "
                        "= 'candor_reader' AND state = 'active'");
  BOOST_REQUIRE(r.ok());
  return std::stoll(*r->values.at(0).at(0));
}

/// Long enough to need cancelling: a self-join of order lines.
const char* slow_sql = "SELECT count(*) FROM order_items a JOIN order_items b "
                       "ON a.quantity < b.quantity";

} // namespace

BOOST_AUTO_TEST_SUITE(data_pg_session)

BOOST_AUTO_TEST_CASE(cells_are_typed_as_the_sqlite_executor_reports_them) {
  BOOST_TEST(data::pg::cell_from_text(16, "t", 1).i == 1);
  BOOST_TEST(data::pg::cell_from_text(16, "f", 1).kind == cell::integer);
  auto big = data::pg::cell_from_text(1700, "12345678901234", 14);
  BOOST_TEST(big.kind == cell::integer);
  BOOST_TEST(big.i == 12345678901234);
  auto frac = data::pg::cell_from_text(1700, "12.50", 5);
  BOOST_TEST(frac.kind == cell::real);
  BOOST_TEST(frac.r == 12.5);
  // Too large for an integer: a real, not a wrapped number.
  auto huge = data::pg::cell_from_text(1700, "99999999999999999999", 20);
  BOOST_TEST(huge.kind == cell::real);
  BOOST_TEST(std::isinf(data::pg::cell_from_text(701, "-Infinity", 9).r));
  BOOST_TEST(data::pg::cell_from_text(17, "\\x0a0b0c", 8).s == "<blob 3 bytes>");
  std::string invalid = "a\xff" "b";
  BOOST_TEST(data::pg::cell_from_text(25, invalid.data(), invalid.size()).s
             == "a\xEF\xBF\xBD" "b");
  auto s = open_reader();
  auto r = s.run(statement(
                   "SELECT true AS b, CAST(2 AS SMALLINT) AS s, "
                   "SUM(CAST(quantity AS BIGINT)) AS q, AVG(quantity) AS a, "
                   "NULL AS n, repeat('x', 1500) AS t FROM order_items"),
                 5s);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_TEST(r->columns
             == (std::vector<std::string>{"b", "s", "q", "a", "n", "t"}));
  BOOST_REQUIRE_EQUAL(r->rows.size(), 1u);
  auto& row = r->rows[0];
  BOOST_TEST(row[0].kind == cell::integer);
  BOOST_TEST(row[0].i == 1);
  BOOST_TEST(row[1].i == 2);
  BOOST_TEST(row[2].kind == cell::integer); // numeric without a fraction
  BOOST_TEST(row[2].i > 0);
  BOOST_TEST(row[3].kind == cell::real);
  BOOST_TEST(row[4].kind == cell::null);
  // Cut at max_cell_chars code points, with the ellipsis.
  BOOST_TEST(row[5].s.size() == data::max_cell_chars + 3);
}

BOOST_AUTO_TEST_CASE(rows_past_max_rows_are_counted_not_kept) {
  auto s = open_reader();
  auto r = s.run(statement("SELECT order_id FROM orders ORDER BY order_id "
                           "LIMIT 50",
                           10),
                 5s);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->rows.size() == 10u);
  BOOST_TEST(r->row_count == 50);
  BOOST_TEST(r->truncated);
  BOOST_TEST(r->rows[9][0].i == 10);
}

BOOST_AUTO_TEST_CASE(a_write_is_refused_by_read_only_and_by_the_grants) {
  auto s = open_reader();
  auto r = s.run(statement("DELETE FROM orders"), 5s);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::sql_failed);
  BOOST_TEST(starts(r.err().message, "postgres 25006:"), r.err().message);
  // Read-write, the role's privileges still refuse it.
  auto probe = s.run_read_write_probe(statement("DELETE FROM orders"), 5s);
  BOOST_REQUIRE(!probe.ok());
  BOOST_TEST(starts(probe.err().message, "postgres 42501:"),
             probe.err().message);
  // A personal column is not granted either.
  auto email = s.run(statement("SELECT email FROM customers LIMIT 1"), 5s);
  BOOST_REQUIRE(!email.ok());
  BOOST_TEST(starts(email.err().message, "postgres 42501:"),
             email.err().message);
  // The session goes on.
  BOOST_TEST(s.running());
  BOOST_TEST(s.run(statement("SELECT 1 AS one"), 5s).ok());
}

BOOST_AUTO_TEST_CASE(one_statement_per_call_whatever_the_text) {
  auto s = open_reader();
  auto r = s.run(statement("SELECT 1; SELECT 2"), 5s);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::sql_failed);
  BOOST_TEST(starts(r.err().message, "postgres 42601:"), r.err().message);
  BOOST_TEST(s.run(statement("SELECT 1 AS one"), 5s).ok());
  auto nul = s.run(statement(std::string{"SELECT 1\0", 9}), 5s);
  BOOST_TEST(nul.err().code == domain::ec::invalid_request);
}

BOOST_AUTO_TEST_CASE(the_deadline_cancels_on_the_server_and_keeps_the_session) {
  auto s = open_reader();
  auto t0 = std::chrono::steady_clock::now();
  auto r = s.run(statement(slow_sql), 300ms);
  auto took = std::chrono::steady_clock::now() - t0;
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::sql_timeout);
  BOOST_TEST((took < 300ms + data::pg::session::cancel_grace));
  BOOST_TEST(active_reader_statements() == 0);
  BOOST_TEST(s.running());
  auto next = s.run(statement("SELECT count(*) AS n FROM regions"), 5s);
  BOOST_REQUIRE(next.ok());
  BOOST_TEST(next->rows[0][0].i == 18);
}

BOOST_AUTO_TEST_CASE(a_backend_killed_on_the_server_is_lost_not_hung) {
  auto s = open_reader();
  auto pid = s.backend_pid();
  BOOST_REQUIRE(pid > 0);
  std::thread killer{[pid] {
    std::this_thread::sleep_for(200ms);
    auto admin
      = data::pg::connection::open(test::shared_pg_warehouse().admin_dsn);
    if (admin)
      (void)admin->query("SELECT pg_terminate_backend(" + std::to_string(pid)
                         + ")");
  }};
  auto r = s.run(statement(slow_sql), 10s);
  killer.join();
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::sql_executor_failed,
             r.err().message);
  BOOST_TEST(!s.running());
}

BOOST_AUTO_TEST_CASE(the_stop_signal_ends_a_running_statement) {
  auto s = open_reader();
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  BOOST_REQUIRE(fd >= 0);
  std::thread waker{[fd] {
    std::this_thread::sleep_for(200ms);
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
  }};
  auto t0 = std::chrono::steady_clock::now();
  auto r = s.run(statement(slow_sql), 20s, fd);
  waker.join();
  ::close(fd);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::shutting_down);
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 5s));
  BOOST_TEST(!s.running());
}

BOOST_AUTO_TEST_CASE(a_server_that_is_not_there_fails_within_the_timeout) {
  auto t0 = std::chrono::steady_clock::now();
  auto s = data::pg::session::open("host=/nonexistent-candor-dir", 2s);
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.err().code == domain::ec::sql_executor_failed);
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 3s));
}

BOOST_AUTO_TEST_SUITE_END()
