// Tests of the SQL guard: read-only opening, connection hardening, the
// authorizer and the bytecode audit against legitimate and hostile queries.

#include "data/sql/guard.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

#include "domain/sql/policy.hpp"
#include "domain/build_info.hpp"

using namespace candor;
using namespace candor::data;
using domain::sql::verdict_kind;

namespace {

using candor::test::temp_dir;

/// A small sales database with the tables of the corpus, some rows, and
/// an index that holds a personal column (to exercise the audit).
void create_sales_db(const std::string& path) {
  auto db = database::open(path);
  BOOST_REQUIRE(db.ok());
  auto err = db->exec(R"sql(
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT,
      segment TEXT, country TEXT, created_at TEXT, updated_at TEXT);
    CREATE TABLE customer_contacts (id INTEGER PRIMARY KEY,
      customer_id INTEGER, email TEXT, phone TEXT);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER,
      order_date TEXT, status TEXT, channel TEXT, total_cents INTEGER,
      updated_at TEXT);
    CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER,
      product_id INTEGER, quantity INTEGER, unit_price_cents INTEGER,
      line_total_cents INTEGER);
    CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT,
      list_price_cents INTEGER);
    CREATE INDEX orders_by_date ON orders (order_date);
    CREATE INDEX orders_by_status_date ON orders (status, order_date);
    CREATE INDEX order_items_by_order ON order_items (order_id);
    CREATE INDEX customers_by_country_email ON customers (country, email);
    INSERT INTO products VALUES
      (1, 'Strada 2 road bike', 'bikes', 189900),
      (2, 'Volt City e-bike', 'bikes', 279900),
      (3, 'Tubeless tyre 700x32', 'components', 5495),
      (4, 'Rain jacket', 'apparel', 11995),
      (5, 'Energy gel 10-pack', 'nutrition', 1990);
    INSERT INTO customers VALUES
      (1, 'Anna de Vries', 'anna@mail.example', 'consumer', 'NL',
       '2024-01-03', '2024-06-01'),
      (2, 'Ghent Cycles BV', 'info@ghentcycles.example', 'business', 'BE',
       '2024-02-11', '2024-02-11'),
      (3, 'Jonas Weber', 'jonas@mail.example', 'club', 'DE',
       '2024-03-20', '2025-01-15');
    INSERT INTO customer_contacts VALUES
      (1, 1, 'anna@mail.example', '+31 6 1234 5678'),
      (2, 2, 'info@ghentcycles.example', '+32 9 123 45 67');
    INSERT INTO orders VALUES
      (1, 1, '2024-05-02', 'paid', 'web', 195394, '2024-05-02'),
      (2, 2, '2024-06-10', 'paid', 'partner', 559800, '2024-06-12'),
      (3, 3, '2024-11-28', 'refunded', 'marketplace', 11995, '2024-12-05'),
      (4, 1, '2025-01-05', 'paid', 'retail', 1990, '2025-01-05'),
      (5, 3, '2025-02-14', 'cancelled', 'web', 5495, '2025-02-15');
    INSERT INTO order_items VALUES
      (1, 1, 1, 1, 189900, 189900), (2, 1, 3, 1, 5495, 5495),
      (3, 2, 2, 2, 279900, 559800), (4, 3, 4, 1, 11995, 11995),
      (5, 4, 5, 1, 1990, 1990), (6, 5, 3, 1, 5495, 5495);
  )sql");
  BOOST_REQUIRE_MESSAGE(!err, err.message);
}

/// Everything but customers.name, customers.email and customer_contacts.
sql_allowlist sales_allowlist() {
  sql_allowlist a;
  a.tables["customers"]
    = {"id", "segment", "country", "created_at", "updated_at"};
  a.tables["orders"] = {"id",      "customer_id", "order_date", "status",
                        "channel", "total_cents", "updated_at"};
  a.tables["order_items"]
    = {"id",       "order_id",         "product_id",
       "quantity", "unit_price_cents", "line_total_cents"};
  a.tables["Products"] = {"ID", "name", "category", "list_price_cents"};
  a.functions = default_sql_functions();
  return a;
}

