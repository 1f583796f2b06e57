#pragma once

// The static policy for SQL that will run on the PostgreSQL warehouse,
// parsed by PostgreSQL's own parser (libpg_query, PostgreSQL 15), not by
// the SQLite lexer: one SELECT (or WITH ... SELECT), allowlisted
// relations, columns and functions, no system catalogs.

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "data/sql/authorizer.hpp"
#include "domain/sql/policy.hpp"

namespace candor::data {

/// The functions a query on PostgreSQL may call: `default_sql_functions()`
/// plus PostgreSQL's date, text and number helpers (date_trunc, to_char,
/// extract, ...). Never one of `postgres_risky_function()`.
std::set<std::string> postgres_sql_functions();

/// Whether a function is dangerous on PostgreSQL whatever the allowlist
/// says: sleeping, settings, files, large objects, other servers, backend
/// signalling, catalog and session introspection.
bool postgres_risky_function(std::string_view name);

/// Judges `sql` for the PostgreSQL warehouse, with the same verdicts and,
/// where the same thing is wrong, the same rule names as
/// `domain::sql::check_sql`:
/// - `input_too_long`, `invalid_utf8`, `control_character`,
///   `invisible_character`, `nesting_too_deep` (parentheses), `empty`,
///   `syntax_error` (correctable, with the
///   parser's message and offset), `multiple_statements`, `not_select`
///   (COPY, SET, DO, EXPLAIN, any write or DDL);
/// - `forbidden_keyword` (SELECT INTO, FOR UPDATE/SHARE), `parameter`;
/// - `schema_table` (a schema other than `sales`, `pg_*`,
///   `information_schema`), `table_not_allowed` (a table the allowlist does
///   not hold), `denied_column` (a column no allowed table lets be read,
///   or `*` over a table with withheld columns);
/// - `table_valued_function` (a function in FROM), `risky_function`
///   (`postgres_risky_function`, casts to reg* types, CURRENT_USER and
///   its kin), `function_not_allowed`;
/// - `recursive_cte` (RECURSIVE, or a WITH query that reads itself),
///   `natural_join`, `cross_join` (a join without ON or USING),
///   `comma_join`, `trivial_join_condition` (ON 1 = 1, ON a.x > 0),
///   `too_many_tables`, `too_many_selects`, `in_list_too_long` (IN lists
///   and VALUES), `non_literal_limit` (LIMIT or OFFSET that is not a
///   non-negative number); a top-level VALUES is `not_select`.
/// When allowed, `sql` is the statement with the outermost LIMIT at most
/// `cfg.max_limit`: a smaller literal is kept, a larger one replaced in
/// place, and a statement without one gets `LIMIT n` on a line of its own
/// (never a wrapping SELECT, which would add nesting).
/// The columns an allowed table has but the allowlist leaves out (the
/// personal columns of customers): table -> column names.
using withheld_columns = std::map<std::string, std::set<std::string>>;

/// `withheld`: see `withheld_columns`; such a column is refused by name
/// (even when the query defines an alias of that name) and through `*`.
domain::sql::policy_result
check_postgres_sql(std::string_view sql, const sql_allowlist& allow,
                   const withheld_columns& withheld,
                   const domain::sql::policy_config& cfg = {});

class catalog;

/// The PostgreSQL policy's inputs taken from the catalog: its allowed
/// tables and columns, `postgres_sql_functions()`, and the denied columns
/// of the allowed tables as withheld.
struct postgres_rules {
  sql_allowlist allow;
  withheld_columns withheld;
  /// The tables the catalog denies whole (customer_contacts).
  std::set<std::string> denied_tables;

  static postgres_rules from(const catalog& cat);

  /// `check_postgres_sql`, and a second opinion on what PostgreSQL's
  /// parser cannot read (SQLite's dialect, a statement cut short): such a
  /// statement is blocked, not sent back for correction, when the SQLite
  /// lexer's policy (`domain::sql::check_sql`) blocks it, or when one of
  /// its words names a withheld column or a denied table. Otherwise it
  /// stays a correctable `syntax_error`.
  domain::sql::policy_result
  check(std::string_view sql, const domain::sql::policy_config& cfg = {}) const;
};

} // namespace candor::data
