#pragma once

// Declares the golden set: questions with the outcome a correct answer has.

#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"
#include "domain/types.hpp"

/// The golden set: `eval/golden.v1.json`, questions with
/// the route, status, blocking layer, chunks and reference SQL a correct
/// answer has. `candor eval` runs them through the service.
namespace candor::eval {

/// The categories a golden item may have, in report order.
const std::vector<std::string>& golden_categories();

/// One golden question.
struct golden_item {
  std::string id;
  std::string split; ///< "test" or "calibration"
  std::string category;
  std::string question;
  domain::route_kind expected_route = domain::route_kind::none;
  domain::status_kind expected_status = domain::status_kind::answered;
  /// `none` when nothing should block.
  domain::layer_kind blocking_layer = domain::layer_kind::none;
  /// Chunks holding the answer; a retrieved chunk matches when it falls in
  /// the same "<doc>#<section>" (eval::section_of).
  std::vector<std::string> chunk_ids;
  /// Empty when the item has no reference SQL.
  std::string reference_sql;
  bool order_matters = false;
};

struct golden_set {
  std::string name;
  std::vector<golden_item> items;
};

/// Parses a golden set. Every item needs every field with a known value;
/// ids are unique; an error names the first offending item and field.
domain::outcome<golden_set> parse_golden_set(std::string_view json);

/// Reads and parses a golden set file.
domain::outcome<golden_set> load_golden_set(const std::string& path);

/// `<source>/eval/golden.v1.json`.
std::string default_golden_path();

/// True for "test", "calibration" and "all".
bool valid_split(std::string_view split) noexcept;

/// The items of `split` ("test", "calibration" or "all"), in file order.
std::vector<const golden_item*> select_split(const golden_set& set,
                                             std::string_view split);

} // namespace candor::eval
