#pragma once

// Declares `candor-eval data`: the local provider's data planner measured
// on eval/data_questions.v1.json (execution accuracy against hand-written
// reference SQL, and refusals), gated on eval/local_thresholds.json.

#include <iosfwd>
#include <string>
#include <vector>

namespace candor::eval {

struct data_command {
  std::string split = "test";  ///< test, calibration or all
  std::string questions_path;  ///< empty: eval/data_questions.v1.json
  std::string thresholds_path; ///< empty: eval/local_thresholds.json
  std::string catalog_path;    ///< empty: the built-in catalog
  std::string sales_db;        ///< <data-dir>/sales.db, seeded
  bool list_hits = false;      ///< print every question
  /// Print the plan of this one question and stop (with --question).
  std::string question;
  /// Planning timings: repeat each question this many times and print the
  /// P50/P99 of one plan (0: no timing).
  int bench_rounds = 0;
  /// Figures whose bound sets the exit status (dataExecAccuracy,
  /// dataRefusalRate); empty: both.
  std::vector<std::string> gated;
  /// "postgres": plan in PostgreSQL's dialect, judge with the pg_query
  /// policy and run on the warehouse at `postgres_dsn` (references still
  /// run on `sales_db`).
  std::string backend = "sqlite";
  std::string postgres_dsn;
};

/// Plans every question of `cmd.split`; an answerable one counts when its
/// planned SQL passes the statement policy and the validation connection
/// and returns the same result set as the reference SQL (order compared
/// only when the question orders; numbers within a cent); a refusal
/// counts when the planner refuses. Prints both figures with every miss.
/// Returns 0 when both meet their bounds, 1 when one does not, 2 when a
/// file cannot be read.
int run_data_command(const data_command& cmd, std::ostream& out,
                     std::ostream& err);

/// `candor-eval data --follow-ups`: every follow-up turn of
/// eval/followups.v1.json (or `cmd.questions_path`) resolved against the
/// turn before (the set's own standalone for it, so one miss does not
/// carry on) by `planner::resolve_follow_up`. A turn expected answered
/// counts when the planner plans the resolved question and its result
/// equals that of the set's standalone question; one expected refused
/// counts when the planner refuses it. Prints the accuracy per split and
/// per kind, and every miss; exit 1 when the accuracy of `cmd.split` is
/// below `followUpAccuracy` in the thresholds file.
int run_follow_up_command(const data_command& cmd, std::ostream& out,
                          std::ostream& err);

} // namespace candor::eval
