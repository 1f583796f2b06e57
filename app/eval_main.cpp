// The `candor-eval` binary: the measuring commands (eval, local, guard,
// calibrate, ablation here; sql-guard, layers, data in eval_sql_commands). Inputs come from the source tree by default;
// outputs go to the data directory or where a flag says, never into the
// source tree.

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <boost/json/serialize.hpp>

#include "app/cli.hpp"
#include "app/eval_sql_commands.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "data/sales/setup.hpp"
#include "domain/build_info.hpp"
#include "domain/json_text.hpp"
#include "eval/ablation.hpp"
#include "eval/layers/attacks.hpp"
#include "eval/calibrate.hpp"
#include "eval/eval.hpp"
#include "eval/layers/command.hpp"
#include "eval/data_planner.hpp"
#include "eval/input_guard.hpp"
#include "eval/local.hpp"
#include "eval/sql_guard_tool.hpp"
#include "eval/sample/fernhill.hpp"

using namespace candor;
using namespace candor::cli;

namespace {

/// Options shared by calibrate and ablation: the labelled set and the KB.
void add_eval_options(po::options_description& desc) {
  desc.add_options()("set", po::value<std::string>(),
                     "labelled question set (default: eval/retrieval.v1.json "
                     "of the source tree)")(
    "kb", po::value<std::string>(),
    "documents directory (default: data/kb of the source tree)")(
    "json", "print the result as JSON");
}

std::string kb_dir_of(const po::variables_map& vm) {
  return vm.count("kb") ? vm["kb"].as<std::string>()
                        : std::string{CANDOR_SOURCE_DIR} + "/data/kb";
}

domain::outcome<eval::labelled_set>
labelled_set_of(const po::variables_map& vm) {
  return eval::load_labelled_set(vm.count("set")
                                   ? vm["set"].as<std::string>()
                                   : eval::default_labelled_set_path());
}

int cmd_calibrate(int argc, char** argv) {
  auto desc = common_options();
  add_eval_options(desc);
  desc.add_options()(
    "write", po::value<std::string>(),
    "set retrieval.threshold in this JSON config file to "
    "the chosen threshold (your own config file; nothing else is written)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor-eval calibrate [--write FILE] [--json] "
                      "[options]\n\nScores the calibration split of the "
                      "labelled set with the configured retrieval "
                      "(retrieval.mode, topK, chunkSize, dimensions), sweeps "
                      "the refusal threshold over the evidence scores and "
                      "prints threshold x accuracy, the medians of answerable "
                      "and unanswerable evidence and their separation, and "
                      "the chosen threshold: the middle of the widest run of "
                      "thresholds with maximal accuracy. The test split is "
                      "never read.\n",
                      vm);
      rc >= 0)
    return rc;
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  data::search_mode mode;
  if (!data::parse_search_mode(cfg->retrieval.mode, mode)) {
    std::cerr << "candor: configuration error: retrieval.mode '"
              << cfg->retrieval.mode << "' is not tfidf, bm25 or fusion\n";
    return exit_usage;
  }
  auto set = labelled_set_of(vm);
  if (!set) {
    std::cerr << "candor: " << set.err().message << "\n";
    return exit_usage;
  }
  auto opts = data::ingest_options_from(*cfg);
  auto snap = eval::build_snapshot(kb_dir_of(vm), opts.chunking.target_chars,
                                   opts.retrieval);
  if (!snap) {
    std::cerr << "candor: calibrate: " << snap.err().message << "\n";
    return exit_code_of(snap.err());
  }
  auto scored
    = eval::score_split(**snap, *set, eval::split_kind::calibration, mode,
                        static_cast<size_t>(cfg->retrieval.top_k));
  if (scored.empty()) {
    std::cerr << "candor: calibrate: the calibration split is empty\n";
    return exit_usage;
  }
  auto c = eval::calibrate(scored);
  if (vm.count("json")) {
    auto v = eval::to_json(c);
    auto& o = v.as_object();
    o["mode"] = cfg->retrieval.mode;
    o["chunkSize"] = cfg->retrieval.chunk_size;
    o["topK"] = cfg->retrieval.top_k;
    std::cout << candor::domain::json_text(v) << "\n";
  } else {
    std::cout << "retrieval: mode " << cfg->retrieval.mode << ", chunk size "
              << cfg->retrieval.chunk_size << ", top " << cfg->retrieval.top_k
              << ", " << (*snap)->size() << " chunks\n"
              << eval::format_calibration(c);
  }
  if (vm.count("write")) {
    auto path = vm["write"].as<std::string>();
    if (auto err = eval::write_threshold(path, c.threshold)) {
      std::cerr << "candor: " << err.message << "\n";
      return exit_failure;
    }
    std::cerr << "calibrate: wrote retrieval.threshold = " << c.threshold
              << " to " << path << "\n";
  }
  return exit_ok;
}

