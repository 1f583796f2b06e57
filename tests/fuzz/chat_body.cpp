// Fuzz target: the /v1/chat/completions body reader
// (domain::openai::parse_chat_body) and what is rendered from it. Any bytes
// must give a request or an invalid_request / not_found error, never a
// crash; the error renders in OpenAI's shape.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "domain/api/openai_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor::domain;
  std::string_view body{reinterpret_cast<const char*>(data), size};
  auto r = openai::parse_chat_body(body);
  if (r) {
    // What the reader accepts is what the contract allows.
    if (r->ask.question.empty() || r->ask.question.size() > 4 * 500)
      std::abort();
    ask_state st;
    st.status = status_kind::answered;
    st.answer = r->ask.question;
    auto sse = openai::completion_stream(st, 0, r->stream_usage, 8);
    if (sse.find("data: [DONE]") == std::string::npos)
      std::abort();
  } else if (r.err().code != ec::invalid_request
             && r.err().code != ec::not_found) {
    std::abort();
  } else if (openai::error_body(r.err()).empty()) {
    std::abort();
  }
  return 0;
}
