// `candor catalog draft` and `candor catalog check`: a catalog drafted from
// a SQLite database, and a catalog checked against one (see
// data/catalog/draft.hpp and data/catalog/check.hpp).

#include "app/catalog_cmd.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sqlite3.h>

#include "app/cli.hpp"
#include "data/catalog/check.hpp"
#include "data/catalog/draft.hpp"
#include "data/progress.hpp"
#include "data/sqlite.hpp"

namespace candor::cli {

namespace {

const char* catalog_usage
  = "Usage: candor catalog draft --db FILE [--max-values N] > catalog.json\n"
    "       candor catalog check --db FILE --catalog FILE\n\n"
    "draft  writes a catalog for the SQLite database FILE on stdout: every\n"
    "       table and column with its type, foreign keys as joins, the values\n"
    "       of text columns with at most N (default 12) distinct ones, draft\n"
    "       metrics (counts and sums), and a semantic layer for the local\n"
    "       planner. Columns whose name or contents look personal (names,\n"
    "       e-mail addresses, telephone numbers, addresses, IBANs, birth\n"
    "       dates, national ids) are restricted; stderr says which and why.\n"
    "check  checks a catalog against the database: unknown tables or\n"
    "       columns, joins that do not hold, metrics that do not compile or\n"
    "       read restricted columns. Each problem names its line; exit 1\n"
    "       when there is an error, 0 when there are only warnings.\n";

/// Opens an existing database read-only; a missing or unreadable file is
/// said and gives the usage exit code.
std::optional<data::database> open_db(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::cerr << "candor: catalog: --db " << path
              << ": no such file (a SQLite database)\n";
    return std::nullopt;
  }
  auto db = data::database::open(path, SQLITE_OPEN_READONLY);
  if (!db) {
    std::cerr << "candor: catalog: --db " << path << ": " << db.err().message
              << "\n";
    return std::nullopt;
  }
  // A file that is not a database opens; reading it fails.
  if (auto probe = db->query_int64("SELECT COUNT(*) FROM sqlite_schema");
      !probe) {
    std::cerr << "candor: catalog: --db " << path << ": not a SQLite database ("
              << probe.err().message << ")\n";
    return std::nullopt;
  }
  return std::move(*db);
}

int draft(const po::variables_map& vm) {
  auto path = vm["db"].as<std::string>();
  auto db = open_db(path);
  if (!db)
    return exit_usage;
  data::draft_options opts;
  opts.source_name = std::filesystem::path{path}.filename().string();
  if (vm.count("max-values")) {
    auto n = vm["max-values"].as<std::string>();
    char* end = nullptr;
    auto v = std::strtol(n.c_str(), &end, 10);
    if (end == n.c_str() || *end != '\0' || v < 1 || v > 200) {
      std::cerr << "candor: catalog: --max-values must be a number from 1 to "
                   "200 (got '"
                << n << "')\n";
      return exit_usage;
    }
    opts.max_values = static_cast<size_t>(v);
  }
  data::progress_stream progress{std::cerr, data::is_terminal(std::cerr)};
  opts.progress = [&out = progress.get()](const std::string& table, size_t done,
                                          size_t total) {
    out << "\rcatalog draft: read " << done << "/" << total << " tables"
        << (table.empty() ? "" : ", now " + table) << "          "
        << std::flush;
  };
  auto result = data::draft_catalog(*db, opts);
  progress.done();
  if (!result) {
    std::cerr << "candor: catalog draft: " << result.err().message << "\n";
    return exit_code_of(result.err());
  }
  std::cout << result->json << std::flush;
  for (auto& note : result->notes)
    std::cerr << "candor: catalog draft: " << note << "\n";
  return exit_ok;
}

int check(const po::variables_map& vm) {
  if (!vm.count("catalog")) {
    std::cerr << "candor: catalog check needs --catalog FILE\n"
              << catalog_usage;
    return exit_usage;
  }
  auto file = vm["catalog"].as<std::string>();
  std::ifstream in{file, std::ios::binary};
  if (!in) {
    std::cerr << "candor: catalog: --catalog " << file << ": cannot read it\n";
    return exit_usage;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto db = open_db(vm["db"].as<std::string>());
  if (!db)
    return exit_usage;
  auto findings = data::check_catalog(text.str(), *db);
  size_t errors = 0;
  for (auto& f : findings) {
    errors += f.error ? 1 : 0;
    std::cout << data::format_finding(file, f) << "\n";
  }
  std::cout << file << ": " << errors << " error" << (errors == 1 ? "" : "s")
            << ", " << findings.size() - errors << " warning"
            << (findings.size() - errors == 1 ? "" : "s") << "\n";
  return errors == 0 ? exit_ok : exit_failure;
}

} // namespace

int cmd_catalog(int argc, char** argv) {
  po::options_description desc{"Options"};
  desc.add_options()("help,h", "print this help")(
    "action", po::value<std::string>(),
    "draft or check")("db", po::value<std::string>(), "the SQLite database")(
    "catalog", po::value<std::string>(), "check: the catalog to check")(
    "max-values", po::value<std::string>(),
    "draft: most distinct values a text column may have to get its list "
    "(default 12)");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (auto rc = parse(argc, argv, desc, &pos, catalog_usage, vm); rc >= 0)
    return rc;
  auto action = vm.count("action") ? vm["action"].as<std::string>() : "";
  if (action != "draft" && action != "check") {
    std::cerr << "candor: catalog needs draft or check\n" << catalog_usage;
    return exit_usage;
  }
  if (!vm.count("db")) {
    std::cerr << "candor: catalog " << action << " needs --db FILE\n"
              << catalog_usage;
    return exit_usage;
  }
  if (action == "draft" && vm.count("catalog")) {
    std::cerr << "candor: catalog draft writes a catalog on stdout; --catalog "
                 "is for check\n";
    return exit_usage;
  }
  return action == "draft" ? draft(vm) : check(vm);
}

} // namespace candor::cli
