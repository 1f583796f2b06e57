// The sales warehouse on a real PostgreSQL 15 (a throw-away cluster): the
// copy of the generated database, its fingerprint, refusing to overwrite,
// and a failed copy leaving nothing behind.

#include "data/sales/postgres.hpp"

#include <boost/test/unit_test.hpp>

#include "data/pg/connection.hpp"
#include "data/sqlite.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "tests/support/pg_cluster.hpp"
#include "tests/support/process.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor;

namespace {

struct cluster_fixture {
  test::pg_cluster cluster;

  cluster_fixture() {
    auto c = data::pg::connection::open(cluster.dsn());
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
    BOOST_REQUIRE(!c->exec("CREATE DATABASE warehouse"));
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(data_sales_postgres, cluster_fixture)

BOOST_AUTO_TEST_CASE(the_copy_has_the_files_rows_and_fingerprint) {
  const auto& file = test::shared_sales_db();
  auto want = data::summarize_sales(file);
  BOOST_REQUIRE(want.ok());
  std::vector<std::string> stages;
  auto got = data::copy_sales_to_postgres(
    file, cluster.dsn("warehouse"),
    [&](std::string_view stage, double) { stages.emplace_back(stage); });
  BOOST_REQUIRE_MESSAGE(got.ok(), (got.ok() ? "" : got.err().message));
  BOOST_TEST(got->fingerprint == want->fingerprint);
  BOOST_TEST(got->total_rows == want->total_rows);
  BOOST_REQUIRE(got->tables.size() == want->tables.size());
  for (size_t i = 0; i < want->tables.size(); ++i) {
    BOOST_TEST(got->tables[i].table == want->tables[i].table);
    BOOST_TEST(got->tables[i].rows == want->tables[i].rows);
  }
  BOOST_TEST(got->first_order_date == want->first_order_date);
  BOOST_TEST(got->last_order_date == want->last_order_date);
  BOOST_TEST(stages.front() == "schema");
  BOOST_TEST(stages.back() == "done");
  // The summary read again later is the same.
  auto again = data::summarize_postgres_sales(cluster.dsn("warehouse"));
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(again->fingerprint == want->fingerprint);
  // The constraints came along: a row breaking a check is refused.
  auto c = data::pg::connection::open(cluster.dsn("warehouse"));
  BOOST_REQUIRE(c.ok());
  auto err = c->exec("INSERT INTO sales.regions VALUES ('XX', 'Nowhere', "
                     "'Z', 1)");
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(err.message.find("check") != std::string::npos, err.message);
  // A changed row changes the fingerprint.
  BOOST_REQUIRE(!c->exec("UPDATE sales.regions SET country_name = "
                         "country_name || '.' WHERE country_code = 'NL'"));
  auto changed = data::postgres_sales_fingerprint(*c);
  BOOST_REQUIRE(changed.ok());
  BOOST_TEST(*changed != want->fingerprint);
}

BOOST_AUTO_TEST_CASE(an_existing_schema_is_kept_unless_forced) {
  const auto& file = test::shared_sales_db();
  auto dsn = cluster.dsn("warehouse");
  BOOST_REQUIRE(data::copy_sales_to_postgres(file, dsn, {}).ok());
  auto second = data::copy_sales_to_postgres(file, dsn, {});
  BOOST_REQUIRE(!second.ok());
  BOOST_TEST(second.err().code == domain::ec::invalid_request);
  BOOST_TEST(second.err().message.find("--force") != std::string::npos);
  auto forced = data::copy_sales_to_postgres(file, dsn, {}, true);
  BOOST_REQUIRE_MESSAGE(forced.ok(),
                        (forced.ok() ? "" : forced.err().message));
}

BOOST_AUTO_TEST_CASE(no_schema_summarises_as_empty_and_bad_dsn_is_an_error) {
  auto empty = data::summarize_postgres_sales(cluster.dsn("warehouse"));
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(empty->tables.empty());
  auto bad = data::summarize_postgres_sales(cluster.dsn("no_such_db"));
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.err().message.find("no_such_db") != std::string::npos,
             bad.err().message);
}

BOOST_AUTO_TEST_CASE(a_failed_copy_leaves_nothing_behind) {
  // A file whose second table cannot be created on PostgreSQL (SQLite
  // accepts an untyped column, PostgreSQL does not).
  auto dir = test::make_temp_dir("candor-pg-bad");
  auto path = dir + "/bad.db";
  {
    auto db = data::database::open(path, SQLITE_OPEN_READWRITE
                                           | SQLITE_OPEN_CREATE);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(!db->exec("CREATE TABLE regions (country_code TEXT "
                            "PRIMARY KEY); INSERT INTO regions VALUES "
                            "('NL'); CREATE TABLE odd (x);"));
  }
  auto r = data::copy_sales_to_postgres(path, cluster.dsn("warehouse"), {});
  BOOST_TEST(!r.ok());
  auto empty = data::summarize_postgres_sales(cluster.dsn("warehouse"));
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(empty->tables.empty());
  test::remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(the_reader_role_reads_allowed_columns_only) {
  const auto& file = test::shared_sales_db();
  auto admin = cluster.dsn("warehouse");
  BOOST_REQUIRE(data::copy_sales_to_postgres(file, admin, {}).ok());
  auto cat = data::catalog::load_default();
  BOOST_REQUIRE(cat.ok());
  data::reader_limits limits;
  limits.statement_timeout_ms = 300;
  BOOST_REQUIRE(
    !data::provision_postgres_reader(admin, *cat, "candor_reader", limits));
  // Twice is fine: the role is brought up to date.
  BOOST_REQUIRE(
    !data::provision_postgres_reader(admin, *cat, "candor_reader", limits));
  BOOST_TEST(data::provision_postgres_reader(admin, *cat, "Bad-Name", limits)
               .code
             == domain::ec::invalid_request);
  auto c = data::pg::connection::open(
    cluster.dsn("warehouse", "candor_reader"));
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
  auto show = [&](const std::string& what) {
    auto r = c->query("SHOW " + what);
    BOOST_REQUIRE(r.ok());
    return *r->values[0][0];
  };
  BOOST_TEST(show("default_transaction_read_only") == "on");
  BOOST_TEST(show("search_path") == "sales");
  BOOST_TEST(show("statement_timeout") == "300ms");
  BOOST_TEST(show("work_mem") == "16MB");
  // Allowed: the catalog's tables and columns, unqualified.
  auto n = c->query("SELECT COUNT(*), SUM(total_cents) FROM orders");
  BOOST_REQUIRE_MESSAGE(n.ok(), (n.ok() ? "" : n.err().message));
  BOOST_TEST(std::stol(*n->values[0][0]) > 0);
  BOOST_TEST(c->query("SELECT segment, COUNT(*) FROM customers GROUP BY 1")
               .ok());
  // Personal columns and the contacts table: refused by the server.
  auto personal = c->query("SELECT email FROM customers LIMIT 1");
  BOOST_REQUIRE(!personal.ok());
  BOOST_TEST(personal.err().message.find("permission denied")
               != std::string::npos,
             personal.err().message);
  BOOST_TEST(!c->query("SELECT * FROM customers LIMIT 1").ok());
  BOOST_TEST(!c->query("SELECT phone FROM customer_contacts LIMIT 1").ok());
  // A write: refused by the read-only default, and again by the role's
  // privileges when the transaction is made writable.
  auto ro = c->exec("UPDATE orders SET total_cents = 0");
  BOOST_REQUIRE(static_cast<bool>(ro));
  BOOST_TEST(ro.message.find("read-only transaction") != std::string::npos,
             ro.message);
  auto rw = c->exec("BEGIN READ WRITE; UPDATE orders SET total_cents = 0");
  BOOST_REQUIRE(static_cast<bool>(rw));
  BOOST_TEST(rw.message.find("permission denied") != std::string::npos,
             rw.message);
  BOOST_REQUIRE(!c->exec("ROLLBACK"));
  // No sleeping, no changing settings through functions, no files.
  for (const char* q : {"SELECT pg_sleep(1)",
                        "SELECT set_config('statement_timeout', '0', false)",
                        "SELECT pg_read_file('/etc/passwd')",
                        "SELECT lo_import('/etc/passwd')"}) {
    auto r = c->query(q);
    BOOST_TEST(!r.ok(), q);
  }
  // A long statement is cancelled by the server at the role's timeout.
  auto slow = c->query("SELECT COUNT(*) FROM generate_series(1, 1000000000)");
  BOOST_REQUIRE(!slow.ok());
  BOOST_TEST(slow.err().message.find("statement timeout") != std::string::npos,
             slow.err().message);
}

BOOST_AUTO_TEST_SUITE_END()
