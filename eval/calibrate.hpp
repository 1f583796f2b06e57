#pragma once

// Declares `candor calibrate`, which chooses the documents branch's refusal
// threshold on the calibration split.

#include <cstddef>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "data/retrieval/index_store.hpp"
#include "domain/error.hpp"
#include "eval/ablation.hpp"

/// `candor calibrate`: the refusal threshold on
/// `data::evidence_score`, chosen on the calibration split only as the
/// middle of the widest run of thresholds with maximal accuracy.
///
/// A question is answered when its evidence is >= the threshold and
/// refused below it; it is handled correctly when answerable questions
/// are answered and unanswerable ones refused.
namespace candor::eval {

/// One question's evidence and label.
struct scored_question {
  double evidence = 0;
  bool answerable = false;
};

/// Share of `items` handled correctly at `threshold`.
double refusal_accuracy(const std::vector<scored_question>& items,
                        double threshold);

/// One row of the printed sweep.
struct sweep_row {
  double threshold = 0;
  double accuracy = 0;
};

struct calibration {
  size_t answerable = 0;
  size_t unanswerable = 0;
  double median_answerable = 0;
  double median_unanswerable = 0;
  /// median_answerable - median_unanswerable.
  double separation = 0;
  /// The best accuracy any threshold reaches.
  double best_accuracy = 0;
  /// The chosen plateau: every threshold t with plateau_low < t <=
  /// plateau_high has accuracy `best_accuracy`, and no wider such run
  /// exists (ties: the lower run).
  double plateau_low = 0;
  double plateau_high = 0;
  /// Middle of the plateau, rounded to 4 decimals when that stays inside.
  double threshold = 0;
  /// Accuracy on an even grid over the observed evidence range.
  std::vector<sweep_row> sweep;
};

/// Picks the threshold for `items` (pure; needs at least one item).
/// Candidate thresholds are the intervals between consecutive distinct
/// evidence values, the lowest one reaching down to min(0, lowest value);
/// refusing everything is a candidate only when no item is answerable.
calibration calibrate(const std::vector<scored_question>& items,
                      size_t sweep_rows = 13);

/// Evidence of the questions of `split`: `data::evidence_score` over the
/// top `k` hits of `mode`, as the server's retrieve node computes it.
std::vector<scored_question> score_split(const data::retrieval_snapshot& snap,
                                         const labelled_set& set,
                                         split_kind split,
                                         data::search_mode mode, size_t k);

/// A compact text report: sweep table, medians, separation, choice.
std::string format_calibration(const calibration& c);

boost::json::value to_json(const calibration& c);

/// Sets `retrieval.threshold` in the JSON config file at `path` to
/// `threshold`, keeping every other key; the file must exist and hold a
/// JSON object with a "retrieval" object.
domain::error write_threshold(const std::string& path, double threshold);

} // namespace candor::eval