int cmd_ablation(int argc, char** argv) {
  auto desc = common_options();
  add_eval_options(desc);
  desc.add_options()("chunk-sizes",
                     po::value<std::vector<size_t>>()->multitoken(),
                     "chunk sizes to compare (default: 400 600)")(
    "split", po::value<std::string>()->default_value("test"),
    "split to measure on: test (the reported figures) or calibration "
    "(for developing the mechanism without looking at test)")(
    "explain", "with --split calibration: print one diagnostic line per "
               "question (rank of the expected section, evidence, top hits) "
               "for the configured mode and chunk size");
  po::variables_map vm;
  if (auto rc
      = parse(argc, argv, desc, nullptr,
              "Usage: candor-eval ablation [--chunk-sizes N N] [--json] "
              "[options]\n\nFor each search mode (tfidf, bm25, "
              "fusion) and chunk size: recall@3 and MRR over the "
              "answerable questions of the test split, and refusal "
              "accuracy on the test split with the threshold "
              "calibrated for that configuration on the calibration "
              "split. Marks the winner (targets met first, then the "
              "highest sum of the three figures).\n",
              vm);
      rc >= 0)
    return rc;
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  auto set = labelled_set_of(vm);
  if (!set) {
    std::cerr << "candor: " << set.err().message << "\n";
    return exit_usage;
  }
  eval::ablation_options opts;
  opts.kb_dir = kb_dir_of(vm);
  auto split = vm["split"].as<std::string>();
  if (split == "calibration") {
    opts.measure = eval::split_kind::calibration;
  } else if (split != "test") {
    std::cerr << "candor: --split must be test or calibration\n";
    return exit_usage;
  }
  opts.k = static_cast<size_t>(cfg->retrieval.top_k);
  opts.params = data::ingest_options_from(*cfg).retrieval;
  if (vm.count("explain")) {
    // Diagnostics are for developing on the calibration split only.
    if (opts.measure != eval::split_kind::calibration) {
      std::cerr << "candor: --explain needs --split calibration\n";
      return exit_usage;
    }
    data::search_mode mode;
    if (!data::parse_search_mode(cfg->retrieval.mode, mode)) {
      std::cerr << "candor: retrieval.mode '" << cfg->retrieval.mode
                << "' is not tfidf, bm25 or fusion\n";
      return exit_usage;
    }
    auto snap = eval::build_snapshot(
      opts.kb_dir, static_cast<size_t>(cfg->retrieval.chunk_size), opts.params);
    if (!snap) {
      std::cerr << "candor: ablation: " << snap.err().message << "\n";
      return exit_code_of(snap.err());
    }
    std::cout << eval::explain_split(**snap, *set, opts.measure, mode, opts.k,
                                     10);
    return exit_ok;
  }
  if (vm.count("chunk-sizes")) {
    opts.chunk_sizes = vm["chunk-sizes"].as<std::vector<size_t>>();
    for (auto n : opts.chunk_sizes)
      if (n < 200 || n > 4000) {
        std::cerr << "candor: chunk sizes must be 200 to 4000\n";
        return exit_usage;
      }
    // A size twice would measure, and print, the same rows twice.
    auto sorted = opts.chunk_sizes;
    std::sort(sorted.begin(), sorted.end());
    if (auto dup = std::adjacent_find(sorted.begin(), sorted.end());
        dup != sorted.end()) {
      std::cerr << "candor: --chunk-sizes: " << *dup << " is given twice\n";
      return exit_usage;
    }
  }
  auto report = eval::run_ablation(*set, opts);
  if (!report) {
    std::cerr << "candor: ablation: " << report.err().message << "\n";
    return exit_code_of(report.err());
  }
  if (vm.count("json")) {
    std::cout << candor::domain::json_text(eval::to_json(*report)) << "\n";
  } else {
    std::cout << "set " << report->set_name << ", "
              << eval::to_string(report->measured)
              << " split; thresholds calibrated on the calibration split\n"
              << eval::format_table(*report);
  }
  return exit_ok;
}

