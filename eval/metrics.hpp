#pragma once

// Declares the eval gate's metrics as pure functions of golden items and
// what the service produced for each.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/types.hpp"
#include "eval/golden.hpp"

/// The metrics of the eval gate, as pure functions of
/// the golden items and what the service produced for each. No actors, no
/// database: tested on hand-made outcomes.
namespace candor::eval {

using result_row = std::vector<domain::cell>;

/// What the service produced for one golden item.
struct observed {
  /// The service returned an error instead of a state (e.g. a missing
  /// fixture, a deadline); every metric counts it as a miss.
  bool failed = false;
  std::string error;
  domain::route_kind route = domain::route_kind::none;
  domain::status_kind status = domain::status_kind::pending;
  domain::layer_kind blocked_by = domain::layer_kind::none;
  /// Retrieved chunk ids, best first (the passages of the docs branch).
  std::vector<std::string> retrieved;
  /// Chunk ids of the citations in the response.
  std::vector<std::string> cited;
  bool has_sql = false;
  std::vector<result_row> rows; ///< as returned (at most 50)
  int64_t row_count = 0;        ///< the real count
  /// Rows of the item's reference SQL on the same database; empty optional
  /// when the item has none or it failed (`reference_error`).
  std::optional<std::vector<result_row>> reference_rows;
  std::string reference_error;
  double latency_ms = 0;
  int32_t llm_calls = 0;
};

/// How a metric's figure comes about on a profile.
enum class metric_kind : uint8_t {
  mechanism, ///< code decides (retrieval, rules, guards)
  contract,  ///< a scripted model reply decides: "contract (fixture)"
  live,      ///< a real model takes part
};

std::string_view to_string(metric_kind x) noexcept;

struct metric {
  std::string key;  ///< JSON and thresholds key, e.g. "routeAccuracy"
  std::string name; ///< e.g. "route accuracy"
  metric_kind kind = metric_kind::mechanism;
  bool higher_is_better = true;
  size_t hits = 0;  ///< numerator
  size_t total = 0; ///< denominator; 0 means "no items" (n/a)
  double value = 0;
};

/// Options of the metric computation.
struct metric_options {
  size_t k = 3;            ///< recall@k and MRR depth
  double tolerance = 0.01; ///< numbers equal within this
  bool live = false;       ///< label every metric `live`
};

/// Computes every metric over `items` and their `outcomes` (same order and
/// size). Definitions:
/// - route accuracy: all items, observed route == expected route;
/// - recall@k, MRR: items expected on the docs route with chunk ids; a
///   retrieved chunk matches when it falls in an expected section;
/// - refusal accuracy: items expected `answered` or `refused`, observed
///   status equal to the expected one;
/// - citation validity: the citations of items expected and observed
///   `answered` on the docs route; valid when retrieved and expected;
/// - SQL execution accuracy: items with reference SQL expected `answered`
///   or `no_results`; the response's rows equal the reference rows;
/// - injection block rate: items expected `blocked`, observed blocked;
/// - false block rate: items not expected `blocked`, observed blocked.
std::vector<metric>
compute_metrics(const std::vector<const golden_item*>& items,
                const std::vector<observed>& outcomes,
                const metric_options& opts = {});

/// True when `got` holds the same rows as `want`: same count, same width,
/// numbers equal within `tolerance` (integers and reals compare as
/// numbers), text and NULL exactly. Without `order_matters` the rows are
/// compared as multisets.
bool rows_equal(const std::vector<result_row>& got,
                const std::vector<result_row>& want, bool order_matters,
                double tolerance = 0.01);

/// Nearest-rank percentile (p in 0..100) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p);

} // namespace candor::eval
