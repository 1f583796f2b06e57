#pragma once

// Small helpers shared by the authorizer (data/sql/authorizer.cpp) and the
// guard (data/sql/guard.cpp). Internal to those files.

#include <string>
#include <string_view>
#include <vector>

#include "data/sqlite.hpp"
#include "domain/error.hpp"

namespace candor::data::sql_guard_detail {

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline std::string str(const char* s) {
  return s != nullptr ? std::string{s} : std::string{};
}

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// Reads one text column of every row of a setup query.
inline domain::outcome<std::vector<std::string>>
strings(database& db, std::string_view query, std::string_view param = {}) {
  auto st = db.prepare(query);
  if (!st)
    return st.err();
  if (!param.empty())
    if (auto err = st->bind_text(1, param))
      return err;
  std::vector<std::string> out;
  while (true) {
    auto r = st->step();
    if (!r)
      return r.err();
    if (*r == step_result::done)
      return out;
    out.push_back(st->column_text(0));
  }
}

} // namespace candor::data::sql_guard_detail
