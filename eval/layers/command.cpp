// `candor layers` after option parsing: loads the attacks, finds or
// generates the sales database, runs the layers and prints the matrix.

#include "eval/layers/command.hpp"

#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <utility>

#include <boost/json/serialize.hpp>

#include "data/sales/catalog.hpp"
#include "data/prompts.hpp"
#include "data/sales/gen.hpp"
#include "data/sales/setup.hpp"
#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/json_text.hpp"
#include "eval/layers/attacks.hpp"
#include "eval/layers/runner.hpp"
#include "data/progress.hpp"

namespace candor::eval {

namespace {

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

int failure(std::ostream& err, const domain::error& e) {
  err << "candor: layers: " << e.message << "\n";
  return e.code == domain::ec::config_invalid ? exit_usage : exit_failure;
}

/// The database to judge SQL on: the given one, or `<data-dir>/sales.db`
/// generated when absent (as `serve` does) and checked against the catalog.
domain::outcome<std::string> sales_db(const layers_command_options& opts) {
  if (!opts.db.empty()) {
    if (!std::filesystem::exists(opts.db))
      return domain::make_error(domain::ec::config_invalid,
                                "no sales database at " + opts.db);
    if (!std::filesystem::is_regular_file(opts.db))
      return domain::make_error(domain::ec::config_invalid,
                                "sales database " + opts.db + " is not a file");
    // A file that is not a database, or a corrupt one, is a runtime
    // failure naming the file (as for sql-guard and serve).
    auto db = data::open_read_only(opts.db);
    auto tables = db ? data::user_tables(*db)
                     : domain::outcome<std::vector<std::string>>{db.err()};
    if (!tables)
      return domain::make_error(domain::ec::storage_failed,
                                "cannot read the sales database '" + opts.db
                                  + "': " + tables.err().message);
    return opts.db;
  }
  std::error_code ec;
  std::filesystem::create_directories(opts.cfg.data_dir, ec);
  if (ec)
    return domain::make_error(domain::ec::storage_failed,
                              "cannot create data directory '"
                                + opts.cfg.data_dir + "': " + ec.message());
  auto cat = data::catalog::load_default();
  if (!cat)
    return cat.err();
  auto sales = data::prepare_sales(
    opts.cfg.data_dir, opts.cfg.sql.seed,
    std::make_shared<const data::catalog>(std::move(*cat)), {});
  if (!sales)
    return sales.err();
  return sales->path;
}

} // namespace

int run_layers_command(const layers_command_options& opts, std::ostream& out,
                       std::ostream& err) {
  auto set = load_attacks(opts.attacks_path);
  if (!set)
    return failure(err, set.err());
  auto db = sales_db(opts);
  if (!db)
    return failure(err, db.err());
  auto prompts = data::load_prompts(data::default_prompts_dir());
  if (!prompts)
    return failure(err, prompts.err());
  const auto& cfg = opts.cfg;
  layer_runner_options ro;
  ro.sales_db = *db;
  ro.canary = cfg.guardrail.canary;
  for (auto& [name, pr] : *prompts)
    ro.prompt_texts.push_back(pr.text);
  ro.fixtures_dir = cfg.fixtures_path();
  ro.scripted_provider = cfg.llm.provider == "fake";
  ro.heap_limit_mb = cfg.sql.heap_limit_mb;
  ro.connection_budget_ms = opts.budget_ms;
  ro.executor.executable = data::default_executor_binary();
  ro.executor.memory_mb = cfg.sql.executor_memory_mb;
  ro.executor.heap_limit_mb = cfg.sql.heap_limit_mb;
  ro.executor.cpu_seconds = cfg.sql.executor_cpu_seconds;
  ro.deadline_ms = cfg.sql.deadline_ms;
  ro.max_rows = cfg.sql.max_rows;
  if (cfg.sql.backend == "postgres")
    ro.postgres_dsn = cfg.sql.postgres_dsn;
  auto runner = layer_runner::open(std::move(ro));
  if (!runner) {
    // A broken fixture file or catalog is configuration; the rest is not.
    err << "candor: layers: " << runner.err().message << "\n";
    return exit_failure;
  }
  auto started = std::chrono::steady_clock::now();
  data::progress_stream progress{err, data::is_terminal(err)};
  auto rows = runner->run_all(
    set->attacks,
    [&out = progress.get()](size_t done, size_t total, const std::string& id) {
      out << "\rlayers: " << done << "/" << total << " " << id << "            "
          << std::flush;
    });
  progress.done();
  if (!rows) {
    err << "candor: layers: " << rows.err().message << "\n";
    return exit_failure;
  }
  auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count()
                / 100;
  if (opts.json)
    out << domain::json_text(to_json(*rows)) << "\n";
  else
    out << format_matrix(*rows);
  out.flush();
  err << "layers: " << rows->size() << " attacks in " << tenths / 10 << "."
      << tenths % 10 << " s\n";
  return check_gate(*rows).empty() ? exit_ok : exit_failure;
}

} // namespace candor::eval
