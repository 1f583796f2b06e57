// The `candor` binary: the server and its operator commands (serve, ask,
// seed, ingest). The measuring commands live in `candor-eval`
// (app/eval_main.cpp).

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

#include <sqlite3.h>

#include "data/clock.hpp"
#include "actors/app.hpp"
#include "app/cli.hpp"
#include "app/catalog_cmd.hpp"
#include "app/keys.hpp"
#include "net/key_gate.hpp"
#include "data/retrieval/ingest.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "data/sales/postgres.hpp"
#include "data/sqlite.hpp"
#include "domain/api/api_json.hpp"
#include "data/sales/setup.hpp"
#include "domain/config.hpp"
#include "domain/json_text.hpp"
#include "data/log.hpp"
#include "domain/log_mask.hpp"
#include "domain/error.hpp"
#include "net/server.hpp"
#include "domain/build_info.hpp"
#include "data/progress.hpp"

namespace po = boost::program_options;
using namespace candor;
using namespace candor::cli;

namespace {

const char* top_help
  = R"(candor - answers questions about a company's documents and its database,
and refuses rather than guess.

Usage: candor <command> [options]

Commands:
  serve     run the HTTP server (POST /ask, /stats, /metrics, /health, /runs/{id})
  ask       answer one question in-process and print the result
  seed      generate the sales database (<data-dir>/sales.db) and print its
            fingerprint; the same seed always gives the same fingerprint
  ingest    index the documents (data/kb) into <data-dir>/index.db; unchanged
            documents are skipped
  keys      add, list or revoke API keys (stored hashed in the ledger)
  catalog   draft a catalog from a SQLite database (catalog draft --db FILE),
            or check one against it (catalog check --db FILE --catalog FILE)
  --version print the version, the commit and the linked libraries' versions

The measuring commands (sql-guard, calibrate, ablation, layers, eval) are in
candor-eval.

Every command accepts --data-dir DIR and --config FILE, and --help.
Configuration: conf/candor.json (built in) < --config FILE < CANDOR_* environment
variables (e.g. CANDOR_HTTP_PORT, CANDOR_DATA_DIR, CANDOR_GRAPH_REQUEST_DEADLINE_MS)
< flags. Unknown keys or bad values stop startup naming the key (exit 2).
Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error.
)";

int cmd_serve(int argc, char** argv) {
  // SQLite's memory statistics take a global mutex around every
  // allocation and free (about 320 per data request). The server needs
  // none of them: the SQL guard's compile budget counts through its own
  // allocator wrapper (data/sqlite.hpp), and the heap limit that needs
  // the statistics is set in the executor processes, which keep them on.
  // Only possible before SQLite initialises (nothing is open yet); when it
  // fails the statistics simply stay on.
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  auto desc = common_options();
  add_data_options(desc);
  desc.add_options()("port,p", po::value<std::string>(),
                     "listen port (default 8080; 0 picks a free port)")(
    "bind", po::value<std::string>(), "listen address (default 127.0.0.1)")(
    "allow-unauthenticated",
    "serve beyond loopback without API keys (http.allowUnauthenticated)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor serve [options]\n\nRuns the HTTP server "
                      "until SIGTERM or SIGINT, then finishes in-flight "
                      "requests, flushes the ledger and exits 0. SIGHUP "
                      "reloads <data-dir>/index.db (run candor ingest "
                      "first) without stopping, and re-reads the API keys "
                      "(candor keys); so does POST /admin/reindex with the "
                      "bearer token of CANDOR_RETRIEVAL_ADMIN_TOKEN (the "
                      "index only). With no API key, serving beyond "
                      "loopback needs --allow-unauthenticated.\n",
                      vm);
      rc >= 0)
    return rc;
  std::map<std::string, std::string> flags;
  if (vm.count("port"))
    flags["http.port"] = vm["port"].as<std::string>();
  if (vm.count("bind"))
    flags["http.bind"] = vm["bind"].as<std::string>();
  if (vm.count("allow-unauthenticated"))
    flags["http.allowUnauthenticated"] = "true";
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  // The API keys, read before anything starts (the ledger's schema is
  // created or migrated here if need be). Without any, the server is
  // open: only on loopback, unless told so explicitly.
  net::key_gate loaded;
  auto active = load_keys(*cfg, loaded, true);
  if (!active)
    return start_failure(active.err());
  if (*active == 0 && !loopback_address(cfg->http.bind)
      && !cfg->http.allow_unauthenticated) {
    std::cerr << "candor: configuration error: --bind " << cfg->http.bind
              << " is reachable from other machines and no API key exists, "
                 "so anyone could ask: create one with 'candor keys add "
                 "NAME', or serve without keys explicitly with "
                 "--allow-unauthenticated (http.allowUnauthenticated: true, "
                 "CANDOR_HTTP_ALLOW_UNAUTHENTICATED=true)\n";
    return exit_usage;
  }
  // SIGHUP means "re-index" once the server runs; until then it must not
  // kill the process (the server installs its own handler).
  std::signal(SIGHUP, SIG_IGN);
  auto a = start_app(*cfg);
  if (!a)
    return start_failure(a.err());
  net::server srv{**a, *cfg};
  if (auto again = load_keys(*cfg, srv.keys(), false); !again)
    return start_failure(again.err());
  key_reloader reloader{*cfg, srv.keys()};
  srv.on_sighup([&reloader] { reloader.kick(); });
  auto port = srv.listen();
  if (!port) {
    std::cerr << "candor: cannot listen: " << port.err().message << "\n";
    return exit_failure;
  }
  data::log_event(data::log_level::info, "listening",
                  {{"address", cfg->http.bind},
                   {"port", static_cast<int64_t>(*port)},
                   {"provider", cfg->llm.provider},
                   {"dataDir", cfg->data_dir},
                   {"apiKeys", static_cast<int64_t>(*active)}});
  srv.run();
  (*a)->shutdown();
  data::log_event(data::log_level::info, "stopped");
  data::flush_log();
  return exit_ok;
}

