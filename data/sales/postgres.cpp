// Copying the sales database into PostgreSQL and fingerprinting it there.

#include "data/sales/postgres.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "data/pg/connection.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/dump.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace {

using domain::ec;
using domain::make_error;

const std::string schema{postgres_sales_schema};

/// The declared SQLite type a PostgreSQL column type stands for.
std::string sqlite_type(std::string_view pg_type) {
  if (pg_type == "integer" || pg_type == "bigint" || pg_type == "smallint")
    return "INTEGER";
  if (pg_type == "text")
    return "TEXT";
  if (pg_type == "double precision" || pg_type == "real")
    return "REAL";
  if (pg_type == "bytea")
    return "BLOB";
  std::string out{pg_type};
  for (auto& ch : out)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

struct table_ddl {
  std::string name;
  std::string sql;
};

/// The tables (in creation order, so references resolve) and the indexes
/// of the SQLite file.
domain::outcome<std::pair<std::vector<table_ddl>, std::vector<std::string>>>
ddl_of(database& db) {
  auto stmt = db.prepare("SELECT type, name, sql FROM sqlite_schema WHERE "
                         "sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' "
                         "ESCAPE '\\' ORDER BY rowid");
  if (!stmt)
    return stmt.err();
  std::pair<std::vector<table_ddl>, std::vector<std::string>> out;
  if (auto err = for_each_row(*stmt, [&](statement& row) {
        auto type = row.column_text(0);
        if (type == "table")
          out.first.push_back({row.column_text(1), row.column_text(2)});
        else if (type == "index")
          out.second.push_back(row.column_text(2));
      }))
    return err;
  return out;
}

/// Streams one table of the file into a COPY, in primary-key order.
domain::error copy_table(database& db, pg::connection& c,
                         const std::string& table) {
  auto info = db.prepare("SELECT name, pk FROM pragma_table_info(?) "
                         "ORDER BY cid");
  if (!info)
    return info.err();
  info->bind_text(1, table);
  std::vector<std::string> columns;
  std::vector<std::pair<int64_t, std::string>> pk;
  if (auto err = for_each_row(*info, [&](statement& row) {
        columns.push_back(row.column_text(0));
        if (auto k = row.column_int64(1); k > 0)
          pk.emplace_back(k, columns.back());
      }))
    return err;
  std::sort(pk.begin(), pk.end());
  std::string order_by, column_list;
  for (auto& [k, col] : pk)
    order_by += (order_by.empty() ? "" : ", ") + quote_identifier(col);
  for (auto& col : columns)
    column_list += (column_list.empty() ? "" : ", ") + pg::quote_ident(col);
  auto rows = db.prepare("SELECT * FROM " + quote_identifier(table)
                         + (order_by.empty() ? "" : " ORDER BY " + order_by));
  if (!rows)
    return rows.err();
  auto* raw = rows->handle();
  domain::error read_error;
  bool done = false;
  return c.copy_in(
    "COPY " + pg::quote_ident(schema) + "." + pg::quote_ident(table) + " ("
      + column_list + ") FROM STDIN",
    [&](std::string& chunk) {
      // About 64 KiB per chunk.
      while (!done && chunk.size() < (1u << 16)) {
        int rc = sqlite3_step(raw);
        if (rc != SQLITE_ROW) {
          done = true;
          break;
        }
        for (int i = 0, n = sqlite3_column_count(raw); i < n; ++i) {
          if (i > 0)
            chunk += '\t';
          switch (sqlite3_column_type(raw, i)) {
            case SQLITE_NULL: chunk += "\\N"; break;
            case SQLITE_INTEGER:
              chunk += std::to_string(sqlite3_column_int64(raw, i));
              break;
            case SQLITE_FLOAT: {
              char num[40];
              std::snprintf(num, sizeof num, "%.17g",
                            sqlite3_column_double(raw, i));
              chunk += num;
              break;
            }
            default:
              pg::append_copy_field(
                chunk,
                {reinterpret_cast<const char*>(sqlite3_column_text(raw, i)),
                 static_cast<size_t>(sqlite3_column_bytes(raw, i))});
          }
        }
        chunk += '\n';
      }
      return !done;
    });
}

domain::outcome<bool> schema_exists(pg::connection& c) {
  auto r = c.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", {schema});
  if (!r)
    return r.err();
  return !r->values.empty();
}

} // namespace

