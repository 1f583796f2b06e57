// Loading the configuration from disk and the process environment, then
// handing the texts to domain::parse_config.

#include "data/config_load.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace candor::data {

namespace {

domain::error invalid(std::string message) {
  return domain::make_error(domain::ec::config_invalid, std::move(message));
}

} // namespace

domain::env_lookup candor_environment() {
  domain::env_lookup out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv{*e};
    if (kv.substr(0, 7) != "CANDOR_")
      continue;
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq + 1 == kv.size())
      continue; // an empty variable counts as unset
    out.emplace(std::string{kv.substr(0, eq)}, std::string{kv.substr(eq + 1)});
  }
  return out;
}

domain::outcome<domain::config>
load_config(std::string_view defaults_json, const std::string& config_file,
            const domain::env_lookup& env,
            const std::map<std::string, std::string>& flags,
            const std::map<std::string, std::string>& flag_names) {
  domain::config_file file;
  if (!config_file.empty()) {
    std::error_code fs_ec;
    if (std::filesystem::is_directory(config_file, fs_ec))
      return invalid("config file '" + config_file
                     + "' is a directory, not a JSON file");
    std::ifstream in{config_file, std::ios::binary};
    if (!in)
      return invalid("cannot read config file '" + config_file + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    file.name = config_file;
    file.text = ss.str();
  }
  domain::path_kinds paths;
  paths.is_directory = [](const std::string& p) {
    std::error_code ec;
    return std::filesystem::is_directory(p, ec);
  };
  paths.is_file = [](const std::string& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
  };
  return domain::parse_config(defaults_json,
                              config_file.empty() ? nullptr : &file, env, flags,
                              flag_names, paths);
}

} // namespace candor::data
