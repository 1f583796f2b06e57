// Tests of the SQLite wrapper: binding and reading, errors as values,
// transactions, busy timeouts and the allocation budget.

#include "data/sqlite.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;

namespace {

using candor::test::temp_dir;

database open_memory() {
  auto db = database::open(":memory:");
  BOOST_REQUIRE_MESSAGE(db.ok(), (db.ok() ? "" : db.err().message));
  return std::move(*db);
}

statement prepare(database& db, std::string_view sql) {
  auto stmt = db.prepare(sql);
  BOOST_REQUIRE_MESSAGE(stmt.ok(), (stmt.ok() ? "" : stmt.err().message));
  return std::move(*stmt);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_sqlite)

BOOST_AUTO_TEST_CASE(allocation_budget_bounds_one_thread_only) {
  // tests/main.cpp installs it, as candor's main does.
  BOOST_REQUIRE(allocation_budget_installed());
  BOOST_TEST(!install_allocation_budget()); // idempotent
  auto db = database::open(":memory:");
  BOOST_REQUIRE(db.ok());
  const std::string big = "SELECT length(zeroblob(1)) FROM (SELECT 1) "
                          "WHERE '"
                          + std::string(4 << 20, 'x') + "' <> ''";
  {
    allocation_budget budget{1 << 20};
    auto st = db->prepare(big);
    BOOST_TEST(!st.ok());
    BOOST_TEST(budget.exceeded());
    BOOST_TEST(budget.used() > (1 << 20));
  }
  {
    allocation_budget budget{64 << 20};
    BOOST_TEST(db->prepare(big).ok());
    BOOST_TEST(!budget.exceeded());
    BOOST_TEST(budget.used() > (4 << 20));
  }
  // Outside a budget, and on another thread during one, nothing is
  // counted or refused.
  BOOST_TEST(db->prepare(big).ok());
  allocation_budget tiny{1};
  bool other_ok = false;
  std::thread t{[&] {
    auto other = database::open(":memory:");
    other_ok = other.ok() && other->prepare(big).ok();
  }};
  t.join();
  BOOST_TEST(other_ok);
  BOOST_TEST(!tiny.exceeded());
}

BOOST_AUTO_TEST_CASE(binds_and_reads_every_type) {
  auto db = open_memory();
  BOOST_REQUIRE(!db.exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n)"));
  auto ins = prepare(db, "INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
  BOOST_TEST(ins.parameter_count() == 4);
  BOOST_TEST(!ins.read_only());
  BOOST_REQUIRE(!ins.bind_int64(1, int64_t{1} << 40));
  BOOST_REQUIRE(!ins.bind_double(2, 0.25));
  // Embedded NUL and non-ASCII bytes survive: lengths are explicit.
  BOOST_REQUIRE(!ins.bind_text(3, std::string_view{"a\0b\xc3\xa9", 5}));
  BOOST_REQUIRE(!ins.bind_null(4));
  BOOST_REQUIRE(!ins.run());
  BOOST_TEST(db.changes() == 1);
  BOOST_TEST(db.last_insert_rowid() == 1);

  auto sel = prepare(db, "SELECT i, r, s, n FROM t");
  BOOST_TEST(sel.read_only());
  BOOST_TEST(sel.column_count() == 4);
  BOOST_TEST(sel.column_name(2) == "s");
  auto res = sel.step();
  BOOST_REQUIRE(res.ok());
  BOOST_REQUIRE(*res == step_result::row);
  BOOST_TEST(sel.column_type(0) == SQLITE_INTEGER);
  BOOST_TEST(sel.column_int64(0) == int64_t{1} << 40);
  BOOST_TEST(sel.column_type(1) == SQLITE_FLOAT);
  BOOST_TEST(sel.column_double(1) == 0.25);
  BOOST_TEST(sel.column_type(2) == SQLITE_TEXT);
  BOOST_TEST((sel.column_text(2) == std::string{"a\0b\xc3\xa9", 5}));
  BOOST_TEST(sel.is_null(3));
  BOOST_TEST(sel.column_text(3) == "");
  res = sel.step();
  BOOST_REQUIRE(res.ok());
  BOOST_TEST((*res == step_result::done));
}

BOOST_AUTO_TEST_CASE(empty_text_is_not_null) {
  auto db = open_memory();
  auto sel = prepare(db, "SELECT ?1 IS NULL, length(?1)");
  BOOST_REQUIRE(!sel.bind_text(1, std::string_view{}));
  auto res = sel.step();
  BOOST_REQUIRE(res.ok() && *res == step_result::row);
  BOOST_TEST(sel.column_int64(0) == 0);
  BOOST_TEST(sel.column_int64(1) == 0);
}

BOOST_AUTO_TEST_CASE(rebinding_after_a_step_resets_and_clears) {
  auto db = open_memory();
  BOOST_REQUIRE(!db.exec("CREATE TABLE t (a INTEGER, b TEXT)"));
  auto ins = prepare(db, "INSERT INTO t VALUES (?1, ?2)");
  ins.bind_int64(1, 1);
  ins.bind_text(2, "one");
  BOOST_REQUIRE(!ins.run());
  // Re-use without an explicit reset: the first bind starts afresh, so the
  // unbound ?2 is NULL rather than the previous "one".
  ins.bind_int64(1, 2);
  BOOST_REQUIRE(!ins.run());
  auto sel = prepare(db, "SELECT a, b FROM t ORDER BY a");
  auto res = sel.step();
  BOOST_REQUIRE(res.ok() && *res == step_result::row);
  BOOST_TEST(sel.column_int64(0) == 1);
  BOOST_TEST(sel.column_text(1) == "one");
  res = sel.step();
  BOOST_REQUIRE(res.ok() && *res == step_result::row);
  BOOST_TEST(sel.column_int64(0) == 2);
  BOOST_TEST(sel.is_null(1));
}

BOOST_AUTO_TEST_CASE(reset_guard_ends_the_statement) {
  auto db = open_memory();
  BOOST_REQUIRE(!db.exec("CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)"));
  auto sel = prepare(db, "SELECT a FROM t ORDER BY a");
  {
    auto guard = sel.reset_on_exit();
    auto res = sel.step();
    BOOST_REQUIRE(res.ok() && *res == step_result::row);
    BOOST_TEST(sel.busy());
  }
  BOOST_TEST(!sel.busy());
  // After the reset the query starts over at the first row.
  auto res = sel.step();
  BOOST_REQUIRE(res.ok() && *res == step_result::row);
  BOOST_TEST(sel.column_int64(0) == 1);
}

BOOST_AUTO_TEST_CASE(bind_errors_are_values_and_reach_step) {
  auto db = open_memory();
  auto sel = prepare(db, "SELECT ?1");
  auto err = sel.bind_int64(5, 1);
  BOOST_TEST((err.code == domain::ec::storage_failed));
  BOOST_TEST(contains(err.message, "out of range"), err.message);
  auto res = sel.step();
  BOOST_REQUIRE(!res.ok());
  BOOST_TEST(res.err().message == err.message);
  // A reset forgets the error.
  sel.reset();
  BOOST_REQUIRE(!sel.bind_int64(1, 7));
  res = sel.step();
  BOOST_REQUIRE(res.ok() && *res == step_result::row);
  BOOST_TEST(sel.column_int64(0) == 7);
}

BOOST_AUTO_TEST_CASE(prepare_reports_sqlite_errors) {
  auto db = open_memory();
  auto bad = db.prepare("SELEC 1");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST((bad.err().code == domain::ec::storage_failed));
  BOOST_TEST(contains(bad.err().message, "syntax error"), bad.err().message);
  auto missing = db.prepare("SELECT * FROM nowhere");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.err().message, "no such table: nowhere"));
  auto two = db.prepare("SELECT 1; SELECT 2");
  BOOST_REQUIRE(!two.ok());
  BOOST_TEST(two.err().message == "more than one statement");
  auto empty = db.prepare("  -- nothing\n");
  BOOST_REQUIRE(!empty.ok());
  BOOST_TEST(empty.err().message == "empty statement");
  // Trailing separators and comments are not a second statement.
  auto one = db.prepare("SELECT 1; ; -- done\n/* really */");
  BOOST_TEST(one.ok());
}

