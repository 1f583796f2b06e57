#pragma once

// The text checks the PostgreSQL statement policy runs before parsing.

#include <string>
#include <string_view>

namespace candor::data {

struct problem {
  std::string rule, message;
  size_t offset = 0;
};

/// What is wrong with the text itself, before parsing: ill-formed UTF-8,
/// control characters (other than tab, newline, carriage return),
/// invisible and bidirectional characters anywhere (a literal included),
/// parentheses nested deeper than `max_depth` outside literals and
/// comments. The same rules, with the same names, as the SQLite policy.
/// An empty `rule` when there is nothing wrong.
problem text_problem(std::string_view sql, int max_depth);

} // namespace candor::data
