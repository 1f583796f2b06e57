// Startup on the PostgreSQL warehouse: checks what the reading role can
// see against the catalog, counts rows, and builds the model's schema text.

#include "data/sales/postgres.hpp"

#include <map>
#include <set>

#include "data/pg/connection.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace {

using domain::ec;

domain::error mismatch(std::string what) {
  return domain::make_error(
    ec::config_invalid,
    "the PostgreSQL warehouse does not match the catalog: " + std::move(what)
      + " (load it with `candor seed --backend postgres`, which also "
        "provisions the reading role)");
}

} // namespace

domain::outcome<sales_setup>
prepare_postgres_sales(const std::string& dsn,
                       std::shared_ptr<const catalog> cat) {
  if (!cat)
    return domain::make_error(ec::internal, "no catalog given");
  auto conn = pg::connection::open(dsn);
  if (!conn)
    return conn.err();
  // What this role may read: information_schema lists only the columns it
  // holds a privilege on.
  auto visible = conn->query(
    "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = 'sales' ORDER BY 1, 2");
  if (!visible)
    return visible.err();
  std::map<std::string, std::set<std::string>> seen;
  for (auto& row : visible->values)
    if (row.size() == 2 && row[0] && row[1])
      seen[*row[0]].insert(*row[1]);
  auto allowed = cat->allowed_columns();
  for (auto& [table, cols] : allowed)
    for (auto& col : cols)
      if (seen[table].count(col) == 0)
        return mismatch("sales." + table + "." + col
                        + " is missing or not readable");
  // Anything more is more than the role should hold: personal columns, a
  // denied table. Refusing to start keeps the grants the second layer.
  for (auto& [table, cols] : seen)
    for (auto& col : cols)
      if (allowed[table].count(col) == 0)
        return mismatch("the connection's role can read sales." + table + "."
                        + col
                        + ", which the catalog does not allow; connect as the "
                          "reading role, not as an administrator");
  sales_setup out;
  out.backend = "postgres";
  out.cat = cat;
  for (auto& [table, cols] : allowed) {
    auto n = conn->query("SELECT count(" + pg::quote_ident(*cols.begin())
                         + ") FROM sales." + pg::quote_ident(table));
    if (!n)
      return n.err();
    int64_t rows = 0;
    if (!n->values.empty() && n->values[0].size() == 1 && n->values[0][0])
      rows = std::stoll(*n->values[0][0]);
    out.rows.push_back({table, rows});
  }
  // The schema text: the same DDL the warehouse was created from, read by
  // the same code as on SQLite (an empty in-memory copy), then the dialect.
  auto mem = database::open(":memory:", SQLITE_OPEN_READWRITE);
  if (!mem)
    return mem.err();
  if (auto err = mem->exec(sales_schema_sql()))
    return err;
  auto schema = cat->schema_prompt(*mem);
  if (!schema)
    return schema.err();
  out.schema_text
    = "-- The database is PostgreSQL " + std::to_string(conn->server_major())
      + ", schema sales (on the search path). Write PostgreSQL SQL: dates "
        "are ISO text, so use substr(order_date, 1, 7) for a month or "
        "to_char(CAST(order_date AS DATE), 'IYYY-IW') for a week, never "
        "strftime; give every subquery in FROM an alias; cast a boolean "
        "to INTEGER before AVG or SUM.\n"
      + *schema;
  return out;
}

} // namespace candor::data
