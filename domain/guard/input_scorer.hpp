#pragma once

// Declares the input guard's second deterministic layer: a linear score
// over the words and word pairs of a question, with weights learnt offline
// from the labelled set (conf/input_scorer.json), for the attacks that say
// what the rules say in words the rules do not list.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "domain/error.hpp"

namespace candor::domain {

/// The scorer's verdict on one question.
struct score_verdict {
  double score = 0;      ///< bias + the weights of the features present
  bool blocked = false;  ///< score > threshold (strictly above)
  /// The features that pushed the score up most, strongest first (at most
  /// 5), e.g. {"system prompt", 2.1}: what a reader checks first.
  std::vector<std::pair<std::string, double>> top;
};

/// One labelled text for training: its canonical forms and its label.
struct scorer_example {
  std::string norm;  ///< normalize(text)
  std::string plain; ///< deobfuscate(text)'s text, or empty
  bool attack = false;
};

/// Training parameters (defaults are the ones conf/input_scorer.json was
/// made with; see `train`).
struct scorer_training {
  int epochs = 30;
  double rate = 0.1;
  double l2 = 1e-4;
  uint32_t seed = 1;
  /// The threshold is the score below which this share of the benign
  /// examples fall in 5-fold cross-validation (0..1).
  double benign_quantile = 0.998;
  /// Weights smaller than this (in absolute value) are dropped, in the
  /// cross-validation models too (keeps the file near 150 KB).
  double min_weight = 0.1;
};

/// A logistic-regression score over binary features: every word of the
/// canonical text ("w:prompt") and every pair of neighbouring words
/// ("b:system prompt"), taken from `normalize()`'s text and, when there is
/// one, from `deobfuscate()`'s. No other state: the same text always gets
/// the same score. Immutable and safe to share between threads.
class input_scorer {
public:
  /// Parses `{"version": 1, "bias": B, "threshold": T, "trainedOn": "...",
  /// "weights": {"w:word": x, "b:word word": y, ...}}`. Errors
  /// (`ec::config_invalid`) name the field.
  static outcome<input_scorer> parse(std::string_view json);

  /// conf/input_scorer.json as compiled in, parsed once. Throws
  /// std::logic_error naming the problem when it is invalid (a build
  /// defect; a test parses it).
  static const input_scorer& builtin();

  /// Learns weights from `examples` (order does not matter: they are
  /// shuffled with `t.seed`) and chooses the threshold by cross-validation
  /// (`t.benign_quantile`). Deterministic for the same input.
  static input_scorer train(const std::vector<scorer_example>& examples,
                            const scorer_training& t = {});

  /// Scores the canonical forms of a question.
  score_verdict judge(std::string_view norm, std::string_view plain) const;

  /// The weights file, features sorted, weights rounded to 4 decimals.
  std::string to_json(std::string_view trained_on) const;

  double threshold() const noexcept {
    return threshold_;
  }
  size_t size() const noexcept {
    return weights_.size();
  }

private:
  double raw_score(std::string_view norm, std::string_view plain,
                   std::vector<std::pair<std::string, double>>* parts) const;

  std::unordered_map<std::string, double> weights_;
  double bias_ = 0;
  double threshold_ = 0;
};

/// The distinct features of a question's canonical forms, in first-seen
/// order.
std::vector<std::string> scorer_features(std::string_view norm,
                                         std::string_view plain);

} // namespace candor::domain
