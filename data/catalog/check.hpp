#pragma once

// `candor catalog check`: a catalog document against a SQLite database,
// every problem with the line of the catalog it is about.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

/// What is checked, in order (a later step needs the earlier ones to pass):
///  1. the JSON (its syntax error at its line) and the catalog's fields
///     (catalog::parse);
///  2. the catalog against the database (catalog::check_against): tables and
///     columns the database lacks, tables and columns it has that the
///     catalog neither allows nor denies, values outside a declared domain;
///  3. every metric's SQL compiles on the database, is one read-only
///     statement and reads only allowed columns: a restricted (denied)
///     column in a metric is an error; an unreviewed draft metric a warning;
///  4. the semantic layer (when there is one): it parses, each grain and
///     join compiles, each join holds (its target key is unique, so it
///     cannot multiply rows; rows without a match are a warning, as an
///     inner join drops them), each metric and dimension expression
///     compiles at a grain and reads only allowed columns.
namespace candor::data {

class database;

struct catalog_finding {
  size_t line = 1;  ///< 1-based line in the catalog text
  std::string path; ///< e.g. `tables[2].columns[0].name`, `metrics[1].sql`
  std::string message;
  bool error = true; ///< false: a warning
};

/// Checks `text` against `db` (read only). Empty when all is well.
std::vector<catalog_finding> check_catalog(std::string_view text, database& db);

/// `file:line: error: path: message`.
std::string format_finding(const std::string& file, const catalog_finding& f);

/// The line on which `path` (as the findings name it) starts in `text`, or
/// that of its nearest enclosing field; 1 when none is found.
size_t line_of(std::string_view text, const std::string& path);

} // namespace candor::data
