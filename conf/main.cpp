// candor: one binary, subcommands. See `candor --help`.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <boost/json/serialize.hpp>
#include <boost/program_options.hpp>

#include "actors/app.hpp"
#include "actors/executor.hpp"
#include "data/ingest.hpp"
#include "data/sales_gen.hpp"
#include "eval/sql_guard_tool.hpp"
#include "eval/ablation.hpp"
#include "eval/calibrate.hpp"
#include "eval/attacks.hpp"
#include "eval/layers_command.hpp"
#include "eval/eval.hpp"
#include "domain/api_json.hpp"
#include "domain/config.hpp"
#include "domain/log.hpp"
#include "net/llm_client.hpp"
#include "net/server.hpp"
#include "domain/build_info.hpp"

namespace po = boost::program_options;
using namespace candor;

namespace {

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

const char* top_help = R"(candor - answers questions about Kestrel Cycle Works' documents and sales
data, and refuses rather than guess.

Usage: candor <command> [options]

Commands:
  serve     run the HTTP server (POST /ask, /stats, /metrics, /health, /runs/{id})
  ask       answer one question in-process and print the result
  seed      generate the sales database (<data-dir>/sales.db) and print its
            fingerprint; the same seed always gives the same fingerprint
  ingest    index the documents (data/kb) into <data-dir>/index.db; unchanged
            documents are skipped
  sql-guard audit SQL statements without a model: JSON lines {"id","sql"} on
            stdin, one verdict line per statement with each layer's verdict
  calibrate choose the refusal threshold (retrieval.threshold) on the
            calibration split of eval/retrieval.v1.json; --write FILE sets it
  ablation  recall@3, MRR and refusal accuracy of every retrieval mode at two
            chunk sizes on the test split of eval/retrieval.v1.json
  layers    run every attack of eval/attacks.v1.json through every defence
            layer on its own and print the attack x layer matrix; exit 1
            when an attack passes every layer or a write is stopped by
            fewer than 2 layers
  eval      run the golden questions (eval/golden.v1.json) through the
            service and gate on eval/thresholds.json; exit 1 on a miss

Every command accepts --data-dir DIR and --config FILE, and --help.
Configuration: conf/candor.json (built in) < --config FILE < CANDOR_* environment
variables (e.g. CANDOR_HTTP_PORT, CANDOR_DATA_DIR, CANDOR_GRAPH_REQUEST_DEADLINE_MS)
< flags. Unknown keys or bad values stop startup naming the key (exit 2).
Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error.
)";

po::options_description common_options() {
  po::options_description d{"Common options"};
  d.add_options()("help,h", "show this help")(
    "data-dir", po::value<std::string>(),
    "directory for databases (default: var/, created on first start)")(
    "config", po::value<std::string>(),
    "JSON file overriding the built-in defaults (same keys as conf/candor.json)");
  return d;
}

/// Parses options; prints help or errors. Returns -1 to continue.
int parse(int argc, char** argv, const po::options_description& desc,
          const po::positional_options_description* pos, const char* usage,
          po::variables_map& vm) {
  try {
    po::command_line_parser parser{argc, argv};
    parser.options(desc);
    if (pos)
      parser.positional(*pos);
    po::store(parser.run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "candor: " << e.what() << "\n" << usage << "\n" << desc;
    return exit_usage;
  }
  if (vm.count("help")) {
    std::cout << usage << "\n" << desc;
    return exit_ok;
  }
  return -1;
}

domain::outcome<domain::config>
configure(const po::variables_map& vm,
          std::map<std::string, std::string> flags) {
  if (vm.count("data-dir"))
    flags["dataDir"] = vm["data-dir"].as<std::string>();
  std::string file;
  if (vm.count("config"))
    file = vm["config"].as<std::string>();
  return domain::load_config(domain::default_config_json(), file,
                             domain::candor_environment(), flags);
}

int config_failure(const domain::error& e) {
  std::cerr << "candor: configuration error: " << e.message << "\n";
  return exit_usage;
}

/// Creates the data directory; false (after saying why) when it cannot.
bool ensure_data_dir(const domain::config& cfg) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  if (ec)
    std::cerr << "candor: cannot create data directory '" << cfg.data_dir
              << "': " << ec.message() << "\n";
  return !ec;
}

int start_failure(const domain::error& e) {
  std::cerr << "candor: cannot start: " << e.message << "\n";
  return e.code == domain::ec::config_invalid ? exit_usage : exit_failure;
}