int cmd_ask(int argc, char** argv) {
  auto desc = common_options();
  add_data_options(desc);
  desc.add_options()("question", po::value<std::string>(),
                     "the question (3 to 500 characters)")(
    "json", "print the full JSON response")("route", po::value<std::string>(),
                                            "force a route: docs or data");
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
  bool json = vm.count("json") > 0;
  auto req = domain::parse_ask_body(boost::json::serialize(body));
  if (!req) {
    // The body's field names are HTTP's; here they are the argument and
    // the flag that gave them.
    auto err = req.err();
    for (auto& i : err.issues)
      i.path = i.path == "question"     ? std::string{"the question"}
               : i.path == "forceRoute" ? std::string{"--route"}
                                        : i.path;
    if (!err.issues.empty())
      err.message = err.issues.front().path + " " + err.issues.front().message;
    for (auto& i : err.issues)
      std::cerr << "candor: ask: " << i.path << " " << i.message << "\n";
    if (err.issues.empty())
      std::cerr << "candor: ask: " << err.message << "\n";
    if (json)
      std::cout << domain::error_body(err, data::new_request_id()) << "\n";
    return exit_usage;
  }
  auto cfg = configure(vm, {});
  if (!cfg)
    return config_failure(cfg.err());
  auto a = start_app(*cfg);
  if (!a)
    return start_failure(a.err());
  auto& service = **a;
  req->request_id = data::new_request_id();
  req->received_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  req->method = "CLI"; // the request row is written by the service
  req->path = "ask";
  auto result = service.ask_sync(*req);
  int rc = exit_ok;
  if (result) {
    auto& st = *result;
    if (json) {
      std::cout << candor::domain::json_text(domain::to_json(st)) << "\n";
    } else {
      std::cout << "[" << domain::to_string(st.status) << "] " << st.answer
                << "\n";
      for (auto& w : st.warnings)
        std::cout << "warning: " << w << "\n";
    }
  } else {
    std::cerr << "candor: " << domain::to_string(result.err().code) << ": "
              << result.err().message << "\n";
    // With --json, the error object HTTP would send ({error, message,
    // requestId}), so that a script reading stdout sees the failure.
    if (json)
      std::cout << domain::error_body(result.err(), req->request_id) << "\n";
    rc = exit_failure;
  }
  service.shutdown();
  return rc;
}

