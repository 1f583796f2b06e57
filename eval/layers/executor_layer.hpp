#pragma once

// Declares the executor layer as `candor sql-guard` and `candor layers`
// run it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "data/sql/executor.hpp"

/// The executor layer as the audit tools run it (`candor sql-guard`,
/// `candor layers`): one sandboxed executor process, started on first use
/// and restarted after a statement killed it.
namespace candor::eval {

/// What the executor layer did with one statement.
struct executor_verdict {
  /// "allow" (it ran), "block" (refused, failed or killed), "error" (no
  /// executor could be started) or "not_available" (not asked for).
  std::string verdict;
  /// When blocked: "sql_failed" (SQLite refused or aborted it), "sql_timeout"
  /// (killed at the deadline) or "executor_died"; "executor_unavailable"
  /// for an error; empty otherwise.
  std::string rule;
  std::string message;
  /// When it ran.
  int64_t row_count = 0;
  bool truncated = false;
  int64_t elapsed_us = 0;

  bool ran() const noexcept {
    return verdict == "allow";
  }
};

class executor_layer {
public:
  /// `settings` unset: every verdict is "not_available".
  executor_layer(std::optional<data::executor_settings> settings,
                 int64_t deadline_ms, int32_t max_rows);

  /// Runs `sql` in the process with the deadline.
  executor_verdict judge(std::string_view sql);

private:
  std::optional<data::executor_settings> settings_;
  int64_t deadline_ms_;
  int32_t max_rows_;
  data::executor_process proc_;
};

} // namespace candor::eval
