// The measuring commands of `candor-eval` about the data route: sql-guard
// (every SQL layer on statements from stdin), layers (the attack x layer
// matrix) and data (the planner on its labelled questions and follow-ups),
// on SQLite or the PostgreSQL warehouse.

#include "app/eval_sql_commands.hpp"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "app/cli.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/setup.hpp"
#include "eval/data_planner.hpp"
#include "eval/layers/attacks.hpp"
#include "eval/layers/command.hpp"
#include "eval/sql_guard_tool.hpp"

namespace candor::cli {

namespace {

/// `<data-dir>/sales.db` the way serve prepares it: generated from
/// `sql.seed` when absent (announced on stderr), then checked against
/// the catalog. Returns its path.
domain::outcome<std::string> prepare_sales_db(const domain::config& cfg) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec)
    return domain::make_error(domain::ec::storage_failed,
                              "cannot create data directory '" + cfg.data_dir
                                + "': " + ec.message());
  auto cat = data::load_catalog(cfg);
  if (!cat)
    return cat.err();
  bool announced = false;
  auto sales = data::prepare_configured_sales(
    cfg, std::make_shared<const data::catalog>(std::move(*cat)),
    [&](std::string_view, double) {
      if (announced)
        return;
      announced = true;
      std::cerr << "candor: creating " << cfg.data_dir
                << "/sales.db from sql.seed " << cfg.sql.seed << "\n";
    });
  if (!sales)
    return sales.err();
  return sales->path;
}

} // namespace

int cmd_sql_guard(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("db", po::value<std::string>(),
                     "sales database (default: <data-dir>/sales.db, created "
                     "from sql.seed when absent, as serve does)")(
    "no-executor", "skip the executor layer (by default every statement "
                   "also runs in a sandboxed executor process)")(
    "backend", po::value<std::string>(),
    "sqlite or postgres (default: sql.backend); postgres judges with the "
    "pg_query policy, the reading role's privileges (a READ WRITE "
    "transaction, always rolled back) and the READ ONLY executor "
    "session, on the warehouse at CANDOR_SQL_POSTGRES_DSN");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor-eval sql-guard [--db FILE] [options] < "
                      "statements.jsonl\n\nReads {\"id\": ..., \"sql\": "
                      "...} per line and prints the verdict (allow, block, "
                      "error), the blocking layer and reason, and each "
                      "layer's own verdict. Exit 0 when everything was "
                      "allowed, 1 when anything was blocked or invalid or "
                      "the database cannot be read, 2 on bad usage "
                      "(including no database at --db).\n",
                      vm);
      rc >= 0)
    return rc;
  std::map<std::string, std::string> flags;
  if (vm.count("backend"))
    flags["sql.backend"] = vm["backend"].as<std::string>();
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  auto report = [](const domain::outcome<eval::guard_tool_summary>& summary) {
    if (!summary) {
      std::cerr << "candor: sql-guard: " << summary.err().message << "\n";
      return exit_code_of(summary.err());
    }
    std::cerr << "sql-guard: " << summary->allowed << " allowed, "
              << summary->blocked << " blocked, " << summary->errors
              << " errors\n";
    return summary->blocked + summary->errors > 0 ? exit_failure : exit_ok;
  };
  if (cfg->sql.backend == "postgres") {
    eval::guard_tool_options opts;
    opts.postgres_dsn = cfg->sql.postgres_dsn;
    opts.deadline_ms = cfg->sql.deadline_ms;
    opts.max_rows = cfg->sql.max_rows;
    return report(eval::run_sql_guard_tool_postgres(std::cin, std::cout, opts));
  }
  std::string db;
  if (vm.count("db")) {
    db = vm["db"].as<std::string>();
    if (!std::filesystem::exists(db)) {
      // A missing path is usage (exit 2); an unreadable file is not.
      std::cerr << "candor: no sales database at " << db
                << " (leave out --db to use <data-dir>/sales.db, created "
                   "on first use; or run: candor seed --data-dir DIR)\n";
      return exit_usage;
    }
    if (!std::filesystem::is_regular_file(db)) {
      std::cerr << "candor: sales database " << db << " is not a file\n";
      return exit_usage;
    }
  } else {
    // <data-dir>/sales.db, created from sql.seed when absent and checked
    // against the catalog, as serve and ask do (data::prepare_sales).
    auto sales = prepare_sales_db(*cfg);
    if (!sales) {
      std::cerr << "candor: sql-guard: " << sales.err().message << "\n";
      return exit_code_of(sales.err());
    }
    db = std::move(*sales);
  }
  eval::guard_tool_options opts;
  if (!vm.count("no-executor")) {
    data::executor_settings exec;
    exec.executable = "/proc/self/exe";
    exec.memory_mb = cfg->sql.executor_memory_mb;
    exec.heap_limit_mb = cfg->sql.heap_limit_mb;
    exec.cpu_seconds = cfg->sql.executor_cpu_seconds;
    opts.executor = exec;
    opts.deadline_ms = cfg->sql.deadline_ms;
    opts.max_rows = cfg->sql.max_rows;
  }
  return report(eval::run_sql_guard_tool(std::cin, std::cout, db, opts));
}