BOOST_AUTO_TEST_CASE(step_and_exec_errors_carry_sqlite_messages) {
  auto db = open_memory();
  BOOST_REQUIRE(!db.exec("CREATE TABLE t (a INTEGER PRIMARY KEY, b UNIQUE)"));
  auto ins = prepare(db, "INSERT INTO t (b) VALUES (?1)");
  ins.bind_text(1, "x");
  BOOST_REQUIRE(!ins.run());
  ins.bind_text(1, "x");
  auto err = ins.run();
  BOOST_TEST((err.code == domain::ec::storage_failed));
  BOOST_TEST(contains(err.message, "UNIQUE constraint failed: t.b"),
             err.message);
  BOOST_TEST(db.last_error_code() == SQLITE_CONSTRAINT_UNIQUE);
  // The statement stays usable after the failure.
  ins.bind_text(1, "y");
  BOOST_TEST(!ins.run());
  auto exec_err = db.exec("INSERT INTO nowhere VALUES (1)");
  BOOST_TEST((exec_err.code == domain::ec::storage_failed));
  BOOST_TEST(exec_err.message == "no such table: nowhere");
  auto count = db.query_int64("SELECT COUNT(*) FROM t");
  BOOST_REQUIRE(count.ok());
  BOOST_TEST(*count == 2);
  auto none = db.query_int64("SELECT a FROM t WHERE 0");
  BOOST_TEST(!none.ok());
  auto text = db.query_text("SELECT b FROM t ORDER BY a DESC");
  BOOST_REQUIRE(text.ok());
  BOOST_TEST(*text == "y");
}