/// `candor eval`: the golden set through the service, gated on thresholds.
int cmd_eval(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("split", po::value<std::string>()->default_value("test"),
                     "golden split: test, calibration or all")(
    "live", "use the configured model endpoint (CANDOR_LLM_*) and the live "
            "thresholds")("json", "print the report as JSON")(
    "golden", po::value<std::string>(),
    "golden set (default: eval/golden.v1.json of the source tree)")(
    "thresholds", po::value<std::string>(),
    "thresholds file (default: eval/thresholds.json of the source tree)")(
    "report-dir", po::value<std::string>(),
    "where the Markdown and JSON reports go (default: <data-dir>/reports)")(
    "limit", po::value<int64_t>(),
    "run only the first N (at least 1) items of the split");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor-eval eval [--split test|calibration|all] "
                      "[--live] [--json] [options]\n\nRuns every golden "
                      "question of the split through the same service as "
                      "the HTTP API, measures route accuracy, recall@3, MRR, "
                      "refusal accuracy, citation validity, SQL execution "
                      "accuracy, injection block rate and false block rate, "
                      "compares them with the profile's thresholds (scripted, "
                      "or live with --live) and prints the report. Exit 0 "
                      "when every threshold holds, 1 when one is missed, 2 "
                      "on bad usage.\n",
                      vm);
      rc >= 0)
    return rc;
  eval::eval_command cmd;
  cmd.gate.split = vm["split"].as<std::string>();
  cmd.gate.live = vm.count("live") > 0;
  cmd.json = vm.count("json") > 0;
  if (vm.count("limit")) {
    // 0 would mean "no limit" to the gate, and a size_t flag wraps -1.
    auto limit = vm["limit"].as<int64_t>();
    if (limit < 1) {
      std::cerr << "candor: --limit must be at least 1\n";
      return exit_usage;
    }
    cmd.gate.limit = static_cast<size_t>(limit);
  }
  for (auto [flag, field] : {std::pair{"golden", &cmd.golden_path},
                             std::pair{"thresholds", &cmd.thresholds_path},
                             std::pair{"report-dir", &cmd.report_dir}})
    if (vm.count(flag))
      *field = vm[flag].as<std::string>();
  // One log line per question would bury the report. The scripted
  // profile replays the fixtures: the scripted provider, whatever the
  // default.
  std::map<std::string, std::string> flags{{"log.level", "warn"}};
  if (!cmd.gate.live)
    flags["llm.provider"] = "fake";
  // A live run measures the endpoint: a call that fails must not be
  // answered by the local provider in its place.
  flags["llm.localFallback"] = "false";
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  if (auto err = eval::check_eval_command(cmd, *cfg)) {
    std::cerr << "candor: eval: " << err.message << "\n";
    return exit_usage;
  }
  auto a = start_app(*cfg);
  if (!a)
    return start_failure(a.err());
  auto rc = eval::run_eval_command(**a, *cfg, cmd, std::cout, std::cerr);
  (*a)->shutdown();
  return rc;
}

