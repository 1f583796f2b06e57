// The sales warehouse on a real PostgreSQL 15 (a throw-away cluster): the
// copy of the generated database, its fingerprint, refusing to overwrite,
// and a failed copy leaving nothing behind.

#include "data/sales/postgres.hpp"

#include <boost/test/unit_test.hpp>

#include "data/pg/connection.hpp"
#include "data/sqlite.hpp"
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

BOOST_AUTO_TEST_SUITE_END()