domain::outcome<sales_summary>
copy_sales_to_postgres(const std::string& sqlite_path, const std::string& dsn,
                       const sales_progress& progress, bool overwrite) {
  auto report = [&](std::string_view stage, double f) {
    if (progress)
      progress(stage, f);
  };
  auto db = database::open(sqlite_path, SQLITE_OPEN_READONLY);
  if (!db)
    return db.err();
  auto ddl = ddl_of(*db);
  if (!ddl)
    return ddl.err();
  auto want = sales_fingerprint(*db);
  if (!want)
    return want.err();
  auto c = pg::connection::open(dsn);
  if (!c)
    return c.err();
  auto exists = schema_exists(*c);
  if (!exists)
    return exists.err();
  if (*exists && !overwrite)
    return make_error(ec::invalid_request,
                      "the PostgreSQL database already has a '" + schema
                        + "' schema (use --force to replace it)");
  report("schema", 0.0);
  if (auto err = c->exec("BEGIN"))
    return err;
  auto fail = [&](domain::error e) {
    (void) c->exec("ROLLBACK");
    return e;
  };
  if (auto err = c->exec("DROP SCHEMA IF EXISTS " + pg::quote_ident(schema)
                         + " CASCADE; CREATE SCHEMA "
                         + pg::quote_ident(schema) + "; SET LOCAL search_path = "
                         + pg::quote_ident(schema)))
    return fail(err);
  for (const auto& t : ddl->first)
    if (auto err = c->exec(t.sql))
      return fail(err);
  size_t done = 0;
  for (const auto& t : ddl->first) {
    report(t.name, 0.05 + 0.8 * static_cast<double>(done++)
                            / static_cast<double>(ddl->first.size()));
    if (auto err = copy_table(*db, *c, t.name))
      return fail(err);
  }
  report("indexes", 0.86);
  for (const auto& sql : ddl->second)
    if (auto err = c->exec(sql))
      return fail(err);
  if (auto err = c->exec("COMMIT"))
    return fail(err);
  report("analyze", 0.9);
  if (auto err = c->exec("ANALYZE " + pg::quote_ident(schema) + ".orders"))
    return err;
  (void) c->exec("ANALYZE");
  report("fingerprint", 0.95);
  auto summary = summarize_postgres_sales(dsn);
  if (!summary)
    return summary.err();
  if (summary->fingerprint != *want) {
    (void) c->exec("DROP SCHEMA IF EXISTS " + pg::quote_ident(schema)
                   + " CASCADE");
    return make_error(ec::storage_failed,
                      "the copy in PostgreSQL has fingerprint "
                        + summary->fingerprint + ", the file " + *want
                        + "; the schema was dropped");
  }
  report("done", 1.0);
  return summary;
}

