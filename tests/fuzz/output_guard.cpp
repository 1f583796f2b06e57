// Fuzz target: the output guard as the server builds it (the canary and the
// prompts as protected texts), on any text with the first line as a
// redacted span.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "domain/guard/output_guard.hpp"
#include "domain/guard/response_guard.hpp"

namespace {

const candor::domain::output_guard& guard() {
  static const auto* g = new candor::domain::output_guard(
    candor::domain::product_output_guard_config(
      "TAILWIND-7731",
      {"You are candor, an assistant that answers questions about Kestrel "
       "Cycle Works using only the passages you are given and refuses "
       "otherwise."}));
  return *g;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  std::vector<std::string> spans;
  auto nl = text.find('\n');
  if (nl != std::string_view::npos && nl > 0)
    spans.emplace_back(text.substr(0, nl));
  (void)guard().check(text, spans);
  return 0;
}
