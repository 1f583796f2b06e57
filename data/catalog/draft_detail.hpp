#pragma once

// What the catalog draft read from the database, shared by its catalog part
// (draft.cpp) and its semantic-layer part
// (draft_semantic.cpp). Internal to those files.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "data/catalog/draft.hpp"
#include "data/catalog/personal_data.hpp"

namespace candor::data {
class database;
}

namespace candor::data::draft_detail {

struct draft_column {
  std::string name;
  std::string type;
  bool pk = false;
  int64_t non_null = 0;
  int64_t distinct = 0;
  column_sample sample;
  std::optional<personal_verdict> personal;
  /// The complete list of values of a low-cardinality text column.
  std::vector<std::string> values;
  bool is_key = false;
  bool is_date = false;
  bool is_numeric = false;
  bool is_flag = false; ///< numeric, only 0 and 1
  bool is_text = false;
  /// Why the column cannot be described, or empty.
  std::string skip;
};

struct draft_ref {
  std::string from;
  std::string table;
  std::string to; ///< empty: the target's primary key
};

struct draft_table {
  std::string name;
  bool view = false;
  int64_t rows = 0;
  std::vector<draft_column> columns;
  std::vector<draft_ref> refs;
  bool denied = false; ///< set while the catalog part is written
};

/// A number worth summing in a draft metric: not a key, a 0/1 flag, a
/// position or a calendar part, and not personal.
bool is_measure(const draft_column& c);

/// The `semantic` object for the planner, or an empty object (with a note
/// saying why) when no allowed table has a date column.
boost::json::object draft_semantic(database& db,
                                   const std::vector<draft_table>& tables,
                                   std::vector<std::string>& notes);

/// The document as text: nested objects and arrays of objects indented,
/// an object whose values are all scalars or arrays of scalars on one
/// line, so each column, metric or join is one line to edit.
std::string catalog_json_text(const boost::json::object& doc);

} // namespace candor::data::draft_detail
