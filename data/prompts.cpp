// Loading the highest version of every prompt file in a directory
// (conf/prompts by default).

#include "data/prompts.hpp"
#include "domain/build_info.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace candor::data {

namespace fs = std::filesystem;

std::string default_prompts_dir() {
  return std::string{CANDOR_SOURCE_DIR} + "/conf/prompts";
}

domain::outcome<std::map<std::string, prompt>>
load_prompts(const std::string& dir) {
  std::map<std::string, prompt> out;
  std::map<std::string, int> best;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return domain::make_error(domain::ec::config_invalid,
                              "prompts directory '" + dir + "' is missing");
  for (auto& e : fs::directory_iterator{dir, ec}) {
    auto file = e.path().filename().string();
    // <name>.v<N>.txt
    if (e.path().extension() != ".txt")
      continue;
    auto stem = e.path().stem().string();
    auto dot = stem.rfind(".v");
    if (dot == std::string::npos)
      return domain::make_error(domain::ec::config_invalid,
                                "prompt file '" + file
                                  + "' must be named <name>.v<N>.txt");
    auto name = stem.substr(0, dot);
    int version = std::atoi(stem.c_str() + dot + 2);
    if (version <= 0)
      return domain::make_error(domain::ec::config_invalid,
                                "prompt file '" + file
                                  + "' has no valid version number");
    if (best.count(name) && best[name] >= version)
      continue;
    std::ifstream in{e.path(), std::ios::binary};
    std::stringstream ss;
    ss << in.rdbuf();
    best[name] = version;
    out[name] = prompt{name, "v" + std::to_string(version), ss.str()};
  }
  return out;
}

} // namespace candor::data
