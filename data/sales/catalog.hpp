#pragma once

// The sales catalog: which tables and columns model-written SQL may use,
// their value domains, and the schema text given to the model.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// The sales catalog (conf/catalog.json): which tables and columns of the
/// sales database the model may use, what they mean, their synonyms, the
/// declared value domains of categorical columns, the metric definitions,
/// and what is denied (personal data).
///
/// It is the single source of the allowlist: the SQL authorizer asks
/// `table_allowed` / `column_allowed`, the domain check asks `value_domain`,
/// and the model's schema text comes from `schema_prompt`. A table or column
/// that the catalog does not mention is neither allowed nor denied, and
/// `check_against` refuses a database that has one.
///
/// Names are SQL identifiers and compare ASCII case-insensitively, as in
/// SQLite. An immutable value: safe to share between threads once built.
namespace candor::data {

class database;

/// One allowed column.
struct catalog_column {
  std::string name;
  std::string description;
  std::vector<std::string> synonyms;
  /// The declared value domain of a categorical column; empty when the
  /// column has none (free text, numbers, dates, keys).
  std::vector<std::string> values;
};

/// A denied table or column and why (the reason is for operators; it never
/// reaches the model).
struct catalog_denial {
  std::string name;
  std::string reason;
};

/// One allowed table.
struct catalog_table {
  std::string name;
  std::string description;
  std::vector<std::string> synonyms;
  /// Allowed columns, in catalog order.
  std::vector<catalog_column> columns;
  /// Columns that exist but must never be read.
  std::vector<catalog_denial> denied_columns;
};

/// A named metric with its definition as a SQL snippet.
struct catalog_metric {
  std::string name;
  std::string description;
  std::vector<std::string> synonyms;
  std::string sql;
  /// Written by `candor catalog draft` and not reviewed yet (`"draft":
  /// true`): served like any metric, flagged by `candor catalog check`.
  bool draft = false;
};

class catalog {
public:
  // -- construction -----------------------------------------------------------

  /// Parses and validates a catalog document. Errors (`ec::config_invalid`)
  /// name the field, e.g. `tables[2].columns[0].values: expected a
  /// non-empty array of strings`: malformed JSON (with its offset), a
  /// missing, mistyped or unknown field, a name that is not a lower-case
  /// SQL identifier, a duplicate table, column, value or metric, a table or
  /// column both allowed and denied.
  static domain::outcome<catalog> parse(std::string_view json);

  /// Reads and parses the file at `path`.
  static domain::outcome<catalog> load(const std::string& path);

  /// `<CANDOR_SOURCE_DIR>/conf/catalog.json`.
  static std::string default_path();

  /// `load(default_path())`.
  static domain::outcome<catalog> load_default();

  catalog() = default;

  // -- the allowlist ----------------------------------------------------------

  /// True when `table` is an allowed table.
  bool table_allowed(std::string_view table) const;

  /// True when `table` is allowed and `column` is one of its allowed
  /// columns. False for denied columns, columns of denied tables and
  /// anything unknown.
  bool column_allowed(std::string_view table, std::string_view column) const;

  /// True when the whole table is denied.
  bool table_denied(std::string_view table) const;

  /// True when the column is denied explicitly or belongs to a denied
  /// table.
  bool column_denied(std::string_view table, std::string_view column) const;

  /// The declared domain of an allowed column, or nullptr when the column
  /// is unknown, denied or has no domain.
  const std::vector<std::string>* value_domain(std::string_view table,
                                               std::string_view column) const;

  /// The allowed table, or nullptr.
  const catalog_table* find_table(std::string_view table) const;

  /// The allowed column, or nullptr.
  const catalog_column* find_column(std::string_view table,
                                    std::string_view column) const;

  /// Allowed table -> its allowed columns (lower case): the shape of
  /// `sql_allowlist::tables` in data/sql/guard.hpp. Denied tables and
  /// columns are absent.
  std::map<std::string, std::set<std::string>> allowed_columns() const;

  /// Allowed tables in catalog order.
  const std::vector<catalog_table>& tables() const noexcept {
    return tables_;
  }

  const std::vector<catalog_denial>& denied_tables() const noexcept {
    return denied_tables_;
  }

  const std::vector<catalog_metric>& metrics() const noexcept {
    return metrics_;
  }

  /// General notes for the model (units, dates, defaults).
  const std::vector<std::string>& guidance() const noexcept {
    return guidance_;
  }

  const std::string& description() const noexcept {
    return description_;
  }

  /// The `semantic` object (the planner's semantic layer) as JSON text;
  /// empty when the catalog has none.
  const std::string& semantic_json() const noexcept {
    return semantic_;
  }

  // -- the database -----------------------------------------------------------

  /// Compares the catalog with `db` (read through `sqlite_schema` and
  /// `pragma_table_info`, then `SELECT DISTINCT` on every column with a
  /// domain). Returns `ec::config_invalid` naming the first problem in its
  /// message and every problem in `issues` (path `table` or `table.column`)
  /// when: an allowed or denied table or column is missing from the
  /// database; a table, view or column of the database is neither allowed
  /// nor denied; a column holds a value outside its declared domain.
  /// Returns a `storage_failed` error when the database cannot be read.
  domain::error check_against(database& db) const;

  /// The schema text for the model: for each allowed table a `CREATE
  /// TABLE` statement rebuilt from the introspected columns (declared
  /// type, PRIMARY KEY, NOT NULL, REFERENCES to allowed columns) with the
  /// denied columns and denied tables left out, each line commented with
  /// the catalog's description, synonyms and value domain; then the metric
  /// definitions with their SQL, then the guidance notes. Nothing denied
  /// appears in it, not even the denial reasons. Call after
  /// `check_against` succeeded.
  domain::outcome<std::string> schema_prompt(database& db) const;

private:
  const catalog_table* lookup(std::string_view table) const;

  std::string description_;
  std::vector<catalog_table> tables_;
  std::vector<catalog_denial> denied_tables_;
  std::vector<catalog_metric> metrics_;
  std::vector<std::string> guidance_;
  std::string semantic_;
  /// Lower-case table name -> index into tables_.
  std::map<std::string, size_t, std::less<>> table_index_;
};

} // namespace candor::data