/// `candor-eval local`: the local provider on the routing and answer sets.
int cmd_local(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("split", po::value<std::string>()->default_value("test"),
                     "split: test, calibration or all")(
    "json", "print the figures and misses as JSON")(
    "routing", po::value<std::string>(),
    "routing set (default: eval/routing.v1.json of the source tree)")(
    "answers", po::value<std::string>(),
    "answer set (default: eval/local_answers.v1.json of the source tree)")(
    "thresholds", po::value<std::string>(),
    "bounds (default: eval/local_thresholds.json of the source tree)")(
    "gate", po::value<std::string>(),
    "comma-separated figures whose bound sets the exit status "
    "(routeAccuracy,factRate,refusalRate; default: all)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor-eval local [--split test|calibration|"
                      "all] [--json] [options]\n\nAsks every question of the "
                      "routing set and of the documents answer set through "
                      "the service with the local provider (no model) and "
                      "prints route accuracy, the share of answerable "
                      "questions answered with an expected fact and the "
                      "share of unanswerable ones refused, with every miss. "
                      "Exit 1 when a figure is below its bound.\n",
                      vm);
      rc >= 0)
    return rc;
  eval::local_command cmd;
  cmd.split = vm["split"].as<std::string>();
  cmd.json = vm.count("json") > 0;
  for (auto [flag, field] : {std::pair{"routing", &cmd.routing_path},
                             std::pair{"answers", &cmd.answers_path},
                             std::pair{"thresholds", &cmd.thresholds_path}})
    if (vm.count(flag))
      *field = vm[flag].as<std::string>();
  if (vm.count("gate")) {
    std::string list = vm["gate"].as<std::string>();
    for (size_t pos = 0; pos <= list.size();) {
      auto end = std::min(list.find(',', pos), list.size());
      auto name = list.substr(pos, end - pos);
      if (name != "routeAccuracy" && name != "factRate"
          && name != "refusalRate") {
        std::cerr << "candor: local: --gate takes routeAccuracy, factRate "
                     "and refusalRate, not '"
                  << name << "'\n";
        return exit_usage;
      }
      cmd.gated.push_back(std::move(name));
      pos = end + 1;
    }
  }
  auto cfg = configure(vm, {{"log.level", "warn"}, {"llm.provider", "local"}});
  if (!cfg)
    return config_failure(cfg.err());
  if (cfg->llm.provider != "local") {
    std::cerr << "candor: local: a model endpoint is configured "
                 "(CANDOR_LLM_BASE_URL or CANDOR_LLM_API_KEY): unset it to "
                 "measure the local provider\n";
    return exit_usage;
  }
  auto a = start_app(*cfg);
  if (!a)
    return start_failure(a.err());
  auto rc = eval::run_local_command(**a, cmd, std::cout, std::cerr);
  (*a)->shutdown();
  return rc;
}

/// `candor-eval guard`: the input rules on eval/input_guard.v1.json.
int cmd_guard(int argc, char** argv) {
  po::options_description desc{"Options"};
  desc.add_options()("help,h", "show this help")(
    "split", po::value<std::string>()->default_value("test"),
    "test, calibration or all")(
    "set", po::value<std::string>(),
    "labelled set (default: eval/input_guard.v1.json of the source tree)")(
    "thresholds", po::value<std::string>(),
    "bounds (default: eval/input_guard_thresholds.json)")(
    "all", "list every question, not only the misses")(
    "json", "print the figures as JSON")(
    "train", "train the input scorer on the calibration splits and print "
             "its weights file")(
    "write", po::value<std::string>(),
    "with --train: write the weights to FILE (e.g. conf/input_scorer.json)");
  po::variables_map vm;
  if (auto rc = parse(
        argc, argv, desc, nullptr,
        "Usage: candor-eval guard [--split test|calibration|all] [--set FILE] "
        "[--thresholds FILE] [--all] [--json]\n\nRuns every question of "
        "the labelled set through the input rules the server runs and prints "
        "the share of attacks blocked and of benign look-alikes blocked, per "
        "family, with every attack let through and every benign question "
        "blocked. Exit 0 when both meet their bounds, 1 when one does not, "
        "2 on bad usage or an unreadable file.\n",
        vm);
      rc >= 0)
    return rc;
  eval::guard_command cmd;
  cmd.split = vm["split"].as<std::string>();
  if (vm.count("set"))
    cmd.set_path = vm["set"].as<std::string>();
  if (vm.count("thresholds"))
    cmd.thresholds_path = vm["thresholds"].as<std::string>();
  cmd.json = vm.count("json") > 0;
  cmd.list_all = vm.count("all") > 0;
  if (vm.count("train"))
    return eval::run_guard_training(
      cmd, vm.count("write") ? vm["write"].as<std::string>() : std::string{},
      std::cout, std::cerr);
  if (vm.count("write")) {
    std::cerr << "candor: guard: --write needs --train\n";
    return exit_usage;
  }
  return eval::run_guard_command(cmd, std::cout, std::cerr);
}

