#pragma once

// Reading a SQLite database's schema: its tables and views, their columns
// and foreign keys. Shared by the catalog's check against a database, the
// catalog draft and `candor catalog check`.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

namespace candor::data {

class database;

/// One column as `pragma_table_info` gives it.
struct db_column {
  std::string name;
  std::string type; ///< the declared type, as written
  bool not_null = false;
  int64_t pk = 0; ///< position in the primary key, 0 when not in it
};

/// A table or a view.
struct db_object {
  std::string name;
  std::string type; ///< "table" or "view"
};

/// One foreign key column.
struct db_reference {
  std::string from;
  std::string table;
  std::string to; ///< empty: the target's primary key
};

/// The tables and views, SQLite's own left out, by name.
domain::outcome<std::vector<db_object>> schema_objects(database& db);

/// The columns of `table`, in declaration order.
domain::outcome<std::vector<db_column>> table_columns(database& db,
                                                      std::string_view table);

/// The foreign keys of `table`.
domain::outcome<std::vector<db_reference>>
table_references(database& db, std::string_view table);

} // namespace candor::data
