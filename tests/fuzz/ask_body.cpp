// Fuzz target: the /ask body reader (domain::parse_ask_body). Any bytes must
// give a request or an invalid_request error with issues, never a crash.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "domain/api/api_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body{reinterpret_cast<const char*>(data), size};
  auto r = candor::domain::parse_ask_body(body);
  if (r) {
    // What the reader accepts is what the contract allows.
    if (r->question.empty() || r->question.size() > 4 * 500)
      std::abort();
  } else if (r.err().code != candor::domain::ec::invalid_request) {
    std::abort();
  }
  return 0;
}