domain::outcome<std::string> postgres_sales_fingerprint(pg::connection& c) {
  auto tables = c.query("SELECT c.relname FROM pg_class c JOIN pg_namespace n "
                        "ON n.oid = c.relnamespace WHERE n.nspname = $1 AND "
                        "c.relkind = 'r' ORDER BY c.relname COLLATE \"C\"",
                        {schema});
  if (!tables)
    return tables.err();
  dump::sha256 hash;
  hash.add(dump::header);
  for (const auto& trow : tables->values) {
    const auto& table = *trow[0];
    auto qualified = pg::quote_ident(schema) + "." + pg::quote_ident(table);
    auto cols = c.query(
      "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
      "COALESCE(array_position(i.indkey::int2[], a.attnum), 0) "
      "FROM pg_attribute a LEFT JOIN pg_index i ON i.indrelid = a.attrelid "
      "AND i.indisprimary WHERE a.attrelid = $1::regclass AND a.attnum > 0 "
      "AND NOT a.attisdropped ORDER BY a.attnum",
      {qualified});
    if (!cols)
      return cols.err();
    hash.add(dump::table_line(table));
    std::vector<std::pair<long, std::string>> pk;
    std::vector<std::string> types;
    std::string select;
    for (const auto& col : cols->values) {
      auto type = sqlite_type(*col[1]);
      hash.add(dump::column_line(*col[0], type));
      types.push_back(type);
      long k = std::strtol(col[2]->c_str(), nullptr, 10);
      if (k > 0)
        pk.emplace_back(k, *col[0]);
      select += (select.empty() ? "" : ", ") + pg::quote_ident(*col[0]);
    }
    std::sort(pk.begin(), pk.end());
    // Text keys in byte order, as SQLite's BINARY collation.
    std::string order_sql;
    for (auto& [k, col] : pk) {
      size_t at = 0;
      for (size_t i = 0; i < cols->values.size(); ++i)
        if (*cols->values[i][0] == col)
          at = i;
      order_sql += (order_sql.empty() ? "" : ", ") + pg::quote_ident(col)
                   + (types[at] == "TEXT" ? " COLLATE \"C\"" : "");
    }
    auto rows = c.query("SELECT " + select + " FROM " + qualified
                        + (order_sql.empty() ? "" : " ORDER BY " + order_sql));
    if (!rows)
      return rows.err();
    std::string record;
    for (const auto& row : rows->values) {
      record.clear();
      for (size_t i = 0; i < row.size(); ++i) {
        if (!row[i]) {
          dump::append_null(record);
        } else if (types[i] == "INTEGER") {
          dump::append_integer(record, std::strtoll(row[i]->c_str(), nullptr,
                                                    10));
        } else if (types[i] == "REAL") {
          // PostgreSQL prints a double in its shortest exact form.
          dump::append_real(record, std::strtod(row[i]->c_str(), nullptr));
        } else {
          dump::append_text(record, *row[i]);
        }
      }
      record += '\n';
      hash.add(record);
    }
  }
  auto digest = hash.finish();
  if (digest.empty())
    return make_error(ec::storage_failed, "SHA-256 failed (OpenSSL)");
  return digest;
}

domain::outcome<sales_summary> summarize_postgres_sales(const std::string& dsn) {
  auto c = pg::connection::open(dsn);
  if (!c)
    return c.err();
  auto tables = c->query("SELECT c.relname FROM pg_class c JOIN pg_namespace "
                         "n ON n.oid = c.relnamespace WHERE n.nspname = $1 "
                         "AND c.relkind = 'r' ORDER BY c.relname COLLATE "
                         "\"C\"",
                         {schema});
  if (!tables)
    return tables.err();
  sales_summary out;
  if (tables->values.empty())
    return out;
  for (const auto& row : tables->values) {
    auto n = c->query("SELECT COUNT(*) FROM " + pg::quote_ident(schema) + "."
                      + pg::quote_ident(*row[0]));
    if (!n)
      return n.err();
    int64_t rows = std::strtoll(n->values[0][0]->c_str(), nullptr, 10);
    out.tables.push_back({*row[0], rows});
    out.total_rows += rows;
  }
  if (out.rows("orders") > 0) {
    auto range = c->query("SELECT MIN(order_date), MAX(order_date) FROM "
                          + pg::quote_ident(schema) + ".orders");
    if (!range)
      return range.err();
    out.first_order_date = range->values[0][0].value_or("");
    out.last_order_date = range->values[0][1].value_or("");
  }
  auto fp = postgres_sales_fingerprint(*c);
  if (!fp)
    return fp.err();
  out.fingerprint = std::move(*fp);
  return out;
}

namespace {

bool valid_role(std::string_view role) {
  if (role.empty() || role.size() > 63)
    return false;
  for (size_t i = 0; i < role.size(); ++i) {
    char c = role[i];
    bool ok = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0'
                                                     && c <= '9');
    if (!ok)
      return false;
  }
  return true;
}

