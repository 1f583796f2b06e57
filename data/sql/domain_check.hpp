#pragma once

// Declares the catalog's value-domain check, the last check of
// sql_validate.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/sales/catalog.hpp"

/// The catalog's value-domain check on model-written SQL: the last check
/// of sql_validate, after the static policy and the validation connection
/// let a statement through. A filter that compares a categorical column
/// with a literal it never holds (`channel = 'tiktok'`) returns zero rows
/// that look like an answer ("no sales on TikTok"), so it is refused with
/// the values the column does hold instead.
namespace candor::data {

/// One filter that cannot match.
struct domain_violation {
  std::string table; ///< catalog table of the column ("" when unknown)
  std::string column;
  std::string literal; ///< the compared value, unquoted
  /// The declared values; empty for a column the catalog does not declare.
  std::vector<std::string> allowed;
  /// What is wrong and what to do next, for the user.
  std::string message;
};

/// Looks for filters `col = 'x'`, `col == 'x'`, `col != 'x'`, `col <> 'x'`,
/// `'x' = col`, `col IN ('x', ...)` and `col NOT IN (...)` whose column
/// resolves (through the table names and aliases of FROM and JOIN) to a
/// catalog column with a declared domain that does not contain the literal
/// (exact, case-sensitive comparison, as SQLite's `=` on text), or to a
/// table of the catalog that does not declare that column. Columns that do
/// not resolve (CTE and subquery columns, result aliases) are not judged.
/// Returns the first violation, or nothing.
std::optional<domain_violation> check_value_domains(std::string_view sql,
                                                    const catalog& cat);

} // namespace candor::data
