// The plumbing both binaries share: common options, parsing with --help,
// the layered configuration, starting the service and the dispatch of main.

#include "data/config_load.hpp"
#include "app/cli.hpp"

#include <filesystem>
#include <iostream>

#include "data/sql/executor.hpp"
#include "data/sqlite.hpp"

#include "net/llm_client.hpp"

namespace candor::cli {

po::options_description common_options() {
  po::options_description d{"Common options"};
  d.add_options()("help,h", "show this help")(
    "data-dir", po::value<std::string>(),
    "directory for databases (default: var/, created on first start)")(
    "config", po::value<std::string>(),
    "JSON file overriding the built-in defaults (same keys as "
    "conf/candor.json)");
  return d;
}

void add_data_options(po::options_description& desc) {
  desc.add_options()("db", po::value<std::string>(),
                     "a SQLite database of your own to answer from, read as "
                     "it is (sql.database; default: <data-dir>/sales.db, "
                     "the generated sample)")(
    "catalog", po::value<std::string>(),
    "the catalog describing it (sql.catalog; default: the built-in "
    "conf/catalog.json)");
}

/// Parses options; prints help or errors. Returns -1 to continue.
int parse(int argc, char** argv, const po::options_description& desc,
          const po::positional_options_description* pos, const char* usage,
          po::variables_map& vm) {
  try {
    po::command_line_parser parser{argc, argv};
    parser.options(desc);
    // Without a positional description Program Options drops positional
    // tokens silently; an empty one makes any of them "too many".
    po::positional_options_description none;
    parser.positional(pos ? *pos : none);
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
  if (vm.count("db"))
    flags["sql.database"] = vm["db"].as<std::string>();
  if (vm.count("catalog"))
    flags["sql.catalog"] = vm["catalog"].as<std::string>();
  std::string file;
  if (vm.count("config"))
    file = vm["config"].as<std::string>();
  // Errors name the flag a value came from, not only its key.
  static const std::map<std::string, std::string> names{
    {"dataDir", "--data-dir"},
    {"http.bind", "--bind"},
    {"http.port", "--port"},
    {"http.allowUnauthenticated", "--allow-unauthenticated"},
    {"sql.seed", "--seed"},
    {"sql.database", "--db"},
    {"sql.catalog", "--catalog"}};
  return data::load_config(domain::default_config_json(), file,
                           data::candor_environment(), flags, names);
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

int exit_code_of(const domain::error& e) {
  return e.code == domain::ec::config_invalid ? exit_usage : exit_failure;
}

int start_failure(const domain::error& e) {
  std::cerr << "candor: cannot start: " << e.message << "\n";
  return exit_code_of(e);
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

namespace {

/// The hidden `executor` subcommand: one sandboxed SQL executor process,
/// started by the SQL sandbox (data/sql/executor.hpp) with its socket on a
/// descriptor. Not for interactive use.
int cmd_executor(int argc, char** argv) {
  auto opts = data::parse_executor_args(argc, argv);
  if (!opts) {
    std::cerr << "candor: " << opts.err().message << "\n";
    return exit_usage;
  }
  return data::executor_main(*opts);
}

} // namespace

int run(int argc, char** argv, const char* program, const char* help,
        std::span<const command> commands) {
  if (argc < 2) {
    std::cerr << help;
    return exit_usage;
  }
  // Before anything opens a database: the SQL guard's compile budget
  // (data/sqlite.hpp) can only be installed before SQLite initialises.
  if (auto err = data::install_allocation_budget()) {
    std::cerr << program << ": " << err.message << "\n";
    return exit_code_of(err);
  }
  std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << help;
    return exit_ok;
  }
  if (cmd == "--version" || cmd == "version") {
    std::cout << version_text(program);
    return exit_ok;
  }
  if (cmd == "executor")
    return cmd_executor(argc - 1, argv + 1);
  for (const auto& c : commands)
    if (c.name == cmd)
      return c.run(argc - 1, argv + 1); // argv without the program name
  std::cerr << program << ": unknown command '" << cmd << "'\n\n" << help;
  return exit_usage;
}

} // namespace candor::cli