/// The functions whose EXECUTE is taken from PUBLIC in the warehouse.
constexpr std::string_view risky_functions_sql
  = "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON "
    "n.oid = p.pronamespace WHERE n.nspname = 'pg_catalog' AND (p.proname "
    "IN ('pg_sleep', 'pg_sleep_for', 'pg_sleep_until', 'set_config', "
    "'pg_read_file', 'pg_read_binary_file', 'pg_ls_dir', "
    "'pg_terminate_backend', 'pg_cancel_backend', 'pg_reload_conf', "
    "'pg_stat_file') OR p.proname LIKE 'lo\\_%')";

} // namespace

domain::error provision_postgres_reader(const std::string& admin_dsn,
                                        const catalog& cat,
                                        const std::string& role,
                                        const reader_limits& limits) {
  if (!valid_role(role))
    return make_error(ec::invalid_request,
                      "warehouse role '" + role
                        + "' must match [a-z_][a-z0-9_]{0,62}");
  auto c = pg::connection::open(admin_dsn);
  if (!c)
    return c.err();
  auto q = pg::quote_ident(role);
  auto sq = pg::quote_ident(schema);
  auto exists = c->query("SELECT 1 FROM pg_roles WHERE rolname = $1", {role});
  if (!exists)
    return exists.err();
  auto db = c->query("SELECT current_database()");
  if (!db)
    return db.err();
  auto qdb = pg::quote_ident(*db->values[0][0]);
  std::string sql = "BEGIN;";
  sql += exists->values.empty()
           ? "CREATE ROLE " + q
               + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                 "NOREPLICATION NOBYPASSRLS;"
           : "ALTER ROLE " + q
               + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                 "NOREPLICATION NOBYPASSRLS;";
  sql += "REVOKE ALL ON ALL TABLES IN SCHEMA " + sq + " FROM " + q + ";";
  sql += "REVOKE ALL ON SCHEMA " + sq + " FROM " + q + ";";
  sql += "REVOKE ALL ON ALL TABLES IN SCHEMA " + sq + " FROM PUBLIC;";
  sql += "REVOKE CREATE ON SCHEMA public FROM PUBLIC;";
  sql += "GRANT CONNECT ON DATABASE " + qdb + " TO " + q + ";";
  sql += "GRANT USAGE ON SCHEMA " + sq + " TO " + q + ";";
  for (const auto& t : cat.tables()) {
    std::string cols;
    for (const auto& col : t.columns)
      cols += (cols.empty() ? "" : ", ") + pg::quote_ident(col.name);
    if (cols.empty())
      continue;
    sql += "GRANT SELECT (" + cols + ") ON " + sq + "."
           + pg::quote_ident(t.name) + " TO " + q + ";";
  }
  auto set = [&](std::string_view name, const std::string& value) {
    sql += "ALTER ROLE " + q + " IN DATABASE " + qdb + " SET "
           + std::string{name} + " = " + value + ";";
  };
  set("default_transaction_read_only", "on");
  set("statement_timeout", std::to_string(limits.statement_timeout_ms));
  set("idle_in_transaction_session_timeout",
      std::to_string(limits.idle_in_transaction_ms));
  set("work_mem", "'" + std::to_string(limits.work_mem_kb) + "kB'");
  set("temp_file_limit", "'" + std::to_string(limits.temp_file_limit_kb)
                           + "kB'");
  set("search_path", sq);
  auto risky = c->query(risky_functions_sql);
  if (!risky)
    return risky.err();
  for (const auto& f : risky->values)
    sql += "REVOKE EXECUTE ON FUNCTION " + *f[0] + " FROM PUBLIC;";
  sql += "COMMIT;";
  if (auto err = c->exec(sql)) {
    (void) c->exec("ROLLBACK");
    return err;
  }
  return {};
}

} // namespace candor::data