int cmd_seed(int argc, char** argv) {
  auto desc = common_options();
  desc.add_options()("seed", po::value<std::string>(),
                     "generator seed, 0 to 9223372036854775807 (default: "
                     "sql.seed, 42)")("force", "replace an existing database")(
    "backend", po::value<std::string>(),
    "sqlite or postgres (default: sql.backend); postgres copies the "
    "generated database into schema 'sales' at sql.postgresDsn "
    "(CANDOR_SQL_POSTGRES_DSN)");
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, nullptr,
                      "Usage: candor seed [--seed N] [--force] [--backend "
                      "sqlite|postgres] [options]\n\n"
                      "Generates the deterministic sales database and prints "
                      "its row counts and fingerprint. With an existing "
                      "database and no --force, prints its summary. With "
                      "--backend postgres, also copies it into the schema "
                      "'sales' of the PostgreSQL database at "
                      "CANDOR_SQL_POSTGRES_DSN and prints the summary read "
                      "back from there (the same fingerprint).\n",
                      vm);
      rc >= 0)
    return rc;
  // The flag is sql.seed's, with its range check.
  std::map<std::string, std::string> flags;
  if (vm.count("seed"))
    flags["sql.seed"] = vm["seed"].as<std::string>();
  if (vm.count("backend"))
    flags["sql.backend"] = vm["backend"].as<std::string>();
  auto cfg = configure(vm, flags);
  if (!cfg)
    return config_failure(cfg.err());
  if (!ensure_data_dir(*cfg))
    return exit_failure;
  auto path = cfg->data_dir + "/sales.db";
  domain::outcome<data::sales_summary> summary
    = domain::make_error(domain::ec::internal, "not run");
  bool generate = vm.count("force") || !std::filesystem::exists(path);
  if (!generate) {
    summary = data::summarize_sales(path);
    // A 0-byte or table-less file holds nothing to keep (serve and ask
    // generate over it too).
    generate = summary && summary->tables.empty();
    if (generate)
      std::cerr << "candor: " << path << " holds no tables; generating it\n";
    else
      std::cerr << "candor: " << path
                << " exists; summarising it (use --force to regenerate)\n";
  }
  if (generate) {
    int last = -1;
    data::progress_stream progress{std::cerr, data::is_terminal(std::cerr)};
    summary = data::generate_sales(
      path, cfg->sql.seed,
      [&last, &out = progress.get()](std::string_view stage, double fraction) {
        int pct = static_cast<int>(fraction * 100);
        if (pct != last) {
          last = pct;
          out << "\rseed: " << pct << "% " << stage << "          "
              << std::flush;
        }
      },
      vm.count("force") > 0);
    progress.done();
  }
  if (!summary) {
    std::cerr << "candor: seed failed: sales database '" << path
              << "': " << summary.err().message << "\n";
    return exit_failure;
  }
  if (cfg->sql.backend == "postgres") {
    auto existing = data::summarize_postgres_sales(cfg->sql.postgres_dsn);
    if (!existing) {
      std::cerr << "candor: seed failed: PostgreSQL warehouse: "
                << existing.err().message << "\n";
      return exit_failure;
    }
    if (!existing->tables.empty() && !vm.count("force")) {
      std::cerr << "candor: the PostgreSQL warehouse exists; summarising it "
                   "(use --force to replace it)\n";
      summary = std::move(existing);
    } else {
      int last = -1;
      data::progress_stream progress{std::cerr, data::is_terminal(std::cerr)};
      summary = data::copy_sales_to_postgres(
        path, cfg->sql.postgres_dsn,
        [&last, &out = progress.get()](std::string_view stage,
                                        double fraction) {
          int pct = static_cast<int>(fraction * 100);
          if (pct != last) {
            last = pct;
            out << "\rpostgres: " << pct << "% " << stage << "          "
                << std::flush;
          }
        },
        true);
      progress.done();
      if (!summary) {
        std::cerr << "candor: seed failed: PostgreSQL warehouse: "
                  << summary.err().message << "\n";
        return exit_failure;
      }
    }
    // The role candor reads as: the catalog's columns only, read-only,
    // with the statement deadline on the server.
    auto cat = data::load_catalog(*cfg);
    if (!cat) {
      std::cerr << "candor: seed failed: sales catalog: " << cat.err().message
                << "\n";
      return exit_failure;
    }
    data::reader_limits limits;
    limits.statement_timeout_ms = cfg->sql.deadline_ms;
    if (auto err = data::provision_postgres_reader(
          cfg->sql.postgres_dsn, *cat, "candor_reader", limits)) {
      std::cerr << "candor: seed failed: PostgreSQL reader role: "
                << err.message << "\n";
      return exit_failure;
    }
    std::cerr << "candor: role candor_reader may read the catalog's columns "
                 "of schema sales, read-only, statement_timeout "
              << cfg->sql.deadline_ms << " ms\n";
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
                      "Chunks, sanitizes and indexes the documents of DIR "
                      "(Markdown, plain text, HTML and PDF: *.md, *.txt, "
                      "*.html, *.htm, *.pdf); prints created / unchanged / "
                      "removed counts, each file it could not read and why, "
                      "and each hidden passage it left out.\n",
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
  data::progress_stream progress{std::cerr, data::is_terminal(std::cerr)};
  auto report = data::ingest(
    kb, cfg->data_dir + "/index.db", data::ingest_options_from(*cfg),
    [&out = progress.get()](const data::ingest_progress& p) {
      if (p.stage == "scan")
        out << "\ringest: scanning " << p.done << "/" << p.total << "          "
            << std::flush;
      else if (p.stage == "index")
        out << "\ringest: indexing " << p.done << "/" << p.total
            << " chunks     " << std::flush;
    });
  progress.done();
  if (!report) {
    std::cerr << "candor: ingest failed: " << report.err().message << "\n";
    return exit_code_of(report.err());
  }
  for (const auto& [file, why] : report->skipped)
    std::cerr << "candor: ingest: skipped " << file << ": " << why << "\n";
  for (const auto& [file, what] : report->hidden)
    std::cerr << "candor: ingest: left out of " << file << ", not shown to a "
              << "reader (" << what << ")\n";
  std::cout << data::summary(*report) << "\n"
            << "seconds: " << report->seconds << "\n"
            << "tfidf: " << report->tfidf_fingerprint << "\n"
            << "bm25: " << report->bm25_fingerprint << "\n";
  return exit_ok;
}

} // namespace

int main(int argc, char** argv) {
  static constexpr command commands[] = {{"serve", cmd_serve},
                                         {"ask", cmd_ask},
                                         {"seed", cmd_seed},
                                         {"ingest", cmd_ingest},
                                         {"keys", cmd_keys},
                                         {"catalog", cmd_catalog}};
  return run(argc, argv, "candor", top_help, commands);
}