/// `candor-eval sample --out DIR`: the second sample world's database and
/// documents (eval/sample/fernhill.hpp).
int cmd_sample(int argc, char** argv) {
  po::options_description desc{"Options"};
  desc.add_options()("help,h", "show this help")(
    "out", po::value<std::string>(), "the directory to write into");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor-eval sample --out DIR\n\nWrites the "
                      "Fernhill Veterinary Group sample: DIR/fernhill.db "
                      "(eight tables, from a fixed seed) and DIR/docs/ (its "
                      "HTML pages and PDFs), for `candor catalog draft`, "
                      "`candor ingest` and eval/worlds/fernhill.\n",
                      vm);
      rc >= 0)
    return rc;
  if (!vm.count("out")) {
    std::cerr << "candor-eval: sample needs --out DIR\n";
    return exit_usage;
  }
  auto out = vm["out"].as<std::string>();
  auto rows = eval::make_fernhill(out);
  if (!rows) {
    std::cerr << "candor-eval: sample: " << rows.err().message << "\n";
    return exit_code_of(rows.err());
  }
  std::cout << out << "/fernhill.db: " << *rows << " rows\n"
            << out << "/docs/: the documents\n";
  return exit_ok;
}

const char* top_help
  = R"(candor-eval - measures candor: the golden questions, the retrieval
calibration and ablation, the attack x layer matrix and the SQL guard.

Usage: candor-eval <command> [options]

Commands:
  eval      run the golden questions (eval/golden.v1.json) through the
            service and gate on eval/thresholds.json; exit 1 on a miss.
            Reports go to <data-dir>/reports or --report-dir
  local     the local provider (no model) on eval/routing.v1.json and
            eval/local_answers.v1.json: route accuracy, answers holding the
            expected fact, refusals; gated on eval/local_thresholds.json
  data      the local provider's data planner on eval/data_questions.v1.json:
            execution accuracy against hand-written SQL, and refusals;
            gated on eval/local_thresholds.json; --question Q shows a plan
  guard     the input rules on eval/input_guard.v1.json (attacks and
            benign look-alikes): share of each blocked, per family, every
            miss; gated on eval/input_guard_thresholds.json
  layers    run every attack of eval/attacks.v1.json through every defence
            layer on its own and print the attack x layer matrix; exit 1
            when an attack passes every layer or a write is stopped by
            fewer than 2 layers
  calibrate choose the refusal threshold (retrieval.threshold) on the
            calibration split of eval/retrieval.v1.json and print it;
            --write FILE also writes it into FILE
  ablation  recall@3, MRR and refusal accuracy of every retrieval mode at two
            chunk sizes on the test split of eval/retrieval.v1.json
  sql-guard audit SQL statements without a model: JSON lines {"id","sql"} on
            stdin, one verdict line per statement with each layer's verdict
  sample    write the second sample world (a veterinary group): its database
            and documents, into --out DIR
  --version print the version, the commit and the linked libraries' versions

Every command accepts --data-dir DIR and --config FILE, and --help.
Exit codes: 0 success, 1 runtime failure or a gate missed, 2 usage or
configuration error.
)";

} // namespace

int main(int argc, char** argv) {
  static constexpr command commands[]
    = {{"eval", cmd_eval},         {"local", cmd_local},
       {"data", cmd_data},         {"guard", cmd_guard},
       {"layers", cmd_layers},     {"calibrate", cmd_calibrate},
       {"ablation", cmd_ablation}, {"sql-guard", cmd_sql_guard},
       {"sample", cmd_sample}};
  return run(argc, argv, "candor-eval", top_help, commands);
}
