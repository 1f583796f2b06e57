#pragma once

// Declares the eval gate: its thresholds, its run over the golden items and
// its report.

#include <cstddef>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "domain/error.hpp"
#include "domain/types.hpp"
#include "eval/golden.hpp"
#include "eval/metrics.hpp"

namespace candor::actors {
class app;
} // namespace candor::actors

/// The eval gate: runs golden items through the same
/// service as the HTTP API, computes the metrics, compares them with the
/// profile's thresholds and renders the report.
namespace candor::eval {

// -- thresholds ---------------------------------------------------------------

/// A bound on one metric: value >= bound (`min`) or value <= bound (`max`).
struct threshold {
  double bound = 0;
  bool is_min = true;
};

using threshold_map = std::map<std::string, threshold>;

/// The thresholds of `profile` ("scripted" or "live") in a thresholds file:
///   {"scripted": {"routeAccuracy": {"min": 1.0, "why": "..."}, ...},
///    "live": {...}}
/// Unknown metric keys, a missing profile and bounds outside 0..1 are
/// errors; a metric without a threshold is reported but not gated.
domain::outcome<threshold_map> parse_thresholds(std::string_view json,
                                                std::string_view profile);

domain::outcome<threshold_map> load_thresholds(const std::string& path,
                                               std::string_view profile);

/// `<source>/eval/thresholds.json`.
std::string default_thresholds_path();

/// The JSON object in the file at `path`. Errors (`ec::config_invalid`)
/// name the path: it cannot be read, is not valid JSON, or is not an
/// object. Shared by the eval commands that read their sets.
domain::outcome<boost::json::object> read_json_object(const std::string& path);

/// The metric keys compute_metrics produces, in report order.
const std::vector<std::string>& metric_keys();

// -- running ------------------------------------------------------------------

struct gate_options {
  std::string split = "test";
  bool live = false;
  /// Run only the first N selected items (0 = all).
  size_t limit = 0;
};

/// Latency of one route (nearest rank).
struct route_latency {
  std::string route;
  size_t items = 0;
  double p50_ms = 0;
  double p95_ms = 0;
};

/// One metric with its threshold and verdict.
struct gated_metric {
  metric m;
  std::optional<threshold> bound;
  /// True when the threshold holds, or when the metric is not gated
  /// (no threshold, or no items to measure it on).
  bool pass = true;
};

struct gate_report {
  std::string profile; ///< "scripted" or "live"
  std::string provider;
  std::vector<std::string> models;
  std::string embedder;
  std::string guardrail_mode;
  std::string golden_name;
  std::string split;
  std::string date; ///< UTC, ISO 8601
  double seconds = 0;
  std::vector<const golden_item*> items;
  std::vector<observed> outcomes; ///< parallel to items
  std::vector<gated_metric> metrics;
  std::vector<route_latency> latency;

  /// True when every gated metric passes.
  bool passed() const;
};

/// Checks every metric against `bounds`.
std::vector<gated_metric> apply_thresholds(const std::vector<metric>& ms,
                                           const threshold_map& bounds);

/// Runs `items` one after the other through `service.ask_sync` (each also
/// recorded in the ledger like a CLI request), runs their reference SQL
/// read-only on `sales_db`, and computes the report. Progress goes to
/// `progress`, one line rewritten in place.
domain::outcome<gate_report>
run_gate(actors::app& service, const std::vector<const golden_item*>& items,
         const gate_options& opts, const threshold_map& bounds,
         const std::string& sales_db, std::ostream& progress);

/// Runs `sql` read-only on `db_path` and returns its rows (at most
/// `max_rows`; more is an error).
domain::outcome<std::vector<result_row>>
run_reference_sql(const std::string& db_path, const std::string& sql,
                  size_t max_rows = 10000);

// -- rendering ----------------------------------------------------------------

/// The report as Markdown (also what `candor eval` prints).
std::string format_markdown(const gate_report& r);

/// The report as JSON, with one entry per item.
boost::json::value to_json(const gate_report& r);

/// Writes `<dir>/<profile>-<split>.md` and `.json`; returns both paths.
domain::outcome<std::vector<std::string>> write_reports(const gate_report& r,
                                                        const std::string& dir);

/// Asks `question` through `service` as `candor ask` does, with a fresh
/// request id; the request row is written with method EVAL and `path`.
domain::outcome<domain::ask_state>
ask_as_eval(actors::app& service, std::string question, std::string path);

} // namespace candor::eval
