#pragma once

// `candor catalog draft`: a catalog written from a SQLite database's schema
// and a sample of its contents, for a person to review and edit.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "domain/error.hpp"

/// The draft holds every table and view with its columns, their declared
/// types in the descriptions, foreign keys as the semantic layer's joins,
/// the complete value lists of low-cardinality text columns, candidate
/// metrics (a count per table and a sum per numeric measure column, each
/// marked `"draft": true`), and a semantic layer for the local planner when
/// some table has a date column. Columns that look personal
/// (personal_data.hpp) are denied with the reason; a table whose every
/// non-key column is personal is denied whole. The result parses with
/// `catalog::parse` and passes `catalog::check_against` on the database it
/// was drafted from.
namespace candor::data {

class database;

struct draft_options {
  /// A text column with at most this many distinct values gets them as
  /// its declared domain (and a dimension in the semantic layer).
  size_t max_values = 12;
  /// Values read per column for the personal-data checks.
  size_t sample_rows = 200;
  /// The file name the description mentions.
  std::string source_name;
  /// Called with (table, done, total) as each table is read.
  std::function<void(const std::string&, size_t, size_t)> progress;
};

struct catalog_draft {
  /// The catalog document, indented for editing: one line per column,
  /// metric and join.
  std::string json;
  /// What a reviewer must look at: each restricted column or table and
  /// why, each table left out and why, the draft metrics.
  std::vector<std::string> notes;
};

/// Reads `db` (only SELECTs and pragmas) and drafts its catalog. Fails with
/// `storage_failed` when the database cannot be read and `config_invalid`
/// when it has no table that a catalog can describe.
domain::outcome<catalog_draft> draft_catalog(database& db,
                                             const draft_options& opts);

} // namespace candor::data