struct guard_fixture {
  temp_dir dir;
  std::string path = dir.file("sales.db");
  std::unique_ptr<sql_guard> guard;

  guard_fixture() {
    create_sales_db(path);
    auto g = sql_guard::open(path, sales_allowlist());
    BOOST_REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string{} : g.err().message));
    guard = std::make_unique<sql_guard>(std::move(*g));
  }

  guard_result check(const std::string& sql) {
    return guard->check(sql);
  }

  void expect(const std::string& sql, verdict_kind v, const std::string& rule,
              const std::string& stage = "") {
    auto r = check(sql);
    BOOST_TEST_CONTEXT(sql) {
      BOOST_TEST(to_string(r.verdict) == to_string(v), r.message);
      BOOST_TEST(r.rule == rule, r.message);
      if (!stage.empty())
        BOOST_TEST(r.stage == stage);
      if (v != verdict_kind::allow)
        BOOST_TEST(!r.message.empty());
    }
  }

  void allow(const std::string& sql) {
    expect(sql, verdict_kind::allow, "");
  }

  void block(const std::string& sql, const std::string& rule,
             const std::string& stage = "") {
    expect(sql, verdict_kind::block, rule, stage);
  }
};

/// Runs `sql` to the end on a plain read-only connection; returns the
/// number of rows, or -1 on an error.
int run_rows(const std::string& path, const std::string& sql,
             std::string* error = nullptr) {
  auto db = open_read_only(path);
  if (!db)
    return -1;
  auto st = db->prepare(sql);
  if (!st) {
    if (error != nullptr)
      *error = st.err().message;
    return -1;
  }
  int rows = 0;
  while (true) {
    auto r = st->step();
    if (!r) {
      if (error != nullptr)
        *error = r.err().message;
      return -1;
    }
    if (*r == step_result::done)
      return rows;
    ++rows;
  }
}

} // namespace

// -- the connection -----------------------------------------------------------

BOOST_AUTO_TEST_SUITE(data_sql_guard)

BOOST_AUTO_TEST_CASE(open_read_only_refuses_missing_files_and_symlinks) {
  temp_dir dir;
  BOOST_TEST(!open_read_only(dir.file("missing.db")).ok());
  BOOST_TEST(!std::filesystem::exists(dir.file("missing.db")));
  create_sales_db(dir.file("real.db"));
  std::filesystem::create_symlink(dir.file("real.db"), dir.file("link.db"));
  auto via_link = open_read_only(dir.file("link.db"));
  BOOST_TEST(!via_link.ok());
  BOOST_TEST(!sql_guard::open(dir.file("link.db"), sales_allowlist()).ok());
  // Characters that mean something in a URI are escaped in the path.
  create_sales_db(dir.file("odd?name#1%.db"));
  auto odd = open_read_only(dir.file("odd?name#1%.db"));
  BOOST_REQUIRE(odd.ok());
  auto n = odd->query_int64("SELECT count(*) FROM orders");
  BOOST_TEST((n && *n == 5));
}

