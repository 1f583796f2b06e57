#pragma once

// Declares `candor-eval local`: the local provider measured on the routing
// set and the documents answer set, gated on eval/local_thresholds.json.

#include <iosfwd>
#include <string>
#include <vector>

#include "actors/app.hpp"

namespace candor::eval {

struct local_command {
  std::string split = "test";  ///< test, calibration or all
  std::string routing_path;    ///< empty: eval/routing.v1.json
  std::string answers_path;    ///< empty: eval/local_answers.v1.json
  std::string thresholds_path; ///< empty: eval/local_thresholds.json
  bool json = false;
  bool list_hits = false; ///< print every question, not only the misses
  /// The figures whose bound decides the exit status (routeAccuracy,
  /// factRate, refusalRate); empty: all three. The others are printed
  /// with their bound and "not gated".
  std::vector<std::string> gated;
};

/// Asks every question of both sets of `cmd.split` through `service`
/// (which must run the local provider) and prints route accuracy, the
/// share of answerable questions whose answer holds an expected fact and
/// the share of unanswerable ones refused, each with its misses. Returns 0
/// when every figure meets its threshold, 1 when one does not or a
/// question failed, 2 when a file cannot be read.
int run_local_command(actors::app& service, const local_command& cmd,
                      std::ostream& out, std::ostream& err);

} // namespace candor::eval
