// Reading a SQLite database's schema (see schema.hpp).

#include "data/sales/schema.hpp"

#include "data/sqlite.hpp"

namespace candor::data {

domain::outcome<std::vector<db_object>> schema_objects(database& db) {
  auto stmt = db.prepare("SELECT name, type FROM sqlite_schema "
                         "WHERE type IN ('table', 'view') "
                         "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                         "ORDER BY name");
  if (!stmt)
    return stmt.err();
  std::vector<db_object> out;
  if (auto err = for_each_row(*stmt, [&out](statement& row) {
        out.push_back({row.column_text(0), row.column_text(1)});
      }))
    return err;
  return out;
}

domain::outcome<std::vector<db_column>> table_columns(database& db,
                                                      std::string_view table) {
  auto stmt = db.prepare("SELECT name, type, \"notnull\", pk "
                         "FROM pragma_table_info(?) ORDER BY cid");
  if (!stmt)
    return stmt.err();
  if (auto err = stmt->bind_text(1, table))
    return err;
  std::vector<db_column> out;
  if (auto err = for_each_row(*stmt, [&out](statement& row) {
        out.push_back({row.column_text(0), row.column_text(1),
                       row.column_int64(2) != 0, row.column_int64(3)});
      }))
    return err;
  return out;
}

domain::outcome<std::vector<db_reference>>
table_references(database& db, std::string_view table) {
  auto stmt = db.prepare("SELECT \"from\", \"table\", \"to\" "
                         "FROM pragma_foreign_key_list(?) ORDER BY id, seq");
  if (!stmt)
    return stmt.err();
  if (auto err = stmt->bind_text(1, table))
    return err;
  std::vector<db_reference> out;
  if (auto err = for_each_row(*stmt, [&out](statement& row) {
        out.push_back(
          {row.column_text(0), row.column_text(1), row.column_text(2)});
      }))
    return err;
  return out;
}

} // namespace candor::data