BOOST_AUTO_TEST_CASE(hardened_connection_settings_hold) {
  temp_dir dir;
  create_sales_db(dir.file("s.db"));
  auto db = open_read_only(dir.file("s.db"));
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(!harden_connection(*db));
  auto* h = db->handle();
  BOOST_TEST(sqlite3_limit(h, SQLITE_LIMIT_LENGTH, -1) == 100000);
  BOOST_TEST(sqlite3_limit(h, SQLITE_LIMIT_ATTACHED, -1) == 0);
  BOOST_TEST(sqlite3_limit(h, SQLITE_LIMIT_EXPR_DEPTH, -1) == 50);
  BOOST_TEST(sqlite3_limit(h, SQLITE_LIMIT_WORKER_THREADS, -1) == 0);
  BOOST_TEST(sqlite3_db_readonly(h, "main") == 1);
  auto q = [&](const char* sql) {
    auto v = db->query_int64(sql);
    BOOST_REQUIRE_MESSAGE(v, sql);
    return *v;
  };
  BOOST_TEST(q("PRAGMA query_only") == 1);
  BOOST_TEST(q("PRAGMA temp_store") == 2); // MEMORY
  BOOST_TEST(q("PRAGMA mmap_size") == 0);
  BOOST_TEST(q("PRAGMA trusted_schema") == 0);
  int on = -1;
  sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, -1, &on);
  BOOST_TEST(on == 1);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, -1, &on);
  BOOST_TEST(on == 0);
  sqlite3_db_config(h, SQLITE_DBCONFIG_DQS_DML, -1, &on);
  BOOST_TEST(on == 0);
  // Writes fail even without the authorizer.
  BOOST_TEST(static_cast<bool>(db->exec("DELETE FROM orders")));
  BOOST_TEST(static_cast<bool>(db->exec("CREATE TABLE x (a)")));
  // The value length cap holds.
  auto big = db->query_text("SELECT replace(hex(zeroblob(60000)), '0', 'ab')");
  BOOST_TEST(!big.ok());
  BOOST_TEST(q("SELECT count(*) FROM orders") == 5);
}

// -- allowed ------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(legitimate_queries_are_allowed, guard_fixture) {
  allow("SELECT count(*) FROM orders");
  allow("SELECT count(*) FROM customers");
  allow("SELECT id, segment, country FROM customers");
  allow("SELECT country FROM customers"); // may scan the (country, email) index
  allow("SELECT country, count(*) FROM customers GROUP BY country");
  allow("SELECT status, order_date FROM orders WHERE status = 'paid' ORDER BY "
        "order_date");
  allow("SELECT p.category, sum(i.line_total_cents) FROM order_items i JOIN "
        "products p ON p.id = i.product_id GROUP BY 1");
  allow("WITH paid AS MATERIALIZED (SELECT id, total_cents FROM orders WHERE "
        "status = 'paid') SELECT (SELECT count(*) FROM paid), (SELECT "
        "sum(total_cents) FROM paid)");
  allow("SELECT id, lag(total_cents) OVER (ORDER BY order_date), "
        "row_number() OVER (PARTITION BY channel ORDER BY id) FROM orders");
  allow("SELECT coalesce(NULL, 1), iif(1, 2, 3), ifnull(NULL, 2), "
        "nullif(1, 1), abs(-1), round(1.5), upper('a'), substr('abc', 2)");
  allow("SELECT strftime('%Y', order_date), julianday(updated_at) FROM orders");
  allow("SELECT name FROM products WHERE name LIKE '%bike%'");
  allow("SELECT 1;");
  allow("SELECT 1; -- trailing comment");
  // Opened immutable, as an executor would.
  auto imm = sql_guard::open(path, sales_allowlist(), {}, true);
  BOOST_REQUIRE(imm.ok());
  BOOST_TEST(imm->check("SELECT count(*) FROM orders").allowed());
  BOOST_TEST(!imm->check("SELECT email FROM customers").allowed());
  auto r = check("SELECT status, count(*) FROM orders GROUP BY status");
  BOOST_TEST(r.allowed());
  BOOST_TEST(r.stage == "bytecode");
  BOOST_TEST(imm->query_plan("SELECT status, count(*) FROM orders GROUP BY "
                             "status")
               .find("orders")
             != std::string::npos);
  BOOST_TEST(imm->query_plan("SELECT email FROM customers").empty());
}

