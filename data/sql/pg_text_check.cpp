// Text checks of the PostgreSQL statement policy, before parsing.

#include "data/sql/pg_text_check.hpp"

#include <cstdint>

namespace candor::data {

problem text_problem(std::string_view sql, int max_depth) {
  int depth = 0;
  enum { code, quote, ident, line, block } state = code;
  for (size_t i = 0; i < sql.size();) {
    auto b = static_cast<unsigned char>(sql[i]);
    if (b < 0x80) {
      if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F)
        return {"control_character", "the statement holds a control character",
                i};
      char c = static_cast<char>(b);
      char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
      switch (state) {
        case code:
          if (c == '\'')
            state = quote;
          else if (c == '"')
            state = ident;
          else if (c == '-' && next == '-')
            state = line;
          else if (c == '/' && next == '*')
            state = block;
          else if (c == '(' && ++depth > max_depth)
            return {"nesting_too_deep", "parentheses nest too deeply", i};
          else if (c == ')' && depth > 0)
            --depth;
          break;
        case quote: if (c == '\'') state = code; break;
        case ident: if (c == '"') state = code; break;
        case line: if (c == '\n') state = code; break;
        case block:
          if (c == '*' && next == '/') {
            state = code;
            ++i;
          }
          break;
      }
      ++i;
      continue;
    }
    // Multi-byte: decode, reject ill-formed and invisible code points.
    int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
    if (len == 0 || i + static_cast<size_t>(len) > sql.size())
      return {"invalid_utf8", "the statement is not valid UTF-8", i};
    uint32_t cp = b & (0xFF >> (len + 1));
    for (int k = 1; k < len; ++k) {
      auto cb = static_cast<unsigned char>(sql[i + static_cast<size_t>(k)]);
      if ((cb & 0xC0) != 0x80)
        return {"invalid_utf8", "the statement is not valid UTF-8", i};
      cp = (cp << 6) | (cb & 0x3F);
    }
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return {"invalid_utf8", "the statement is not valid UTF-8", i};
    bool invisible = (cp >= 0x200B && cp <= 0x200F)
                     || (cp >= 0x202A && cp <= 0x202E)
                     || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF
                     || cp == 0x00AD || (cp >= 0x80 && cp <= 0x9F);
    if (invisible)
      return {"invisible_character",
              "the statement holds an invisible or bidirectional character", i};
    i += static_cast<size_t>(len);
  }
  return {};
}


} // namespace candor::data
