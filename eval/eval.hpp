#pragma once

// Declares `candor eval`, the command around the eval gate.

#include <iosfwd>
#include <string>

#include "domain/config.hpp"
#include "domain/error.hpp"
#include "eval/gate.hpp"

namespace candor::actors {
class app;
} // namespace candor::actors

/// `candor eval`: the command around the gate. app/main.cpp parses the
/// flags and starts the service; everything else happens here.
namespace candor::eval {

struct eval_command {
  gate_options gate;
  bool json = false;
  std::string golden_path;     ///< default: default_golden_path()
  std::string thresholds_path; ///< default: default_thresholds_path()
  std::string report_dir;      ///< default: <source>/eval/reports
};

/// Checks what can be checked before the service starts: the split, and
/// that `--live` goes with a configured model endpoint (and the scripted
/// profile with the scripted provider). An error means exit 2.
domain::error check_eval_command(const eval_command& cmd,
                                 const domain::config& cfg);

/// Loads the golden set and thresholds, runs the gate, prints the report
/// (Markdown, or JSON with `json`) on `out`, progress and the report paths
/// on `err`, writes the reports. Returns the exit code: 0 when every gated
/// metric passes, 1 when one misses or the run fails, 2 when the golden set
/// or the thresholds cannot be used.
int run_eval_command(actors::app& service, const domain::config& cfg,
                     const eval_command& cmd, std::ostream& out,
                     std::ostream& err);

} // namespace candor::eval
