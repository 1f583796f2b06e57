// Fuzz target: the input rules with their normalisation, over every scope.

#include <cstdint>
#include <string_view>

#include "domain/guard/input_rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor::domain;
  std::string_view text{reinterpret_cast<const char*>(data), size};
  const auto& rules = rule_set::builtin();
  (void)rules.evaluate(text, rule_scope::input);
  (void)rules.evaluate(text, rule_scope::document);
  return 0;
}
