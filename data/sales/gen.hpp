#pragma once

// Declares the seeded generator of the fictional sales database and the
// summary it reports.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// The sales database of Kestrel Cycle Works, generated from a seed.
///
/// `generate_sales` writes a fresh SQLite file with ten tables (regions,
/// categories, channels, products, customers, customer_contacts, orders,
/// order_items, refunds, payments) covering every day of 2024 and 2025. The
/// data follow the company documents in data/kb: six categories, the bike
/// families Strada, Ridgeline, Canal, Volt City, Volt Trek and Fledgling,
/// four channels, the shipping zones A-E, the payment rules (iDEAL in the
/// Netherlands, Klarna for consumers in NL/BE/DE/AT between EUR 35 and
/// EUR 1,500, bank transfer for business and club accounts), no e-bikes to
/// zone E, a marketplace range without service or e-bikes, two stores
/// (Utrecht, closed Mondays; Ghent, closed Sundays and Mondays).
///
/// Determinism: one xoshiro256** stream seeded through splitmix64 drives
/// every choice, with integer arithmetic and IEEE basic operations only
/// (no `std::*_distribution`, no libm), so a seed gives the same file
/// contents, hence the same fingerprint, on any conforming platform.
///
/// Invariants the generator guarantees (and the tests check): money is in
/// INTEGER cents; `orders.total_cents` equals the sum of its items'
/// `line_total_cents`; `line_total_cents = quantity * unit_price_cents -
/// discount_cents`; a refund belongs to one item of a captured order and
/// never exceeds that item's line total; an order is `refunded` exactly when
/// its refunds add up to its total, `partially_refunded` when they add up to
/// less, `paid` when it has none; every foreign key resolves.
///
/// Personal data: `customers.name`, `customers.email` and every column of
/// `customer_contacts` hold (fictional, `.example`) personal data. The
/// catalog (conf/catalog.json) denies them. No index covers a personal
/// column, so no index lookup can leak one either.
namespace candor::data {

class database;

/// The seed `candor seed` and `serve` use when none is given.
inline constexpr uint64_t default_sales_seed = 42;

/// The first and last order dates (inclusive).
inline constexpr std::string_view sales_first_day = "2024-01-01";
inline constexpr std::string_view sales_last_day = "2025-12-31";

/// Rows in one table.
struct table_rows {
  std::string table;
  int64_t rows = 0;
};

/// What a sales database holds: row counts and a content fingerprint.
struct sales_summary {
  /// One entry per table, in table-name order.
  std::vector<table_rows> tables;
  /// The sum over `tables`.
  int64_t total_rows = 0;
  /// Lowest and highest `orders.order_date` (YYYY-MM-DD).
  std::string first_order_date;
  std::string last_order_date;
  /// SHA-256 (lower-case hex) of the canonical dump, see `sales_fingerprint`.
  std::string fingerprint;
  /// The seed; 0 when the summary was read from an existing file.
  uint64_t seed = 0;

  /// Rows in `table`, or -1 when there is no such table.
  int64_t rows(std::string_view table) const noexcept;
};

/// Progress callback: `stage` names the current step ("schema", "catalog
/// data", "customers", "orders", "indexes", "checks", "fingerprint",
/// "done"); `fraction` is the overall progress in [0, 1], non-decreasing.
using sales_progress
  = std::function<void(std::string_view stage, double fraction)>;

/// The DDL of the generated tables (the indexes come later): what
/// `generate_sales` creates and `copy_sales_to_postgres` copies.
const char* sales_schema_sql() noexcept;

/// Generates the sales database at `path`.
///
/// The file is built as `<path>.tmp` (a stale one is removed first) in one
/// transaction with prepared statements, checked (`PRAGMA quick_check`,
/// `PRAGMA foreign_key_check`, the totals invariant), closed, and renamed
/// over `path` atomically. An existing `path` is an error unless
/// `overwrite` is true. On any failure nothing is left at `path` or
/// `<path>.tmp`. `progress` may be empty.
///
/// Errors: `ec::storage_failed` (I/O, SQLite, a failed check) or
/// `ec::invalid_request` (path exists, empty path).
domain::outcome<sales_summary> generate_sales(const std::string& path,
                                              uint64_t seed,
                                              const sales_progress& progress,
                                              bool overwrite = false);

/// Fingerprint of a sales database: SHA-256 over a canonical dump of every
/// table except SQLite's own `sqlite_*` tables. The dump lists the tables in
/// name order; for each, its name and column names and types, then every
/// row in primary-key order with each value tagged by storage class (an
/// integer in decimal, a real as its IEEE-754 bits, text and blobs with
/// their byte length). Independent of page layout, indexes and file size.
domain::outcome<std::string> sales_fingerprint(const std::string& path);

/// The same fingerprint for an open connection.
domain::outcome<std::string> sales_fingerprint(database& db);

/// Row counts, order date range and fingerprint of an existing database,
/// opened read-only (for `/health` and `candor seed` on an existing file).
domain::outcome<sales_summary> summarize_sales(const std::string& path);

/// The same summary for an open connection.
domain::outcome<sales_summary> summarize_sales(database& db);

/// The user tables of a database (not SQLite's own), by name.
domain::outcome<std::vector<std::string>> user_tables(database& db);

/// The integrity checks `generate_sales` runs before it commits: `PRAGMA
/// quick_check`, `PRAGMA foreign_key_check`, order totals equal the sum of
/// their items, refunds within the order total and on items of their own
/// order. Errors: `ec::storage_failed` naming the failed check.
domain::error check_sales(database& db);

} // namespace candor::data
