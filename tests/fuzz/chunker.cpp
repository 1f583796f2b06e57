// Fuzz target: the Markdown chunker with the ingestion sanitizer, and the
// sanitizer and sentence splitter on their own. Chunks must hold text and
// keep their order.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "data/retrieval/chunker.hpp"
#include "domain/guard/sanitizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  auto doc = candor::data::chunk_markdown("fuzz", text);
  for (size_t i = 0; i < doc.chunks.size(); ++i)
    if (doc.chunks[i].ordinal != static_cast<int32_t>(i))
      std::abort();
  (void)candor::domain::sanitize(text);
  (void)candor::domain::split_sentences(text);
  (void)candor::data::slugify(text);
  return 0;
}
