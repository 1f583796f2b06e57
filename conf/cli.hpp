#pragma once

// What every `candor` subcommand shares: exit codes, the common options,
// parsing with --help, the layered configuration and starting the service.

#include <map>
#include <memory>
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

// The evaluation and tooling commands (conf/eval_commands.cpp).
int cmd_sql_guard(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);
int cmd_ablation(int argc, char** argv);
int cmd_layers(int argc, char** argv);
int cmd_eval(int argc, char** argv);

} // namespace candor::cli