BOOST_FIXTURE_TEST_CASE(a_repeat_gets_the_same_verdict, guard_fixture) {
  // Allowed texts are remembered; a repeat is judged the same, with the
  // same stage.
  auto first = check("SELECT channel, count(*) FROM orders GROUP BY 1");
  auto second = check("SELECT channel, count(*) FROM orders GROUP BY 1");
  BOOST_TEST(first.allowed());
  BOOST_TEST(second.allowed());
  BOOST_TEST(second.stage == first.stage);
  // A block is judged afresh every time, with its denial each time, also
  // right after an allowed statement of nearly the same text.
  for (int round = 0; round < 3; ++round) {
    auto r = check("SELECT email FROM customers");
    BOOST_TEST(r.rule == "denied_column");
    BOOST_TEST(r.denial.column == "email");
    BOOST_TEST(check("SELECT country FROM customers").allowed());
  }
  // Only the exact text counts: a statement that differs by one byte from
  // a remembered one is compiled on its own.
  BOOST_TEST(check("SELECT count(*) FROM orders").allowed());
  block("SELECT count(*) FROM orders; DELETE FROM orders",
        "multiple_statements");
  // More texts than are remembered: the oldest are compiled again, and
  // still allowed.
  for (size_t i = 0; i < guard_memo_entries + 10; ++i)
    allow("SELECT count(*) FROM orders WHERE id > " + std::to_string(i));
  allow("SELECT count(*) FROM orders WHERE id > 0");
}

// -- blocked by the authorizer (static policy bypassed) -----------------------

BOOST_FIXTURE_TEST_CASE(writes_are_blocked, guard_fixture) {
  block("DELETE FROM orders", "denied_action");
  block("UPDATE orders SET status = 'x'", "denied_action");
  block("INSERT INTO orders (id) VALUES (99)", "denied_action");
  block("INSERT INTO orders (id) VALUES (99) RETURNING id", "denied_action");
  block("REPLACE INTO products VALUES (1, 'x', 'y', 1)", "denied_action");
  block("WITH x AS (SELECT 1) DELETE FROM orders", "denied_action");
  block("DROP TABLE orders", "denied_action");
  block("CREATE TABLE t (a)", "denied_action");
  block("CREATE TEMP VIEW v AS SELECT 1", "denied_action");
  block("ALTER TABLE orders ADD COLUMN x", "denied_action");
  block("BEGIN", "denied_action");
  block("SAVEPOINT a", "denied_action");
  block("ANALYZE", "denied_action");
  block("REINDEX", "denied_action");
  auto r = check("DELETE FROM orders WHERE id = 1");
  BOOST_TEST(r.denial.action == "delete");
  BOOST_TEST(r.denial.table == "orders");
  BOOST_TEST(r.stage == "authorizer");
  // The database still has every row.
  BOOST_TEST(run_rows(path, "SELECT * FROM orders") == 5);
}

BOOST_FIXTURE_TEST_CASE(vacuum_into_is_stopped_and_creates_no_file,
                        guard_fixture) {
  // VACUUM gets no authorizer callback (G3); the read-only check stops it.
  auto target = dir.file("leak.db");
  auto r = check("VACUUM INTO '" + target + "'");
  BOOST_TEST(to_string(r.verdict) == "block");
  BOOST_TEST(r.rule == "not_read_only");
  BOOST_TEST(r.stage == "statement");
  BOOST_TEST(!std::filesystem::exists(target));
  block("VACUUM", "not_read_only");
}

BOOST_FIXTURE_TEST_CASE(pragma_attach_and_multiple_statements_are_blocked,
                        guard_fixture) {
  block("PRAGMA database_list", "denied_action");
  block("PRAGMA query_only = 0", "denied_action");
  block("PRAGMA table_info(customers)", "denied_action");
  block("ATTACH DATABASE '" + dir.file("x.db") + "' AS x", "denied_action");
  BOOST_TEST(!std::filesystem::exists(dir.file("x.db")));
  block("DETACH DATABASE main", "denied_action");
  block("SELECT 1; DROP TABLE orders", "multiple_statements", "statement");
  block("SELECT 1; SELECT 2", "multiple_statements");
  block("SELECT 1 /* ; */ ; SELECT 2", "multiple_statements");
  block(std::string("SELECT 1\0; DROP TABLE orders", 28), "invalid_input");
  // A statement that compiles but returns nothing, or is an EXPLAIN.
  expect("EXPLAIN SELECT 1", verdict_kind::correctable, "syntax_error");
}

