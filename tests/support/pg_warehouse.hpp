#pragma once

// Test helper: one PostgreSQL warehouse for the whole test executable, made
// on first use (a throw-away cluster, the shared sales database copied in,
// the reading role provisioned) and removed at exit.

#include <string>

namespace candor::test {

struct pg_warehouse {
  /// The superuser's connection string (database `warehouse`).
  std::string admin_dsn;
  /// The reading role's (`candor_reader`, statement_timeout 5 s).
  std::string reader_dsn;
  /// The SQLite file it was copied from (`shared_sales_db()`).
  std::string sqlite_path;
};

/// The shared warehouse; throws std::runtime_error when it cannot be made.
const pg_warehouse& shared_pg_warehouse();

} // namespace candor::test