/// Starts the service, with the model endpoint's HTTP client when the
/// provider is "openai".
domain::outcome<std::unique_ptr<actors::app>>
start_app(const domain::config& cfg) {
  std::shared_ptr<domain::http_transport> transport;
  if (cfg.llm.provider == "openai") {
    auto client = net::make_llm_client(net::client_options(cfg));
    if (!client)
      return client.err();
    transport = std::move(*client);
  }
  return actors::app::start(cfg, std::move(transport));
}

int cmd_serve(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("port,p", po::value<std::string>(),
                     "listen port (default 8080; 0 picks a free port)")(
    "bind", po::value<std::string>(), "listen address (default 127.0.0.1)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor serve [options]\n\nRuns the HTTP server "
                      "until SIGTERM or SIGINT, then finishes in-flight "
                      "requests, flushes the ledger and exits 0. SIGHUP "
                      "reloads <data-dir>/index.db (run candor ingest "
                      "first) without stopping; so does POST "
                      "/admin/reindex with the bearer token of "
                      "CANDOR_RETRIEVAL_ADMIN_TOKEN.\n",
                      vm);
      rc >= 0)
    return rc;
  std::map<std::string, std::string> flags;
  if (vm.count("port"))
    flags["http.port"] = vm["port"].as<std::string>();
  if (vm.count("bind"))
    flags["http.bind"] = vm["bind"].as<std::string>();
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  // SIGHUP means "re-index" once the server runs; until then it must not
  // kill the process (the server installs its own handler).
  std::signal(SIGHUP, SIG_IGN);
  auto a = start_app(*cfg);
  if (!a)
    return start_failure(a.err());
  net::server srv{**a, *cfg};
  auto port = srv.listen();
  if (!port) {
    std::cerr << "candor: cannot listen: " << port.err().message << "\n";
    return exit_failure;
  }
  domain::log_event(domain::log_level::info, "listening",
                    {{"address", cfg->http.bind},
                     {"port", static_cast<int64_t>(*port)},
                     {"provider", cfg->llm.provider},
                     {"dataDir", cfg->data_dir}});
  srv.run();
  (*a)->shutdown();
  domain::log_event(domain::log_level::info, "stopped");
  return exit_ok;
}

int cmd_ask(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("question", po::value<std::string>(),
                     "the question (3 to 500 characters)")(
    "json", "print the full JSON response")(
    "route", po::value<std::string>(), "force a route: docs or data");
  po::positional_options_description pos;
  pos.add("question", 1);
  po::variables_map vm;
  const char* usage = "Usage: candor ask \"question\" [--json] "
                      "[--route docs|data] [options]\n";
  if (auto rc = parse(argc, argv, desc, &pos, usage, vm); rc >= 0)
    return rc;
  if (!vm.count("question")) {
    std::cerr << "candor: ask needs a question\n" << usage;
    return exit_usage;
  }
  boost::json::object body{{"question", vm["question"].as<std::string>()}};
  if (vm.count("route"))
    body["forceRoute"] = vm["route"].as<std::string>();
  auto req = domain::parse_ask_body(boost::json::serialize(body));
  if (!req) {
    std::cerr << "candor: invalid question: " << req.err().message << "\n";
    for (auto& i : req.err().issues)
      std::cerr << "  " << i.path << ": " << i.message << "\n";
    return exit_usage;
  }
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  auto a = start_app(*cfg);
  if (!a)
    return start_failure(a.err());
  auto& service = **a;
  req->request_id = domain::new_request_id();
  req->received_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  domain::request_record rec;
  rec.request_id = req->request_id;
  rec.ts_us = req->received_us;
  rec.method = "CLI";
  rec.path = "ask";
  rec.question = domain::cut_utf8(req->question, 200);
  auto started = std::chrono::steady_clock::now();
  auto result = service.ask_sync(*req);
  rec.latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count();
  int rc = exit_ok;
  if (result) {
    auto& st = *result;
    domain::record_outcome(rec, st);
    rec.http_status = 200;
    if (vm.count("json")) {
      std::cout << boost::json::serialize(domain::to_json(st)) << "\n";
    } else {
      std::cout << "[" << domain::to_string(st.status) << "] " << st.answer
                << "\n";
      for (auto& w : st.warnings)
        std::cout << "warning: " << w << "\n";
    }
  } else {
    rec.error = std::string{domain::to_string(result.err().code)};
    rec.http_status = 500;
    std::cerr << "candor: " << domain::to_string(result.err().code) << ": "
              << result.err().message << "\n";
    rc = exit_failure;
  }
  service.completed(std::move(rec));
  service.shutdown();
  return rc;
}

