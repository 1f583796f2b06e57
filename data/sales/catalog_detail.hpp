#pragma once

// The helper shared by the catalog's parsing and lookups
// (data/sales/catalog.cpp), its database side
// (data/sales/catalog_database.cpp) and its draft (data/catalog/draft*.cpp).
// Internal to those files.

#include <string>
#include <string_view>

namespace candor::data::catalog_detail {

/// A lower-case SQL identifier: [a-z_][a-z0-9_]*, at most 64 bytes (what
/// the catalog's names must be).
inline bool is_identifier(std::string_view text) {
  if (text.empty() || text.size() > 64)
    return false;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = text[i];
    bool ok
      = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok)
      return false;
  }
  return true;
}

inline std::string lower(std::string_view text) {
  std::string out{text};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

} // namespace candor::data::catalog_detail
