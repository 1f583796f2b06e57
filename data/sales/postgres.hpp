#pragma once

// The sales warehouse on PostgreSQL: the generated database copied into a
// schema of its own, and the same fingerprint and summary read from there.

#include <string>
#include <string_view>

#include "data/sales/gen.hpp"

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
