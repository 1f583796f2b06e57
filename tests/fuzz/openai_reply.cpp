// Fuzz target: what comes back from a model endpoint — the chat-completions
// reply parser, the guard classifier's verdict and a Retry-After value.

#include <chrono>
#include <cstdint>
#include <string_view>

#include "domain/model/openai_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor::domain;
  std::string_view text{reinterpret_cast<const char*>(data), size};
  (void)parse_chat_response(text);
  (void)parse_guard_reply(text);
  (void)retry_after_ms(text.substr(0, 64), std::chrono::system_clock::now());
  return 0;
}