BOOST_AUTO_TEST_CASE(transaction_commits_or_rolls_back) {
  auto db = open_memory();
  BOOST_REQUIRE(!db.exec("CREATE TABLE t (a)"));
  auto count = [&] {
    auto n = db.query_int64("SELECT COUNT(*) FROM t");
    BOOST_REQUIRE(n.ok());
    return *n;
  };
  {
    auto tx = transaction::begin(db);
    BOOST_REQUIRE(tx.ok());
    BOOST_TEST(db.in_transaction());
    BOOST_REQUIRE(!db.exec("INSERT INTO t VALUES (1)"));
    BOOST_REQUIRE(!tx->commit());
    BOOST_TEST(!tx->active());
    BOOST_TEST(!db.in_transaction());
  }
  BOOST_TEST(count() == 1);
  {
    // Destroyed without commit: rolled back.
    auto tx = transaction::begin(db, tx_mode::deferred);
    BOOST_REQUIRE(tx.ok());
    BOOST_REQUIRE(!db.exec("INSERT INTO t VALUES (2)"));
    BOOST_TEST(count() == 2);
  }
  BOOST_TEST(!db.in_transaction());
  BOOST_TEST(count() == 1);
  {
    // Explicit rollback, then a moved-to guard that must not roll back
    // twice, and a commit after the rollback that reports an error.
    auto tx = transaction::begin(db);
    BOOST_REQUIRE(tx.ok());
    BOOST_REQUIRE(!db.exec("INSERT INTO t VALUES (3)"));
    auto moved = std::move(*tx);
    BOOST_TEST(!tx->active());
    BOOST_TEST(moved.active());
    moved.rollback();
    BOOST_TEST(!moved.active());
    BOOST_TEST((moved.commit().code == domain::ec::storage_failed));
  }
  BOOST_TEST(count() == 1);
  // Nested BEGIN is SQLite's error, reported as a value.
  auto outer = transaction::begin(db);
  BOOST_REQUIRE(outer.ok());
  auto inner = transaction::begin(db);
  BOOST_REQUIRE(!inner.ok());
  BOOST_TEST(contains(inner.err().message, "within a transaction"));
}

BOOST_AUTO_TEST_CASE(busy_timeout_waits_then_fails) {
  temp_dir dir;
  auto path = dir.file("busy.db");
  auto a = database::open(path);
  auto b = database::open(path);
  BOOST_REQUIRE(a.ok() && b.ok());
  BOOST_REQUIRE(!a->exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x)"));
  BOOST_REQUIRE(!b->busy_timeout(std::chrono::milliseconds{100}));
  auto holder = transaction::begin(*a);
  BOOST_REQUIRE(holder.ok());
  auto start = std::chrono::steady_clock::now();
  auto blocked = transaction::begin(*b);
  auto waited = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE(!blocked.ok());
  BOOST_TEST(blocked.err().message == "database is locked");
  BOOST_TEST(waited >= std::chrono::milliseconds{80});
  BOOST_TEST((b->busy_timeout(std::chrono::milliseconds{-1}).code
              == domain::ec::storage_failed));
  BOOST_REQUIRE(!holder->commit());
  auto now_free = transaction::begin(*b);
  BOOST_TEST(now_free.ok());
}

BOOST_AUTO_TEST_CASE(open_failures_and_moves) {
  temp_dir dir;
  auto missing = dir.file("no/such/dir/x.db");
  auto db = database::open(missing);
  BOOST_REQUIRE(!db.ok());
  BOOST_TEST((db.err().code == domain::ec::storage_failed));
  BOOST_TEST(contains(db.err().message, missing), db.err().message);
  // Read-only does not create the file.
  auto ro = database::open(dir.file("absent.db"), SQLITE_OPEN_READONLY);
  BOOST_TEST(!ro.ok());
  BOOST_TEST(!std::filesystem::exists(dir.file("absent.db")));
  // A read-only connection refuses writes.
  {
    auto rw = database::open(dir.file("present.db"));
    BOOST_REQUIRE(rw.ok());
    BOOST_REQUIRE(!rw->exec("CREATE TABLE t (x)"));
  }
  auto reader = database::open(dir.file("present.db"), SQLITE_OPEN_READONLY);
  BOOST_REQUIRE(reader.ok());
  auto err = reader->exec("INSERT INTO t VALUES (1)");
  BOOST_TEST(contains(err.message, "readonly"), err.message);
  // Moves leave a closed connection behind that reports errors, no crash.
  auto first = open_memory();
  auto second = std::move(first);
  BOOST_TEST(!first.is_open());
  BOOST_TEST(second.is_open());
  BOOST_TEST((first.exec("SELECT 1").code == domain::ec::storage_failed));
  BOOST_TEST(!first.prepare("SELECT 1").ok());
  statement empty;
  BOOST_TEST(!empty.is_valid());
  BOOST_TEST(!empty.step().ok());
}

BOOST_AUTO_TEST_SUITE_END()
