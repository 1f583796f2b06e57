#pragma once

// What the subcommands of `candor` and `candor-eval` share: exit codes, the
// common options, parsing with --help, the layered configuration, starting
// the service and the dispatch in `main`.

#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <string>

#include <boost/program_options.hpp>

#include "actors/app.hpp"
#include "domain/config.hpp"

namespace candor::cli {

namespace po = boost::program_options;

constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

/// --help, --data-dir, --config.
po::options_description common_options();

/// --db FILE and --catalog FILE (sql.database, sql.catalog): a SQLite
/// database of one's own and the catalog describing it, for the commands
/// that answer from the data.
void add_data_options(po::options_description& desc);

/// Parses options; prints help or errors. Returns -1 to continue, otherwise
/// the exit code.
int parse(int argc, char** argv, const po::options_description& desc,
          const po::positional_options_description* pos, const char* usage,
          po::variables_map& vm);

/// conf/candor.json < --config FILE < CANDOR_* < flags (with --data-dir).
domain::outcome<domain::config>
configure(const po::variables_map& vm,
          std::map<std::string, std::string> flags);

int config_failure(const domain::error& e);

/// The exit code of a failed command: 2 (usage) for `config_invalid`, the
/// code of a missing or wrong-kind path, an invalid definition file or a bad
/// value; 1 (runtime) for the rest, such as an unreadable or corrupt
/// database.
int exit_code_of(const domain::error& e);

/// Creates the data directory; false (after saying why) when it cannot.
bool ensure_data_dir(const domain::config& cfg);

int start_failure(const domain::error& e);

/// Starts the service, with the model endpoint's HTTP client when the
/// provider is "openai".
domain::outcome<std::unique_ptr<actors::app>>
start_app(const domain::config& cfg);

/// One subcommand: its name and the function that runs it on argv without
/// the program name.
struct command {
  std::string_view name;
  int (*run)(int argc, char** argv);
};

/// The `main` of both binaries: installs the SQL guard's allocation budget,
/// answers --help and --version, runs the hidden `executor` subcommand (the
/// SQL sandbox starts it) and otherwise the named one of `commands`.
int run(int argc, char** argv, const char* program, const char* help,
        std::span<const command> commands);

/// What `--version` prints: the program, version and commit, then one line
/// per linked library with the version it runs with.
std::string version_text(const char* program);

} // namespace candor::cli
