#pragma once

// The helper shared by the catalog's parsing and lookups
// (data/sales/catalog.cpp), its database side
// (data/sales/catalog_database.cpp) and its draft (data/catalog/draft*.cpp).
// Internal to those files.

#include <string>
#include <string_view>

namespace candor::data::catalog_detail {

inline std::string lower(std::string_view text) {
  std::string out{text};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

} // namespace candor::data::catalog_detail
