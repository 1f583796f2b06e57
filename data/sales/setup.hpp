#pragma once

// Declares the data branch's startup (prepare_sales) and what it hands to
// the actors.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "domain/error.hpp"

/// Startup of the data branch: the sales database is created on first
/// start, checked against the catalog, and described for the model.
namespace candor::domain {
struct config;
} // namespace candor::domain

namespace candor::data {

/// What the data branch needs once the server runs. Immutable after
/// `prepare_sales` returns; shared between actors.
struct sales_setup {
  /// `<data-dir>/sales.db`; empty on the PostgreSQL warehouse.
  std::string path;
  /// "sqlite", or "postgres" (`prepare_postgres_sales`).
  std::string backend = "sqlite";
  /// The catalog the database was checked against.
  std::shared_ptr<const catalog> cat;
  /// `catalog::schema_prompt` of the database: the model's schema text.
  std::string schema_text;
  /// Rows per table (every table of the database, in name order).
  std::vector<table_rows> rows;
  /// True when this start generated the database.
  bool created = false;

  /// A warehouse to answer data questions from.
  bool present() const noexcept {
    return !path.empty() || backend == "postgres";
  }
};

/// Creates `<data_dir>/sales.db` with `seed` when it is absent (reporting
/// `progress`), then checks it against `cat` and builds the schema text.
///
/// Errors: `config_invalid` when the catalog and the database disagree
/// (the message names the first problem and says how to fix it; `issues`
/// lists all of them); `storage_failed` when the database cannot be
/// generated or read.
domain::outcome<sales_setup> prepare_sales(const std::string& data_dir,
                                           uint64_t seed,
                                           std::shared_ptr<const catalog> cat,
                                           const sales_progress& progress);

/// The database and catalog the configuration names: `sql.database` (a
/// user's SQLite file, read as it is) or the generated
/// `<data-dir>/sales.db`, and `sql.catalog` or the built-in catalog. Paths
/// are made absolute (the executor processes get them).
std::string sales_db_path(const domain::config& cfg);
std::string catalog_path(const domain::config& cfg);
/// Loads `catalog_path(cfg)`; an error names the file.
domain::outcome<catalog> load_catalog(const domain::config& cfg);

/// prepare_sales for the configuration: with `sql.database` set, that file
/// is checked against the catalog and never generated or written (a
/// missing file is `config_invalid`, naming the setting); otherwise
/// prepare_sales on the data directory and `sql.seed`.
domain::outcome<sales_setup>
prepare_configured_sales(const domain::config& cfg,
                         std::shared_ptr<const catalog> cat,
                         const sales_progress& progress);

/// Rows per table of an open database, in table-name order (SQLite's own
/// `sqlite_*` tables left out).
domain::outcome<std::vector<table_rows>> count_rows(database& db);

} // namespace candor::data
