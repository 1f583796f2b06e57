#pragma once

// Loading the configuration from the outside world: the config file from
// disk, the CANDOR_* variables from the process environment and the kinds
// of the paths it names; domain::parse_config does the rest.

#include <map>
#include <string>
#include <string_view>

#include "domain/config.hpp"

namespace candor::data {

/// Reads the process environment's CANDOR_* variables (empty ones skipped).
domain::env_lookup candor_environment();

/// domain::parse_config with `config_file` (if not empty) read from disk
/// and the configured paths looked up on the file system.
domain::outcome<domain::config>
load_config(std::string_view defaults_json, const std::string& config_file,
            const domain::env_lookup& env,
            const std::map<std::string, std::string>& flags,
            const std::map<std::string, std::string>& flag_names = {});

} // namespace candor::data
