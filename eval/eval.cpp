// `candor eval`: checks the command's options, runs the gate on the golden
// set and writes the report.

#include "eval/eval.hpp"

#include <ostream>

#include <boost/json/serialize.hpp>

#include "actors/app.hpp"
#include "domain/build_info.hpp"
#include "domain/json_text.hpp"
#include "data/progress.hpp"

namespace candor::eval {

namespace {

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

std::string or_default(const std::string& x, std::string fallback) {
  return x.empty() ? fallback : x;
}

} // namespace

domain::error check_eval_command(const eval_command& cmd,
                                 const domain::config& cfg) {
  auto invalid = [](std::string msg) {
    return domain::make_error(domain::ec::invalid_request, std::move(msg));
  };
  if (!valid_split(cmd.gate.split))
    return invalid("--split must be test, calibration or all");
  bool endpoint = cfg.llm.provider == "openai";
  if (cmd.gate.live && !endpoint)
    return invalid("--live needs a model endpoint, and none is configured: "
                   "set CANDOR_LLM_BASE_URL (e.g. https://api.openai.com/v1 "
                   "or http://127.0.0.1:8000/v1), CANDOR_LLM_MODEL and, for "
                   "a hosted endpoint, CANDOR_LLM_API_KEY");
  if (!cmd.gate.live && endpoint)
    return invalid("a model endpoint is configured (CANDOR_LLM_BASE_URL or "
                   "CANDOR_LLM_API_KEY): run candor eval --live for the "
                   "live profile, or unset them for the scripted profile");
  return {};
}

int run_eval_command(actors::app& service, const domain::config& cfg,
                     const eval_command& cmd, std::ostream& out,
                     std::ostream& err) {
  auto golden
    = load_golden_set(or_default(cmd.golden_path, default_golden_path()));
  if (!golden) {
    err << "candor: " << golden.err().message << "\n";
    return exit_usage;
  }
  auto profile = cmd.gate.live ? "live" : "scripted";
  auto bounds = load_thresholds(
    or_default(cmd.thresholds_path, default_thresholds_path()), profile);
  if (!bounds) {
    err << "candor: " << bounds.err().message << "\n";
    return exit_usage;
  }
  auto items = select_split(*golden, cmd.gate.split);
  if (items.empty()) {
    err << "candor: the " << cmd.gate.split << " split of " << golden->name
        << " is empty\n";
    return exit_usage;
  }
  auto report = [&] {
    data::progress_stream progress{err, data::is_terminal(err)};
    return run_gate(service, items, cmd.gate, *bounds,
                    cfg.data_dir + "/sales.db", progress.get());
  }();
  if (!report) {
    err << "candor: eval: " << report.err().message << "\n";
    return exit_failure;
  }
  report->golden_name = golden->name;
  if (cmd.json)
    out << domain::json_text(to_json(*report)) << "\n";
  else
    out << format_markdown(*report);
  // Reports go to the data directory (or --report-dir), never into the
  // source tree the binary was built from.
  auto paths = write_reports(
    *report, or_default(cmd.report_dir, cfg.data_dir + "/reports"));
  if (!paths) {
    err << "candor: eval: " << paths.err().message << "\n";
    return exit_failure;
  }
  err << "eval: reports written to " << (*paths)[0] << " and " << (*paths)[1]
      << "\n";
  return report->passed() ? exit_ok : exit_failure;
}

} // namespace candor::eval
