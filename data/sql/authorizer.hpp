#pragma once

// The connection settings and the SQLite authorizer every connection that
// sees model-written SQL gets (implemented in data/sql/authorizer.cpp); the
// guard that uses them: data/sql/guard.hpp.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <sqlite3.h>

#include "data/sqlite.hpp"
#include "domain/error.hpp"

namespace candor::data {

// -- configuration ------------------------------------------------------------

/// What model-written SQL may touch. Names compare case-insensitively.
struct sql_allowlist {
  /// table -> columns that may be read. A table that is absent is denied
  /// entirely; a column that is absent is denied (e.g. customers.email).
  std::map<std::string, std::set<std::string>> tables;
  /// SQL functions the authorizer lets through (see
  /// `default_sql_functions`).
  std::set<std::string> functions;
};

/// Aggregates, window functions and the plain scalar helpers an analytics
/// query needs (text, numbers, dates, null handling). Never a function of
/// `domain::sql::risky_functions()`.
std::set<std::string> default_sql_functions();

/// `sqlite3_limit` values for a connection that sees model-written SQL
/// (SQL-SANDBOX-NOTES §1b; the value length follows DESIGN.md §5).
struct sql_limits {
  int length = 100000;
  int sql_length = 100000;
  int column = 100;
  int expr_depth = 50;
  int compound_select = 5;
  int vdbe_op = 25000;
  int function_arg = 8;
  int attached = 0;
  int like_pattern_length = 100;
  int variable_number = 10;
  int trigger_depth = 10;
  int worker_threads = 0;
};

/// Opens `path` the way every connection that sees model-written SQL must
/// be opened: as the URI `file:<path>?mode=ro` (plus `&immutable=1` when
/// asked), with SQLITE_OPEN_READONLY | URI | NOFOLLOW | EXRESCODE |
/// PRIVATECACHE. Fails on a missing file or a symbolic link.
/// `single_thread` adds SQLITE_OPEN_NOMUTEX: no connection mutex around
/// every API call, for a connection only one thread uses at a time (the
/// SQL guard, the executor process).
domain::outcome<database> open_read_only(const std::string& path,
                                         bool immutable = false,
                                         bool single_thread = false);

/// Applies the connection-level defences: DEFENSIVE on, TRUSTED_SCHEMA
/// off, extension loading off (both ways), FTS3 tokenizer off,
/// double-quoted strings off, triggers and views off when the schema has
/// none, the given limits, and `query_only=1`, `temp_store=MEMORY`,
/// `mmap_size=0`, `cell_size_check=ON`. Loads the schema before
/// returning. Run it before installing the authorizer.
domain::error harden_connection(database& db, const sql_limits& limits = {});

// -- the authorizer -----------------------------------------------------------

/// One refused authorizer (or bytecode audit) request.
struct sql_denial {
  /// "denied_table", "denied_column", "denied_action", "risky_function",
  /// "unknown_function", "denied_opcode" or "other_database".
  std::string rule;
  /// The authorizer action ("read", "insert", "pragma", "function", ...)
  /// or, for the audit, the opcode ("OpenWrite").
  std::string action;
  std::string table;
  std::string column;
  std::string function;
};

/// The deny-by-default authorizer callback and what it saw. Install it on
/// a hardened connection (after `harden_connection`, so that setup is not
/// judged by it); it must outlive the installation.
class sql_authorizer {
public:
  /// Takes the allowlist and the connection's schema (table, index and
  /// virtual-table names, read before the authorizer is installed) so
  /// that the empty-column reads SQLite reports for `count(*)` and for
  /// materialized CTEs (SQL-SANDBOX-NOTES G2) are judged correctly.
  sql_authorizer(sql_allowlist allow, std::set<std::string> schema_names,
                 std::set<std::string> module_names);

  /// Reads the schema and module names of `db` (no authorizer may be
  /// installed yet) and builds the authorizer.
  static domain::outcome<sql_authorizer> for_connection(database& db,
                                                        sql_allowlist allow);

  /// Installs this object as `db`'s authorizer.
  void install(sqlite3* db) noexcept;

  /// Removes any authorizer from `db`.
  static void uninstall(sqlite3* db) noexcept;

  /// Denials since the last `clear()`, in callback order.
  const std::vector<sql_denial>& denials() const noexcept {
    return denials_;
  }

  void clear() noexcept {
    denials_.clear();
  }

  /// When on, a function that is neither allowlisted nor risky is
  /// recorded as an `unknown_function` denial but *allowed*, so that the
  /// rest of the statement is still judged (a denial stops SQLite from
  /// resolving what follows, which would hide a denied column behind a
  /// correctable mistake). Only for a caller that refuses any statement
  /// with a denial after compiling it, as `sql_guard` does; off by default.
  void defer_unknown_functions(bool on) noexcept {
    defer_unknown_functions_ = on;
  }

  const sql_allowlist& allowlist() const noexcept {
    return allow_;
  }

  /// The decision for one callback (SQLITE_OK or SQLITE_DENY); records a
  /// denial. Public for tests.
  int decide(int action, const char* a1, const char* a2, const char* db,
             const char* inner) noexcept;

  /// True when `table`.`column` may be read ("" for a whole-row read).
  bool column_allowed(std::string_view table, std::string_view column) const;

  bool function_allowed(std::string_view name) const;

private:
  static int callback(void* self, int action, const char* a1, const char* a2,
                      const char* db, const char* inner) noexcept;

  sql_allowlist allow_;
  std::set<std::string> schema_names_;
  std::set<std::string> module_names_;
  std::vector<sql_denial> denials_;
  bool defer_unknown_functions_ = false;
};

/// Name of an authorizer action code ("insert", "pragma", ...).
std::string_view authorizer_action_name(int action) noexcept;

} // namespace candor::data