int cmd_seed(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("seed", po::value<uint64_t>()->default_value(
                               data::default_sales_seed),
                     "generator seed")(
    "force", "replace an existing database");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor seed [--seed N] [--force] [options]\n\n"
                      "Generates the deterministic sales database and prints "
                      "its row counts and fingerprint. With an existing "
                      "database and no --force, prints its summary.\n",
                      vm);
      rc >= 0)
    return rc;
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  if (!ensure_data_dir(*cfg))
    return exit_failure;
  auto path = cfg->data_dir + "/sales.db";
  domain::outcome<data::sales_summary> summary
    = domain::make_error(domain::ec::internal, "not run");
  if (std::filesystem::exists(path) && !vm.count("force")) {
    std::cerr << "candor: " << path
              << " exists; summarising it (use --force to regenerate)\n";
    summary = data::summarize_sales(path);
  } else {
    int last = -1;
    summary = data::generate_sales(
      path, vm["seed"].as<uint64_t>(),
      [&last](std::string_view stage, double fraction) {
        int pct = static_cast<int>(fraction * 100);
        if (pct != last) {
          last = pct;
          std::cerr << "\rseed: " << pct << "% " << stage << "          "
                    << std::flush;
        }
      },
      vm.count("force") > 0);
    std::cerr << "\n";
  }
  if (!summary) {
    std::cerr << "candor: seed failed: " << summary.err().message << "\n";
    return exit_failure;
  }
  for (auto& t : summary->tables)
    std::cout << t.table << ": " << t.rows << " rows\n";
  std::cout << "total: " << summary->total_rows << " rows, orders "
            << summary->first_order_date << " .. " << summary->last_order_date
            << "\nfingerprint: " << summary->fingerprint << "\n";
  return exit_ok;
}

int cmd_ingest(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("kb", po::value<std::string>(),
                     "documents directory (default: data/kb of the source "
                     "tree)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor ingest [--kb DIR] [options]\n\n"
                      "Chunks, sanitizes and indexes the Markdown documents; "
                      "prints created / unchanged / removed counts.\n",
                      vm);
      rc >= 0)
    return rc;
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  if (!ensure_data_dir(*cfg))
    return exit_failure;
  auto kb = vm.count("kb") ? vm["kb"].as<std::string>()
                           : std::string{CANDOR_SOURCE_DIR} + "/data/kb";
  auto report = data::ingest(
    kb, cfg->data_dir + "/index.db", data::ingest_options_from(*cfg),
    [](const data::ingest_progress& p) {
      if (p.stage == "scan")
        std::cerr << "\ringest: scanning " << p.done << "/" << p.total
                  << "          " << std::flush;
      else if (p.stage == "index")
        std::cerr << "\ringest: indexing " << p.done << "/" << p.total
                  << " chunks     " << std::flush;
    });
  std::cerr << "\n";
  if (!report) {
    std::cerr << "candor: ingest failed: " << report.err().message << "\n";
    return exit_failure;
  }
  std::cout << data::summary(*report) << "\n"
            << "seconds: " << report->seconds << "\n"
            << "tfidf: " << report->tfidf_fingerprint << "\n"
            << "bm25: " << report->bm25_fingerprint << "\n";
  return exit_ok;
}

