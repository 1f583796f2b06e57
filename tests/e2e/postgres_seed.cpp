// End-to-end: `candor seed --backend postgres` against a throw-away
// PostgreSQL cluster: the same fingerprint as the file, a second run that
// summarises, --force, `ask` answering from it as the reading role (and
// refusing an administrator's connection), and the configuration errors
// that name what to set.

#include <string>

#include <boost/test/unit_test.hpp>

#include "tests/support/pg_cluster.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor::test;

namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::string fingerprint(const std::string& out) {
  auto at = out.find("fingerprint: ");
  return at == std::string::npos ? std::string{} : out.substr(at + 13, 64);
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_postgres_seed)

BOOST_AUTO_TEST_CASE(seed_copies_the_warehouse_with_the_same_fingerprint) {
  pg_cluster cluster;
  temp_dir dir{"candor-pg-seed"};
  std::map<std::string, std::string> env{
    {"CANDOR_SQL_POSTGRES_DSN", cluster.dsn()}};
  auto sqlite = run_candor({"seed", "--data-dir", dir.file("data")});
  BOOST_REQUIRE_EQUAL(sqlite.exit_code, 0);
  auto r = run_candor({"seed", "--backend", "postgres", "--data-dir",
                       dir.file("data")},
                      env, std::chrono::seconds{120});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(fingerprint(r.out) == fingerprint(sqlite.out));
  BOOST_TEST(has(r.out, "orders: "));
  BOOST_TEST(has(r.err, "postgres: 100% done"), r.err);
  BOOST_TEST(has(r.err, "role candor_reader may read"), r.err);
  // Again: summarised, not copied.
  auto again = run_candor({"seed", "--backend", "postgres", "--data-dir",
                           dir.file("data")},
                          env);
  BOOST_REQUIRE_EQUAL(again.exit_code, 0);
  BOOST_TEST(has(again.err, "exists; summarising"), again.err);
  BOOST_TEST(fingerprint(again.out) == fingerprint(sqlite.out));
  // --force copies again, with the same result.
  auto forced = run_candor({"seed", "--backend", "postgres", "--force",
                            "--data-dir", dir.file("data")},
                           env, std::chrono::seconds{120});
  BOOST_REQUIRE_EQUAL(forced.exit_code, 0);
  BOOST_TEST(fingerprint(forced.out) == fingerprint(sqlite.out));
  // The server answers from the warehouse as the reading role ...
  auto q = std::string{"How many orders were placed in 2025?"};
  auto on_sqlite = run_candor({"ask", q, "--json", "--data-dir",
                               dir.file("data")},
                              {{"CANDOR_LLM_PROVIDER", "local"}});
  BOOST_REQUIRE_MESSAGE(on_sqlite.exit_code == 0, on_sqlite.err);
  auto on_pg = run_candor({"ask", q, "--json", "--data-dir", dir.file("data")},
                          {{"CANDOR_SQL_POSTGRES_DSN",
                            cluster.dsn("postgres", "candor_reader")},
                           {"CANDOR_SQL_BACKEND", "postgres"},
                           {"CANDOR_LLM_PROVIDER", "local"}});
  BOOST_REQUIRE_MESSAGE(on_pg.exit_code == 0, on_pg.err);
  auto rows = [](const std::string& out) {
    auto at = out.find("\"rows\":");
    return at == std::string::npos ? std::string{}
                                   : out.substr(at, out.find(']', at) - at);
  };
  BOOST_TEST(!rows(on_pg.out).empty(), on_pg.out);
  BOOST_TEST(rows(on_pg.out) == rows(on_sqlite.out));
  BOOST_TEST(has(on_pg.out, "\"status\":\"answered\""), on_pg.out);
  // ... and refuses to start as a role that can read more than the
  // catalog allows (here the administrator).
  auto admin = run_candor({"ask", q, "--data-dir", dir.file("data")},
                          {{"CANDOR_SQL_POSTGRES_DSN", cluster.dsn()},
                           {"CANDOR_SQL_BACKEND", "postgres"}});
  BOOST_TEST(admin.exit_code == 2);
  BOOST_TEST(has(admin.err, "which the catalog does not allow"), admin.err);
}

BOOST_AUTO_TEST_CASE(configuration_names_what_is_missing) {
  temp_dir dir{"candor-pg-conf"};
  // postgres without a connection string.
  auto r = run_candor({"seed", "--backend", "postgres", "--data-dir",
                       dir.file("data")});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.err, "CANDOR_SQL_POSTGRES_DSN"), r.err);
  // A connection string with the default backend.
  r = run_candor({"seed", "--data-dir", dir.file("data")},
                 {{"CANDOR_SQL_POSTGRES_DSN", "host=/nonexistent"}});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.err, "sql.backend"), r.err);
  // An unknown backend.
  r = run_candor({"seed", "--backend", "mysql", "--data-dir",
                  dir.file("data")});
  BOOST_TEST(r.exit_code == 2);
  // A server that is not there: a runtime failure naming PostgreSQL.
  r = run_candor({"seed", "--backend", "postgres", "--data-dir",
                  dir.file("data")},
                 {{"CANDOR_SQL_POSTGRES_DSN",
                   "host=" + dir.file("nosocket") + " connect_timeout=2"}});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(has(r.err, "PostgreSQL warehouse"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