BOOST_FIXTURE_TEST_CASE(personal_data_is_blocked, guard_fixture) {
  block("SELECT * FROM customers", "denied_column");
  block("SELECT * FROM customer_contacts", "denied_table");
  block("SELECT email AS e FROM customers", "denied_column");
  block("SELECT c.name FROM orders o JOIN customers c ON c.id = "
        "o.customer_id",
        "denied_column");
  block("SELECT \"email\" FROM \"customers\"", "denied_column");
  block("SELECT (SELECT email FROM customers WHERE id = o.customer_id) FROM "
        "orders o",
        "denied_column");
  block("SELECT id FROM customers WHERE email LIKE 'a%'", "denied_column");
  block("SELECT segment FROM customers UNION SELECT email FROM customers",
        "denied_column");
  block("SELECT group_concat(email) FROM customers", "denied_column");
  block("SELECT count(*) FROM customer_contacts", "denied_table");
  block("SELECT 1 FROM orders WHERE EXISTS (SELECT 1 FROM customer_contacts)",
        "denied_table");
  // A joined table none of whose columns is named still reports a
  // whole-row read in 3.40, which is denied for a non-allowlisted table.
  block("SELECT count(*) FROM orders o JOIN customer_contacts c ON o.id > 0",
        "denied_table");
  auto r = check("SELECT lower(email) FROM customers");
  BOOST_TEST(r.denial.table == "customers");
  BOOST_TEST(r.denial.column == "email");
  BOOST_TEST(r.stage == "authorizer");
}

