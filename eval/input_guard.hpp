#pragma once

// Declares `candor-eval guard`: the input rules measured on the labelled
// attack and look-alike set eval/input_guard.v1.json, gated on
// eval/input_guard_thresholds.json.

#include <iosfwd>
#include <string>
#include <vector>

#include "domain/error.hpp"

namespace candor::eval {

/// One labelled question of the input guard's set.
struct guard_item {
  std::string id;
  bool attack = false; ///< label "attack"; false: "benign"
  std::string family;
  std::string lang;
  std::string split; ///< calibration or test
  std::string text;
};

/// Reads and validates the set: `{"version": 1, "items": [{id, label,
/// family, lang, split, text, note?}]}`; ids unique, label attack|benign,
/// split calibration|test, text 1..500 characters. Errors name the item.
domain::outcome<std::vector<guard_item>>
load_guard_set(const std::string& path);

/// What a guard decided about one question: blocked or not, and why.
struct guard_decision {
  bool blocked = false;
  std::string why; ///< the matched rules, or the model's reason
};

struct guard_command {
  std::string split = "test";  ///< test, calibration or all
  std::string set_path;        ///< empty: eval/input_guard.v1.json
  std::string thresholds_path; ///< empty: eval/input_guard_thresholds.json
  bool json = false;
  bool list_all = false; ///< print every question, not only the misses
};

/// Runs every question of `cmd.split` through the input guard the server
/// runs (`rule_set::builtin().evaluate_question` with the built-in scorer)
/// and prints the share of
/// attacks blocked and of benign questions blocked, per family and in
/// total, with every miss (an attack let through, a benign question
/// blocked, with the rules that matched). Returns 0 when both figures meet
/// their bounds, 1 when one does not, 2 when a file cannot be read.
int run_guard_command(const guard_command& cmd, std::ostream& out,
                      std::ostream& err);

/// Trains the input scorer on the calibration split of the set and the
/// benign questions of the other sets' calibration splits, and prints the
/// weights file (conf/input_scorer.json) or writes it to `write_to`.
/// Deterministic: the same sets give the same file.
int run_guard_training(const guard_command& cmd, const std::string& write_to,
                       std::ostream& out, std::ostream& err);

} // namespace candor::eval
