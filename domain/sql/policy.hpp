#pragma once

// Declares the static SQL policy, the first layer in front of model-written
// SQL: its options, verdicts and check_sql.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

/// The static SQL policy: the first, pure layer in front of model-written
/// SQL (DESIGN.md §5, layer 1). It lexes the text (domain/sql/lexer.hpp),
/// applies named rules, and rewrites the outermost LIMIT. It never touches
/// a database; the authorizer layer (data/sql/guard.hpp) is independent of
/// it and runs on whatever this layer lets through.
namespace candor::domain::sql {

/// What a layer decided about a statement.
enum class verdict_kind : uint8_t {
  allow,       ///< may go on to the next layer
  block,       ///< policy violation: never goes back to the model
  correctable, ///< a mistake the model may fix (syntax, unknown name)
};

std::string_view to_string(verdict_kind x) noexcept;

std::ostream& operator<<(std::ostream& out, verdict_kind x);

/// Tunables of the static policy. The defaults are the product's.
struct policy_config {
  /// Longest accepted SQL text, in bytes.
  size_t max_bytes = 20 * 1024;
  /// The outermost LIMIT is rewritten to at most this many rows.
  int64_t max_limit = 200;
  /// Most sources (tables, subqueries, CTE references) in one FROM
  /// clause, i.e. the widest join.
  int max_tables = 4;
  /// Most sources over the whole statement (every FROM clause together).
  int max_table_refs = 12;
  /// Deepest parenthesis nesting.
  int max_depth = 12;
  /// Most SELECT keywords (subqueries, CTE bodies, compound parts).
  int max_selects = 12;
  /// Most elements in one literal `IN (...)` list or rows in one VALUES.
  int max_in_list = 50;
  /// Most arguments to char(); more is a way to build large strings.
  int max_char_args = 8;
  /// Most copies of CTE bodies the statement expands to. SQLite copies a
  /// CTE's body into the statement for every reference to it and compiles
  /// each copy (in the server, before any sandbox), so CTEs that each
  /// read the previous one k times cost k^levels: nine levels of four
  /// took 10.8 s and 593 MB to prepare. A CTE costs 1 plus the costs of
  /// the CTEs its body names; the statement costs the sum over the names
  /// in its main query. Legitimate analytics stay far below this.
  int64_t max_cte_expansion = 64;
};

/// The outcome of `check_sql`.
struct policy_result {
  verdict_kind verdict = verdict_kind::allow;
  /// Stable name of the rule that decided (see `rule_names()`); empty
  /// when allowed.
  std::string rule;
  /// What was wrong, written for the model and the audit log; empty when
  /// allowed.
  std::string message;
  /// Byte offset in the input of the offending token (0 when not about
  /// one token).
  size_t offset = 0;
  /// When allowed: the statement to run, without its trailing ';' and
  /// trailing comments, with the outermost LIMIT enforced.
  std::string sql;
  /// True when the LIMIT was added or lowered.
  bool limit_applied = false;

  bool allowed() const noexcept {
    return verdict == verdict_kind::allow;
  }
};

/// Checks one model-written statement. Rules, in the order they are tried
/// (the first that fires decides; every `block` rule is tried before any
/// `correctable` one except the input and lexing checks):
///
/// - input: `input_too_long`, `invalid_utf8`, `control_character`,
///   `invisible_character` (bidi controls, zero-width characters, BOM);
/// - lexing: `syntax_error` (correctable: unterminated string, comment or
///   identifier, malformed number or blob, stray character); `empty`
///   (correctable);
/// - `multiple_statements`: anything but whitespace or comments after a
///   ';' (a single trailing ';' is fine);
/// - `not_select`: the first token is not SELECT or WITH;
/// - `forbidden_keyword`: a write, DDL, transaction, PRAGMA, ATTACH, ...
///   keyword anywhere outside strings, comments and quoted identifiers
///   (`replace(` is the string function and is fine);
/// - `schema_table`: sqlite_schema, sqlite_master, sqlite_temp_master,
///   sqlite_sequence, sqlite_stat*, any other `sqlite_` name;
/// - `table_valued_function`: json_each, json_tree, pragma_* and the
///   other eponymous virtual tables, called or named;
/// - `risky_function`: see `risky_functions()`, plus char() with more than
///   `max_char_args` arguments;
/// - `recursive_cte`: RECURSIVE, or a CTE whose body reads itself as a
///   table (FROM c, JOIN c, FROM (c), a comma join, x IN c: SQLite runs
///   those recursively without the keyword);
/// - `natural_join`, `using_join` (the authorizer misses the columns such
///   joins compare, SQL-SANDBOX-NOTES G1), `cross_join`, `comma_join`,
///   `join_without_on`, `trivial_join_condition` (an ON naming no column,
///   like `ON 1=1`);
/// - `too_many_tables`, `nesting_too_deep`, `too_many_selects`,
///   `in_list_too_long`;
/// - `cte_expansion_too_large`: the CTE bodies SQLite would copy while
///   compiling number more than `max_cte_expansion` (every word spelled
///   like a CTE counts as a reference: FROM, JOIN, `x IN c`, subqueries);
/// - `non_literal_limit`: LIMIT or OFFSET (anywhere) not an integer literal;
/// - `unbalanced_parentheses` and `parameter` (correctable).
///
/// Then the LIMIT of the outermost statement is appended (none) or
/// lowered (above `max_limit`), keeping its OFFSET.
policy_result check_sql(std::string_view sql, const policy_config& cfg = {});

/// Every rule name `check_sql` can report.
const std::vector<std::string_view>& rule_names();

/// Keywords that are never allowed outside strings and comments.
const std::vector<std::string_view>& forbidden_keywords();

/// Functions no layer may let through: file, extension and pointer access,
/// blob and string bombs, schema and build introspection.
const std::vector<std::string_view>& risky_functions();

/// Eponymous virtual tables and table-valued functions of a stock SQLite
/// build (the `pragma_` prefix covers one per pragma).
const std::vector<std::string_view>& table_valued_functions();

/// True for a risky function name (any case), including every `sqlite_`
/// name.
bool is_risky_function(std::string_view name) noexcept;

/// True for a table-valued function or eponymous virtual table name (any
/// case), including every `pragma_` name.
bool is_table_valued_function(std::string_view name) noexcept;

/// True for an internal schema table name (any case): sqlite_schema and
/// friends, and every other `sqlite_` name.
bool is_schema_table(std::string_view name) noexcept;

} // namespace candor::domain::sql
