// Fuzz target: HTML and plain text to the chunker's Markdown (the first
// byte picks the format), then the chunker over what came out. PDF is left
// to poppler's own fuzzing: its parser is a library candor links, not code
// of candor's.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "data/retrieval/chunker.hpp"
#include "data/retrieval/formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  auto format = data[0] % 2 == 0 ? candor::data::doc_format::html
                                 : candor::data::doc_format::text;
  std::string_view bytes{reinterpret_cast<const char*>(data) + 1, size - 1};
  auto md = candor::data::to_markdown(format, bytes, "fuzz");
  if (!md)
    return 0;
  if (md->markdown.rfind("# ", 0) != 0)
    std::abort(); // every converted document begins with its title
  auto doc = candor::data::chunk_markdown("fuzz", md->markdown);
  for (size_t i = 0; i < doc.chunks.size(); ++i)
    if (doc.chunks[i].ordinal != static_cast<int32_t>(i))
      std::abort();
  return 0;
}