/// `candor layers`: the attack x defence-layer matrix and its gate.
int cmd_layers(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("json", "print the matrix as JSON")(
    "attacks", po::value<std::string>(),
    "attack set (default: eval/attacks.v1.json of the source tree)")(
    "db", po::value<std::string>(),
    "sales database (default: <data-dir>/sales.db, generated when absent)")(
    "budget-ms", po::value<int64_t>()->default_value(1000),
    "time the connection layer alone may run a statement (100..60000); "
    "one still running counts as passed")(
    "backend", po::value<std::string>(),
    "sqlite or postgres (default: sql.backend); postgres runs the SQL "
    "columns on the warehouse at CANDOR_SQL_POSTGRES_DSN: the pg_query "
    "policy, the role's privileges (a READ WRITE transaction, always "
    "rolled back) and the READ ONLY executor session");
  po::variables_map vm;
  if (auto rc = parse(
        argc, argv, desc, nullptr,
        "Usage: candor-eval layers [--json] [--attacks FILE] [--db FILE] "
        "[options]\n\nRuns each attack through each defence layer that "
        "applies to it, each layer on its own: input rules and the input "
        "model (direct), the ingestion sanitizer (indirect), the SQL static "
        "policy, the authorizer, the hardened connection and the executor "
        "process with its own guard off (sql, and the SQL a direct attack "
        "would make a model write), the output guard (output, and what a "
        "model that obeyed a direct or indirect attack would reply). "
        "Prints the matrix, per-layer totals, the differences from the "
        "expected layers and the gate. Exit 0 when the gate passes, 1 when "
        "an attack passes every layer, a write is stopped by fewer than 2 "
        "layers or a layer cannot run, 2 on bad usage or a bad attack "
        "file.\n",
        vm);
      rc >= 0)
    return rc;
  auto budget = vm["budget-ms"].as<int64_t>();
  if (budget < 100 || budget > 60000) {
    std::cerr << "candor: --budget-ms must be 100 to 60000\n";
    return exit_usage;
  }
  // The attacks' model replies are recorded fixtures: the scripted
  // provider unless an endpoint is configured.
  std::map<std::string, std::string> flags{{"llm.provider", "fake"},
                                           {"llm.localFallback", "false"}};
  if (vm.count("backend"))
    flags["sql.backend"] = vm["backend"].as<std::string>();
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  eval::layers_command_options opts;
  opts.cfg = *cfg;
  opts.attacks_path = vm.count("attacks") ? vm["attacks"].as<std::string>()
                                          : eval::default_attacks_path();
  if (vm.count("db"))
    opts.db = vm["db"].as<std::string>();
  opts.budget_ms = budget;
  opts.json = vm.count("json") > 0;
  return eval::run_layers_command(opts, std::cout, std::cerr);
}

