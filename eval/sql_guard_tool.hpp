#pragma once

// Declares the core of `candor sql-guard`, its options and its summary.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "data/sql/executor.hpp"
#include "domain/error.hpp"

/// The core of `candor sql-guard`: an operator feeds
/// statements as JSON lines and sees, for each, what every defence layer
/// in front of model-written SQL decides, without a model in the loop.
namespace candor::eval {

/// What `run_sql_guard_tool` printed, by overall verdict.
struct guard_tool_summary {
  int64_t allowed = 0;
  int64_t blocked = 0;
  /// Bad input lines and statements a layer found correctable.
  int64_t errors = 0;
};

/// How the executor layer runs, when it runs at all.
struct guard_tool_options {
  /// When set, every statement also runs in a sandboxed executor process
  /// started with these settings (`db_path` is filled in), one process
  /// reused until a statement kills it.
  std::optional<data::executor_settings> executor;
  /// The executor's deadline per statement.
  int64_t deadline_ms = 5000;
  int32_t max_rows = 200;
  /// The warehouse's reading role (run_sql_guard_tool_postgres).
  std::string postgres_dsn;
};

/// Longest accepted input line, in bytes (without the newline).
inline constexpr size_t guard_tool_max_line = 100 * 1024;

/// Reads JSON lines `{"id": <string|number>, "sql": "<statement>"}` from
/// `in` and prints one JSON line per input line to `out` (blank lines are
/// skipped; a trailing '\r' is ignored):
///
/// `{"id", "line", "verdict": "allow"|"block"|"error", "layer", "rule",
///   "reason", "layers": {"static_policy", "authorizer", "executor"}}`
///
/// Each layer is judged on its own: the authorizer (data::sql_guard) sees
/// the statement even when the static policy refused it (the policy's
/// rewritten text when it allowed it, as in production). The overall
/// verdict follows the pipeline order, policy then authorizer: the first
/// layer that does not allow decides. A `block` gives verdict "block"; a
/// `correctable` problem gives verdict "error". `layer` is "sql_policy"
/// or "sql_authorizer" (null when allowed), `rule` and `reason` are that
/// layer's (null when allowed).
///
/// The executor layer runs the statement (the policy's rewritten text when
/// the policy allowed it) in a sandboxed executor process when
/// `opts.executor` is set: "allow" with `rowCount`, `truncated` and
/// `elapsedUs` when it ran, "block" with rule `sql_failed` (SQLite refused
/// or aborted it, e.g. the authorizer or the heap limit), `sql_timeout`
/// (killed at the deadline) or `executor_died`. It comes last in the
/// pipeline: a statement both earlier layers allow but the executor does
/// not is blocked with layer "sql_executor". Without `opts.executor` it
/// reports "not_available".
///
/// A bad input line (not JSON, not an object, missing or empty `sql`,
/// `sql` not a string, `id` neither a string nor a number, longer than
/// `guard_tool_max_line`) gives `{"id": <id or null>, "line", "verdict":
/// "error", "reason"}` and processing goes on. An over-long line keeps
/// its id when `"id"` is its first member; otherwise the reason says so.
///
/// Errors: those of `data::catalog::load_default` and
/// `data::sql_guard::open` (e.g. a missing sales database), and
/// `ec::internal` when reading `in` or writing `out` fails.
domain::outcome<guard_tool_summary>
run_sql_guard_tool(std::istream& in, std::ostream& out,
                   const std::string& sales_db_path,
                   const guard_tool_options& opts = {});

/// The same on the PostgreSQL warehouse at `opts.postgres_dsn` (the
/// reading role), with the layers that stand there: `static_policy` (the
/// pg_query policy), `role_privileges` (the statement run in a READ WRITE
/// transaction that is always rolled back: "block" with rule
/// `role_privilege` when the role's grants refuse it) and `executor` (as
/// the sandbox runs it: READ ONLY, statement_timeout, the deadline;
/// "block" with `read_only_transaction`, `role_privilege`, `sql_failed` or
/// `sql_timeout`). The overall verdict follows that order. TOOLS ONLY:
/// the role layer runs statements read-write to show what the grants alone
/// stop. Errors: the catalog's, and `sql_executor_failed` when the
/// warehouse cannot be reached.
domain::outcome<guard_tool_summary>
run_sql_guard_tool_postgres(std::istream& in, std::ostream& out,
                            const guard_tool_options& opts);

} // namespace candor::eval
