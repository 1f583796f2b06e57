#pragma once

// Declares the versioned prompt files (conf/prompts/<name>.v<N>.txt) and
// their loader.

#include <map>
#include <string>

#include "domain/error.hpp"

namespace candor::data {

/// A versioned prompt file: conf/prompts/<name>.v<N>.txt.
struct prompt {
  std::string name;
  std::string version; ///< "v1", "v2", ...
  std::string text;
};

/// Loads the highest version of every prompt in `dir`.
domain::outcome<std::map<std::string, prompt>>
load_prompts(const std::string& dir);

/// conf/prompts under the source tree (the default prompts directory).
std::string default_prompts_dir();

} // namespace candor::data
