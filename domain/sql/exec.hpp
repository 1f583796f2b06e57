#pragma once

// Declares what the SQL sandbox is asked to run and what an executor
// process returns: the contract between the sandbox actor and the executor
// code in data/sql/, kept here so neither layer includes the other.

#include <cstdint>
#include <string>
#include <vector>

#include "domain/types.hpp"

namespace candor::domain {

/// One statement for the SQL sandbox. The statement has passed the static
/// policy and the validation connection already; the executor applies its
/// own layers regardless.
struct sql_exec_request {
  std::string request_id;
  /// The request's arrival: with `request_id`, what a cancel names.
  int64_t received_us = 0;
  std::string sql;
  int32_t max_rows = 200;  ///< rows kept; more set `truncated`
  int32_t deadline_ms = 0; ///< 0: the sandbox's configured deadline
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sql_exec_request& x) {
  return f(x.request_id, x.received_us, x.sql, x.max_rows, x.deadline_ms);
}

/// What an executor returned for one statement. Failures travel as errors
/// instead: `sql_timeout` (killed at the deadline), `sql_executor_failed`
/// (the process died), `sql_failed` (SQLite refused or aborted it, e.g. the
/// heap limit; the message says why).
struct sql_exec_result {
  std::vector<std::string> columns;
  std::vector<std::vector<cell>> rows;
  int64_t row_count = 0;  ///< rows produced (may exceed rows.size())
  bool truncated = false; ///< rows were cut at max_rows
  int64_t elapsed_us = 0; ///< inside the executor
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sql_exec_result& x) {
  return f(x.columns, x.rows, x.row_count, x.truncated, x.elapsed_us);
}

} // namespace candor::domain
