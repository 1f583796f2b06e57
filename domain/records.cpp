#include "domain/records.hpp"

namespace candor::domain {

std::string cut_utf8(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80) {
      if (chars == max_chars)
        return text.substr(0, i);
      ++chars;
    }
  }
  return text;
}

} // namespace candor::domain
