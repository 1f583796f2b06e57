// One seeded PostgreSQL warehouse per test executable.

#include "tests/support/pg_warehouse.hpp"

#include <memory>
#include <stdexcept>

#include "data/pg/connection.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/postgres.hpp"
#include "tests/support/pg_cluster.hpp"
#include "tests/support/sales_db.hpp"

namespace candor::test {

namespace {

struct holder {
  pg_cluster cluster;
  pg_warehouse w;

  holder() {
    auto c = data::pg::connection::open(cluster.dsn());
    if (!c)
      throw std::runtime_error(c.err().message);
    if (auto err = c->exec("CREATE DATABASE warehouse"))
      throw std::runtime_error(err.message);
    w.admin_dsn = cluster.dsn("warehouse");
    w.reader_dsn = cluster.dsn("warehouse", "candor_reader");
    w.sqlite_path = shared_sales_db();
    auto copied = data::copy_sales_to_postgres(w.sqlite_path, w.admin_dsn, {});
    if (!copied)
      throw std::runtime_error(copied.err().message);
    auto cat = data::catalog::load_default();
    if (!cat)
      throw std::runtime_error(cat.err().message);
    if (auto err = data::provision_postgres_reader(w.admin_dsn, *cat,
                                                   "candor_reader", {}))
      throw std::runtime_error(err.message);
  }
};

} // namespace

const pg_warehouse& shared_pg_warehouse() {
  // Destroyed at exit: the cluster stops and its directory goes.
  static holder h;
  return h.w;
}

} // namespace candor::test
