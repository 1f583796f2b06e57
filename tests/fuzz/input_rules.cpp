// Fuzz target: the input rules with their normalisation and the second
// canonical text, over every scope, and the question path with the scorer.

#include <cstdint>
#include <string_view>

#include "domain/guard/deobfuscate.hpp"
#include "domain/guard/input_rules.hpp"
#include "domain/guard/input_scorer.hpp"
#include "domain/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor::domain;
  std::string_view text{reinterpret_cast<const char*>(data), size};
  const auto& rules = rule_set::builtin();
  (void)rules.evaluate(text, rule_scope::input);
  (void)rules.evaluate(text, rule_scope::document);
  (void)rules.evaluate_question(text, input_scorer::builtin());
  // The second text must stay canonical: lower-case a-z0-9 words.
  if (auto d = deobfuscate(text, normalize(text))) {
    for (char c : d->text)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' '))
        __builtin_trap();
  }
  return 0;
}
