#pragma once

// The SQL guard: a statement compiled on a hardened read-only connection
// under the authorizer, and its bytecode audited, before anything runs.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <sqlite3.h>

#include "data/sqlite.hpp"
#include "domain/error.hpp"
#include "domain/sql/policy.hpp"
#include "data/sql/authorizer.hpp"

/// The validation connection: the second defence layer in front of
/// model-written SQL (DESIGN.md §5, layer 2), independent of the static
/// policy. A statement is compiled (never run) on a hardened read-only
/// connection under an authorizer that allows only SELECT, reads of
/// allowlisted table.column pairs and allowlisted functions; a bytecode
/// audit of the compiled program then closes the authorizer's blind spots
/// (SQL-SANDBOX-NOTES G1: the columns compared by JOIN ... USING and
/// NATURAL JOIN, and a joined table none of whose columns is named, get
/// no column callback).
///
/// `harden_connection` and `sql_authorizer` are public so that the
/// executor process can apply exactly the same settings and callback.
namespace candor::data {

// -- the guard ----------------------------------------------------------------

/// Most bytes SQLite may allocate while `sql_guard::check` compiles one
/// statement (its compiles and the bytecode listing together;
/// `allocation_budget`). None of SQLite's limits bounds how often it
/// copies a CTE body, and the compile runs in the server: nine levels of
/// CTEs that each read the previous one four times took 10.8 s and
/// 593 MB. The legitimate corpus needs at most 0.63 MiB.
inline constexpr int64_t guard_compile_budget = 16 << 20;

/// How many allowed statements a guard remembers by their exact text (a
/// repeat is not compiled again; see `sql_guard::check`).
inline constexpr size_t guard_memo_entries = 256;

/// The verdict of the validation connection on one statement.
struct guard_result {
  domain::sql::verdict_kind verdict = domain::sql::verdict_kind::allow;
  /// Empty when allowed. Blocking: denied_table, denied_column,
  /// denied_action, risky_function, denied_opcode, other_database,
  /// multiple_statements, not_read_only, not_a_query, resource_limit.
  /// Correctable: syntax_error, no_such_table, no_such_column,
  /// unknown_function, sqlite_error.
  std::string rule;
  /// What was wrong, with SQLite's own message when there is one.
  std::string message;
  /// Which check decided: "authorizer", "prepare", "statement" (tail,
  /// read-only and column checks) or "bytecode".
  std::string stage;
  /// The denial behind a block (rule, action, table, column, function).
  sql_denial denial;

  bool allowed() const noexcept {
    return verdict == domain::sql::verdict_kind::allow;
  }
};

/// A hardened read-only connection to the sales database that judges
/// statements without running them. Not thread-safe: one per thread or
/// actor. It snapshots the schema (root pages, columns) when opened, so
/// reopen it after the database file is replaced.
class sql_guard {
public:
  /// Opens `path` read-only (`immutable=1` when asked: no locks, for a
  /// file nobody writes while it is open), hardens it, reads the schema
  /// and installs the authorizer. Fails unless
  /// `install_allocation_budget` has run. `allow.functions` empty means the
  /// default set. An executor process can open one before it installs
  /// its seccomp filter and check each statement before running it.
  static domain::outcome<sql_guard> open(const std::string& path,
                                         sql_allowlist allow,
                                         const sql_limits& limits = {},
                                         bool immutable = false);

  sql_guard(sql_guard&&) noexcept;
  sql_guard& operator=(sql_guard&&) noexcept;
  ~sql_guard();

  /// Judges one statement from one compile of `EXPLAIN <statement>` under
  /// the authorizer: the authorizer's callbacks, the statement's shape (one
  /// statement, from that compile's tail, plus a second compile when there
  /// is a tail to look at; read-only and returning rows), then the bytecode
  /// audit of the program it lists. Nothing is executed. All of it runs
  /// under an `allocation_budget` of `guard_compile_budget` bytes; past it
  /// the statement is blocked with rule `compile_budget`. The last
  /// `guard_memo_entries` allowed texts are remembered: the verdict on a
  /// text cannot change while the guard is open (same allowlist, limits
  /// and schema snapshot), so a repeat returns it without compiling.
  /// Blocked and correctable texts are judged again each time.
  guard_result check(std::string_view sql);

  /// The EXPLAIN QUERY PLAN lines of a statement `check` allowed, joined
  /// with "; " (for tools and diagnostics; `check` does not need them).
  /// Empty when it does not compile.
  std::string query_plan(std::string_view sql);

  /// The connection, for tests and diagnostics; the authorizer stays
  /// installed on it.
  sqlite3* handle() const noexcept;

private:
  struct impl;
  explicit sql_guard(std::unique_ptr<impl> p) noexcept;
  std::unique_ptr<impl> impl_;
};

} // namespace candor::data
