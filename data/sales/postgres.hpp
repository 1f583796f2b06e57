#pragma once

// The sales warehouse on PostgreSQL: the generated database copied into a
// schema of its own, and the same fingerprint and summary read from there.

#include <string>
#include <string_view>

#include "data/sales/gen.hpp"
#include "data/sales/setup.hpp"

namespace candor::data {

namespace pg {
class connection;
} // namespace pg

/// The schema that holds the sales tables on PostgreSQL.
inline constexpr std::string_view postgres_sales_schema = "sales";

/// Copies the sales database at `sqlite_path` into the schema `sales` of
/// the PostgreSQL database at `dsn`, in one transaction (a failure leaves
/// nothing behind): the tables from the file's own DDL (standard SQL: the
/// same columns, keys, checks and references), every row through
/// `COPY ... FROM STDIN` in primary-key order, then the indexes; then
/// `ANALYZE`. An existing `sales` schema is an error unless `overwrite`.
/// After the commit the fingerprint read back from PostgreSQL must equal
/// the file's, or the schema is dropped and the copy fails.
/// Errors: `ec::storage_failed` (connection, SQL, a fingerprint that
/// differs) or `ec::invalid_request` (the schema exists).
domain::outcome<sales_summary>
copy_sales_to_postgres(const std::string& sqlite_path, const std::string& dsn,
                       const sales_progress& progress, bool overwrite = false);

/// The fingerprint of the `sales` schema: the same canonical dump as
/// `sales_fingerprint` (tables by name; columns with the type they were
/// declared with, integer -> INTEGER, text -> TEXT, double precision ->
/// REAL; rows in primary-key order, text keys in byte order).
domain::outcome<std::string> postgres_sales_fingerprint(pg::connection& c);

/// Row counts, order date range and fingerprint of the `sales` schema.
/// An empty summary (no tables) when the schema does not exist.
domain::outcome<sales_summary> summarize_postgres_sales(const std::string& dsn);

} // namespace candor::data

namespace candor::data {

class catalog;

/// What the warehouse's reading role may spend, set on the role itself so
/// every session of it starts with them.
struct reader_limits {
  int64_t statement_timeout_ms = 5000;
  int64_t idle_in_transaction_ms = 10000;
  int64_t work_mem_kb = 16 * 1024;
  int64_t temp_file_limit_kb = 256 * 1024;
};

/// Creates (or brings up to date) the role candor connects to the warehouse
/// as, through an administrator's connection at `admin_dsn`:
/// - LOGIN, no superuser, no inheritance of other roles' rights;
/// - USAGE on schema `sales`, and SELECT on the catalog's allowed columns of
///   its allowed tables only: a denied table gets nothing, a table with
///   personal columns gets a column-level grant without them;
/// - on the role: `default_transaction_read_only`, `statement_timeout`,
///   `idle_in_transaction_session_timeout`, `work_mem`, `temp_file_limit`
///   and `search_path = sales`;
/// - in this database, EXECUTE taken from PUBLIC on the functions that
///   sleep, change settings, read files or signal other sessions
///   (`pg_sleep*`, `set_config`, `pg_read_*file`, `pg_ls_dir`, `lo_*`,
///   `pg_terminate_backend`, `pg_cancel_backend`, `pg_reload_conf`).
/// `role` must match [a-z_][a-z0-9_]{0,62}. Errors: `ec::storage_failed`
/// or `ec::invalid_request` (a bad role name).
domain::error provision_postgres_reader(const std::string& admin_dsn,
                                        const catalog& cat,
                                        const std::string& role,
                                        const reader_limits& limits);

/// Startup of the data branch on the PostgreSQL warehouse, through the
/// reading role's `dsn`: every allowed catalog column must be readable and
/// nothing else (an administrator's connection, or a role with personal
/// columns, is refused), rows are counted per allowed table, and the
/// schema text is the SQLite one's (rebuilt from the same DDL) headed by
/// the dialect's rules. Errors: `config_invalid` (a mismatch, saying how
/// to fix it), `storage_failed` (cannot connect or query).
domain::outcome<sales_setup>
prepare_postgres_sales(const std::string& dsn,
                       std::shared_ptr<const catalog> cat);

} // namespace candor::data