BOOST_FIXTURE_TEST_CASE(schema_and_virtual_tables_are_blocked, guard_fixture) {
  block("SELECT sql FROM sqlite_master", "denied_table");
  block("SELECT name FROM sqlite_schema", "denied_table");
  block("SELECT * FROM sqlite_temp_master", "other_database");
  for (auto sql :
       {"SELECT * FROM pragma_table_info('customers')",
        "SELECT * FROM json_each('[1,2]')", "SELECT * FROM json_tree('{}')",
        "SELECT * FROM dbstat", "SELECT * FROM sqlite_stmt",
        "SELECT * FROM pragma_database_list"}) {
    auto r = check(sql);
    BOOST_TEST_CONTEXT(sql) {
      BOOST_TEST(to_string(r.verdict) == "block", r.rule << ": " << r.message);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(risky_functions_are_blocked, guard_fixture) {
  block("SELECT load_extension('/tmp/x.so')", "risky_function");
  block("SELECT printf('%.*c', 900000000, 'x')", "risky_function");
  block("SELECT \"printf\"('%d', 1)", "risky_function");
  block("SELECT format('%d', 1)", "risky_function");
  block("SELECT randomblob(10)", "risky_function");
  block("SELECT zeroblob(10)", "risky_function");
  block("SELECT fts3_tokenizer('simple')", "risky_function");
  block("SELECT sqlite_version()", "risky_function");
  // Functions of the sqlite3 CLI do not exist here: still blocked, by name.
  block("SELECT readfile('/etc/passwd')", "risky_function");
  block("SELECT writefile('/tmp/x', 'y')", "risky_function");
  auto r = check("SELECT hex(randomblob(8))");
  BOOST_TEST(r.denial.function == "randomblob");
}

BOOST_FIXTURE_TEST_CASE(recursion_and_limits_are_blocked, guard_fixture) {
  block("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT count(*) FROM c",
        "denied_action");
  block("WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT "
        "max(x) FROM c",
        "denied_action");
  // Parentheses alone add no depth to SQLite's expression tree; calls do.
  std::string deep = "SELECT 1";
  for (int i = 0; i < 60; ++i)
    deep = "SELECT abs((" + deep + "))";
  block(deep, "resource_limit");
  std::string deep2 = "SELECT ";
  for (int i = 0; i < 60; ++i)
    deep2 += "abs(";
  block(deep2 + "1" + std::string(60, ')'), "resource_limit");
  std::string chain = "SELECT 1";
  for (int i = 0; i < 60; ++i)
    chain += " + 1";
  auto r = check(chain);
  BOOST_TEST(r.rule == "resource_limit");
  BOOST_TEST(r.message.find("Expression tree is too large") == 0u);
  std::string compound = "SELECT 1";
  for (int i = 0; i < 8; ++i)
    compound += " UNION ALL SELECT 1";
  block(compound, "resource_limit");
  block("SELECT char(1,2,3,4,5,6,7,8,9)", "resource_limit");
  block("SELECT '" + std::string(100001, 'x') + "'", "resource_limit");
}

BOOST_FIXTURE_TEST_CASE(cte_copies_are_bounded_by_the_compile_budget,
                        guard_fixture) {
  // CTEs that each read the previous one four times (FROM and three
  // `n IN a<i-1>`): SQLite copies a body per reference, 4^9 copies. No
  // sqlite3_limit bounds it; before the budget this took 10.8 s and
  // 593 MB of the server's memory in the guard.
  std::string sql = "WITH a0(n) AS (SELECT 1)";
  for (int i = 1; i <= 9; ++i) {
    auto prev = "a" + std::to_string(i - 1);
    sql += ", a" + std::to_string(i) + "(n) AS (SELECT n FROM " + prev
           + " WHERE n IN " + prev + " AND n IN " + prev + " AND n IN " + prev
           + ")";
  }
  sql += " SELECT n FROM a9";
  auto r = check(sql);
  BOOST_TEST(r.rule == "compile_budget", r.rule << ": " << r.message);
  BOOST_TEST(domain::sql::to_string(r.verdict) == "block");
  BOOST_TEST(r.message.find("16 MiB") != std::string::npos, r.message);
  // Three levels are cheap and allowed; the connection is fine after the
  // refused allocation.
  auto cut = sql.find(", a4(n)");
  allow(sql.substr(0, cut) + " SELECT n FROM a3");
  allow("SELECT channel, count(*) FROM orders GROUP BY channel");
}

// -- correctable --------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(mistakes_are_correctable, guard_fixture) {
  using V = verdict_kind;
  expect("SELEC 1", V::correctable, "syntax_error");
  expect("SELECT FROM orders", V::correctable, "syntax_error");
  expect("SELECT count(* FROM orders", V::correctable, "syntax_error");
  expect("SELECT id FROM order", V::correctable, "syntax_error");
  expect("SELECT id FROM refunds", V::correctable, "no_such_table");
  expect("SELECT revenue FROM orders", V::correctable, "no_such_column");
  // Double quotes name identifiers only (DQS off): no silent string.
  expect("SELECT \"revenue\" FROM orders", V::correctable, "no_such_column");
  expect("SELECT median(total_cents) FROM orders", V::correctable,
         "unknown_function");
  // Existing but not allowlisted, and not risky.
  expect("SELECT json_extract('{\"a\":1}', '$.a')", V::correctable,
         "unknown_function");
  expect("SELECT random()", V::correctable, "unknown_function");
  expect("SELECT '{\"a\":1}' ->> '$.a'", V::correctable, "unknown_function");
  auto r = check("SELECT json_extract('{}', '$.a')");
  BOOST_TEST(r.denial.function == "json_extract");
  BOOST_TEST(r.message.find("json_extract") != std::string::npos);
  // A blocking denial wins over a correctable one in the same statement.
  block("SELECT json_extract(email, '$') FROM customers", "denied_column");
}

// -- the bytecode audit and the authorizer's blind spots ----------------------

BOOST_FIXTURE_TEST_CASE(g1_using_and_natural_joins_are_caught_by_the_audit,
                        guard_fixture) {
  // The authorizer alone lets these through (see the next test); the
  // audit sees the cursor on customer_contacts or the Column read of a
  // denied column.
  block("SELECT o.id FROM orders o JOIN customer_contacts USING "
        "(customer_id)",
        "denied_table", "bytecode");
  block("SELECT o.id FROM orders o NATURAL JOIN customer_contacts",
        "denied_table", "bytecode");
  block("SELECT count(*) FROM (SELECT 'anna@mail.example' AS email) g JOIN "
        "customers USING (email)",
        "denied_column", "bytecode");
  block("SELECT c1.id FROM customers c1 JOIN customers c2 USING (email)",
        "denied_column", "bytecode");
  auto r = check("SELECT count(*) FROM (SELECT 'anna@mail.example' AS email) "
                 "g NATURAL JOIN customers");
  BOOST_TEST(to_string(r.verdict) == "block");
  BOOST_TEST(r.denial.column == "email");
  // USING on allowed columns is fine for this layer (the static policy
  // still refuses USING as a matter of policy).
  allow("SELECT count(*) FROM orders o JOIN order_items USING (id)");
}

BOOST_AUTO_TEST_CASE(audit_maps_columns_of_without_rowid_tables) {
  // Column P2 counts record positions: PRIMARY KEY columns first in a
  // WITHOUT ROWID table. A wrong map would let a denied column through.
  temp_dir dir;
  {
    auto db = database::open(dir.file("w.db"));
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(!db->exec("CREATE TABLE t (a, secret, c, d, PRIMARY KEY "
                            "(c, a)) WITHOUT ROWID; INSERT INTO t VALUES "
                            "(1, 's', 3, 4);"
                            "CREATE TABLE g (a, b AS (a * 2));"));
  }
  sql_allowlist allow;
  allow.tables["t"] = {"a", "c", "d"};
  allow.tables["g"] = {"a", "b"};
  auto g = sql_guard::open(dir.file("w.db"), allow);
  BOOST_REQUIRE(g.ok());
  BOOST_TEST(g->check("SELECT d, a, c FROM t").allowed());
  auto r = g->check("SELECT x.a FROM t x JOIN t y USING (secret)");
  BOOST_TEST(to_string(r.verdict) == "block");
  BOOST_TEST(r.stage == "bytecode");
  BOOST_TEST(r.denial.column == "secret");
  // A table with a generated column is refused by the audit.
  r = g->check("SELECT a FROM g");
  BOOST_TEST(to_string(r.verdict) == "block");
  BOOST_TEST(r.denial.column == "<unverifiable>");
}

BOOST_AUTO_TEST_CASE(authorizer_blind_spots_without_the_audit) {
  temp_dir dir;
  create_sales_db(dir.file("s.db"));
  auto db = open_read_only(dir.file("s.db"));
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(!harden_connection(*db));
  auto auth = sql_authorizer::for_connection(*db, sales_allowlist());
  BOOST_REQUIRE(auth.ok());
  auth->install(db->handle());
  auto prepares = [&](const std::string& sql) {
    auth->clear();
    return static_cast<bool>(db->prepare(sql));
  };
  // G1: the compared columns of USING and NATURAL get no callback, and a
  // table contributing only join columns gets none at all.
  BOOST_TEST(prepares("SELECT o.id FROM orders o JOIN customer_contacts "
                      "USING (customer_id)"));
  BOOST_TEST(prepares("SELECT count(*) FROM (SELECT 'a@b.example' AS email) "
                      "g JOIN customers USING (email)"));
  // G3: VACUUM gets no action code at prepare.
  BOOST_TEST(prepares("VACUUM"));
  // Not blind: a plain read of the same column, and the ordinary join.
  BOOST_TEST(!prepares("SELECT email FROM customers"));
  BOOST_TEST(!prepares("SELECT o.id FROM orders o JOIN customer_contacts c "
                       "ON c.customer_id = o.customer_id"));
  BOOST_REQUIRE(!auth->denials().empty());
  BOOST_TEST(auth->denials().front().table == "customer_contacts");
  // A denied function stops SQLite from resolving its arguments, so the
  // denied column inside is never reported: the statement looks merely
  // correctable. `sql_guard` defers such denials to see the rest.
  BOOST_TEST(!prepares("SELECT json_extract(email, '$') FROM customers"));
  BOOST_REQUIRE(auth->denials().size() == 1u);
  BOOST_TEST(auth->denials().front().rule == "unknown_function");
  auth->defer_unknown_functions(true);
  BOOST_TEST(prepares("SELECT json_extract(email, '$') FROM customers")
             == false);
  BOOST_REQUIRE(auth->denials().size() == 2u);
  BOOST_TEST(auth->denials()[0].rule == "unknown_function");
  BOOST_TEST(auth->denials()[1].rule == "denied_column");
  // Deferred means recorded but compiled: the caller must refuse it.
  BOOST_TEST(prepares("SELECT json_extract('{}', '$.a')"));
  BOOST_TEST(auth->denials().size() == 1u);
  sql_authorizer::uninstall(db->handle());
}

BOOST_AUTO_TEST_CASE(authorizer_decisions) {
  sql_allowlist allow = sales_allowlist();
  allow.functions.insert("printf"); // risky: never allowlisted
  sql_authorizer auth{
    allow,
    {"customers", "orders", "customer_contacts", "order_items", "products"},
    {"json_each", "pragma_table_info"}};
  BOOST_TEST(auth.decide(SQLITE_SELECT, nullptr, nullptr, nullptr, nullptr)
             == SQLITE_OK);
  BOOST_TEST(auth.decide(SQLITE_READ, "orders", "status", "main", nullptr)
             == SQLITE_OK);
  BOOST_TEST(auth.decide(SQLITE_READ, "PRODUCTS", "Name", "main", nullptr)
             == SQLITE_OK);
  BOOST_TEST(auth.decide(SQLITE_READ, "customers", "", nullptr, nullptr)
             == SQLITE_OK);
  // G2: a whole-row read under a CTE name.
  BOOST_TEST(auth.decide(SQLITE_READ, "paid", "", nullptr, nullptr)
             == SQLITE_OK);
  BOOST_TEST(auth.denials().empty());
  BOOST_TEST(auth.decide(SQLITE_READ, "customers", "email", "main", nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_READ, "customer_contacts", "", nullptr, nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_READ, "json_each", "", nullptr, nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_READ, "sqlite_whatever", "", nullptr, nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_READ, "orders", "status", "temp", nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_FUNCTION, nullptr, "printf", nullptr, nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_FUNCTION, nullptr, "count", nullptr, nullptr)
             == SQLITE_OK);
  BOOST_TEST(auth.decide(SQLITE_INSERT, "orders", nullptr, "main", nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(SQLITE_RECURSIVE, nullptr, nullptr, nullptr, nullptr)
             == SQLITE_DENY);
  BOOST_TEST(auth.decide(9999, nullptr, nullptr, nullptr, nullptr)
             == SQLITE_DENY);
  const auto& d = auth.denials();
  BOOST_REQUIRE(d.size() == 9u);
  BOOST_TEST(d[0].rule == "denied_column");
  BOOST_TEST(d[1].rule == "denied_table");
  BOOST_TEST(d[2].rule == "denied_table");
  BOOST_TEST(d[3].rule == "denied_table");
  BOOST_TEST(d[4].rule == "other_database");
  BOOST_TEST(d[5].rule == "risky_function");
  BOOST_TEST(d[6].rule == "denied_action");
  BOOST_TEST(d[6].action == "insert");
  BOOST_TEST(d[7].action == "recursive");
  BOOST_TEST(d[8].action == "unknown");
  BOOST_TEST(!auth.function_allowed("printf"));
  BOOST_TEST(!auth.function_allowed("load_extension"));
  for (auto& f : default_sql_functions())
    BOOST_TEST(!domain::sql::is_risky_function(f), f);
}

BOOST_AUTO_TEST_SUITE_END()

// The corpus (eval/sql_corpus.json) runs on the real sales schema, layer by
// layer: tests/data/sql/corpus.cpp (suite data_sql_corpus).