int cmd_sql_guard(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("db", po::value<std::string>(),
                     "sales database (default: <data-dir>/sales.db, made by "
                     "candor seed)")(
    "no-executor", "skip the executor layer (by default every statement "
                   "also runs in a sandboxed executor process)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor sql-guard [--db FILE] [options] < "
                      "statements.jsonl\n\nReads {\"id\": ..., \"sql\": "
                      "...} per line and prints the verdict (allow, block, "
                      "error), the blocking layer and reason, and each "
                      "layer's own verdict. Exit 0 when everything was "
                      "allowed, 1 when anything was blocked or invalid.\n",
                      vm);
      rc >= 0)
    return rc;
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  auto db = vm.count("db") ? vm["db"].as<std::string>()
                           : cfg->data_dir + "/sales.db";
  if (!std::filesystem::exists(db)) {
    std::cerr << "candor: no sales database at " << db
              << " (run: candor seed --data-dir " << cfg->data_dir << ")\n";
    return exit_usage;
  }
  eval::guard_tool_options opts;
  if (!vm.count("no-executor")) {
    actors::executor_settings exec;
    exec.executable = "/proc/self/exe";
    exec.memory_mb = cfg->sql.executor_memory_mb;
    exec.heap_limit_mb = cfg->sql.heap_limit_mb;
    exec.cpu_seconds = cfg->sql.executor_cpu_seconds;
    opts.executor = exec;
    opts.deadline_ms = cfg->sql.deadline_ms;
    opts.max_rows = cfg->sql.max_rows;
  }
  auto summary = eval::run_sql_guard_tool(std::cin, std::cout, db, opts);
  if (!summary) {
    std::cerr << "candor: sql-guard: " << summary.err().message << "\n";
    return exit_usage;
  }
  std::cerr << "sql-guard: " << summary->allowed << " allowed, "
            << summary->blocked << " blocked, " << summary->errors
            << " errors\n";
  return summary->blocked + summary->errors > 0 ? exit_failure : exit_ok;
}

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
  desc.add_options()("write", po::value<std::string>(),
                     "set retrieval.threshold in this JSON config file to "
                     "the chosen threshold (e.g. conf/candor.json)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor calibrate [--write FILE] [--json] "
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
    return exit_failure;
  }
  auto scored = eval::score_split(**snap, *set, eval::split_kind::calibration,
                                  mode,
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
    std::cout << boost::json::serialize(v) << "\n";
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
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor ablation [--chunk-sizes N N] [--json] "
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
      opts.kb_dir, static_cast<size_t>(cfg->retrieval.chunk_size),
      opts.params);
    if (!snap) {
      std::cerr << "candor: ablation: " << snap.err().message << "\n";
      return exit_failure;
    }
    std::cout << eval::explain_split(**snap, *set, opts.measure, mode,
                                     opts.k, 10);
    return exit_ok;
  }
  if (vm.count("chunk-sizes")) {
    opts.chunk_sizes = vm["chunk-sizes"].as<std::vector<size_t>>();
    for (auto n : opts.chunk_sizes)
      if (n < 200 || n > 4000) {
        std::cerr << "candor: chunk sizes must be 200 to 4000\n";
        return exit_usage;
      }
  }
  auto report = eval::run_ablation(*set, opts);
  if (!report) {
    std::cerr << "candor: ablation: " << report.err().message << "\n";
    return exit_failure;
  }
  if (vm.count("json")) {
    std::cout << boost::json::serialize(eval::to_json(*report)) << "\n";
  } else {
    std::cout << "set " << report->set_name << ", "
              << eval::to_string(report->measured)
              << " split; thresholds calibrated on the calibration split\n"
              << eval::format_table(*report);
  }
  return exit_ok;
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
    "one still running counts as passed");
  po::variables_map vm;
  if (auto rc = parse(
        argc, argv, desc, nullptr,
        "Usage: candor layers [--json] [--attacks FILE] [--db FILE] "
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
  auto cfg = configure(vm, {});
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
    "where the Markdown and JSON reports go (default: eval/reports of the "
    "source tree)")("limit", po::value<size_t>(),
                    "run only the first N items of the split");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor eval [--split test|calibration|all] "
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
  if (vm.count("limit"))
    cmd.gate.limit = vm["limit"].as<size_t>();
  for (auto [flag, field] : {std::pair{"golden", &cmd.golden_path},
                             std::pair{"thresholds", &cmd.thresholds_path},
                             std::pair{"report-dir", &cmd.report_dir}})
    if (vm.count(flag))
      *field = vm[flag].as<std::string>();
  // One log line per question would bury the report.
  auto cfg = configure(vm, {{"log.level", "warn"}});
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

/// The hidden `candor executor` subcommand: one sandboxed SQL executor
/// process, started by the SQL sandbox (actors/executor.hpp) with its socket
/// on a descriptor. Not for interactive use.
int cmd_executor(int argc, char** argv) {
  auto opts = actors::parse_executor_args(argc, argv);
  if (!opts) {
    std::cerr << "candor: " << opts.err().message << "\n";
    return exit_usage;
  }
  return actors::executor_main(*opts);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << top_help;
    return exit_usage;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << top_help;
    return exit_ok;
  }
  // Subcommands parse argv without the command name.
  if (cmd == "serve")
    return cmd_serve(argc - 1, argv + 1);
  if (cmd == "ask")
    return cmd_ask(argc - 1, argv + 1);
  if (cmd == "seed")
    return cmd_seed(argc - 1, argv + 1);
  if (cmd == "ingest")
    return cmd_ingest(argc - 1, argv + 1);
  if (cmd == "sql-guard")
    return cmd_sql_guard(argc - 1, argv + 1);
  if (cmd == "calibrate")
    return cmd_calibrate(argc - 1, argv + 1);
  if (cmd == "ablation")
    return cmd_ablation(argc - 1, argv + 1);
  if (cmd == "layers")
    return cmd_layers(argc - 1, argv + 1);
  if (cmd == "eval")
    return cmd_eval(argc - 1, argv + 1);
  if (cmd == "executor") // hidden: the SQL sandbox starts it
    return cmd_executor(argc - 1, argv + 1);
  std::cerr << "candor: unknown command '" << cmd << "'\n\n" << top_help;
  return exit_usage;
}