/// `candor-eval data`: the data planner on the labelled data questions.
int cmd_data(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("split", po::value<std::string>()->default_value("test"),
                     "split: test, calibration or all")(
    "questions", po::value<std::string>(),
    "question set (default: eval/data_questions.v1.json of the source tree)")(
    "thresholds", po::value<std::string>(),
    "bounds (default: eval/local_thresholds.json of the source tree)")(
    "catalog", po::value<std::string>(),
    "catalog (default: sql.catalog, else the built-in conf/catalog.json)")(
    "question", po::value<std::string>(),
    "print the plan (or the refusal) of this one question and stop")(
    "bench", po::value<int>()->default_value(0),
    "also time planning: plan each question N more times and print the "
    "P50/P99 of one plan")("list", "print every question, not only misses")(
    "gate", po::value<std::string>(),
    "comma-separated figures whose bound sets the exit status "
    "(dataExecAccuracy,dataRefusalRate; default: both)")(
    "follow-ups", "measure follow-up resolution on eval/followups.v1.json "
    "(or --questions) instead: each follow-up read against the turn before")(
    "backend", po::value<std::string>(),
    "sqlite or postgres (default: sql.backend): with postgres the planner "
    "writes PostgreSQL, the pg_query policy judges it and it runs on the "
    "warehouse at CANDOR_SQL_POSTGRES_DSN (the reading role) through the "
    "sandbox's session; the references still run on the SQLite file");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor-eval data [--split test|calibration|all] "
                      "[--question Q] [options]\n\nPlans every question of "
                      "eval/data_questions.v1.json with the local provider's "
                      "data planner (no model), runs the planned SQL through "
                      "the statement policy and the validation connection "
                      "and compares its result with the hand-written "
                      "reference SQL's; prints execution accuracy and the "
                      "share of refusals with every miss. Exit 1 when a "
                      "figure is below its bound.\n",
                      vm);
      rc >= 0)
    return rc;
  eval::data_command cmd;
  cmd.split = vm["split"].as<std::string>();
  cmd.list_hits = vm.count("list") > 0;
  cmd.bench_rounds = vm["bench"].as<int>();
  for (auto [flag, field] : {std::pair{"questions", &cmd.questions_path},
                             std::pair{"thresholds", &cmd.thresholds_path},
                             std::pair{"catalog", &cmd.catalog_path},
                             std::pair{"question", &cmd.question}})
    if (vm.count(flag))
      *field = vm[flag].as<std::string>();
  if (cmd.split != "test" && cmd.split != "calibration" && cmd.split != "all") {
    std::cerr << "candor: data: --split takes test, calibration or all\n";
    return exit_usage;
  }
  if (vm.count("gate")) {
    std::string list = vm["gate"].as<std::string>();
    for (size_t pos = 0; pos <= list.size();) {
      auto end = std::min(list.find(',', pos), list.size());
      auto name = list.substr(pos, end - pos);
      if (name != "dataExecAccuracy" && name != "dataRefusalRate") {
        std::cerr << "candor: data: --gate takes dataExecAccuracy and "
                     "dataRefusalRate, not '"
                  << name << "'\n";
        return exit_usage;
      }
      cmd.gated.push_back(std::move(name));
      pos = end + 1;
    }
  }
  std::map<std::string, std::string> flags{{"log.level", "warn"}};
  if (vm.count("backend"))
    flags["sql.backend"] = vm["backend"].as<std::string>();
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  cmd.backend = cfg->sql.backend;
  cmd.postgres_dsn = cfg->sql.postgres_dsn;
  // Without --catalog, the configured one (sql.catalog), as serve reads.
  if (cmd.catalog_path.empty())
    cmd.catalog_path = cfg->sql.catalog;
  if (cmd.question.empty()) {
    auto sales = prepare_sales_db(*cfg);
    if (!sales) {
      std::cerr << "candor: data: " << sales.err().message << "\n";
      return exit_failure;
    }
    cmd.sales_db = *sales;
  }
  if (vm.count("follow-ups"))
    return eval::run_follow_up_command(cmd, std::cout, std::cerr);
  return eval::run_data_command(cmd, std::cout, std::cerr);
}

} // namespace candor::cli
