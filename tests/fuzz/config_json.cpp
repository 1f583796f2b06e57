// Fuzz target: the configuration reader (domain::parse_config) with the
// input as the config file over the embedded defaults. Any bytes must give a
// config or a config_invalid error, never a crash.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "domain/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor::domain;
  config_file file{"fuzz.json",
                   std::string{reinterpret_cast<const char*>(data), size}};
  path_kinds paths{[](const std::string&) { return true; },
                   [](const std::string&) { return true; }};
  auto r = parse_config(default_config_json(), &file, {}, {}, {}, paths);
  if (!r && r.err().code != ec::config_invalid)
    std::abort();
  return 0;
}
