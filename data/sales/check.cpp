// Checking, summarising and fingerprinting a sales database (built by
// sales_gen.cpp, or an existing file): integrity checks, row counts and a
// SHA-256 over a canonical dump.

#include "data/sales/gen.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <openssl/evp.h>

#include "data/sales/dump.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace {

using domain::ec;
using domain::make_error;

/// Runs a query that must return 0 (a count of violations).
domain::error expect_zero(database& db, std::string_view what,
                          std::string_view sql) {
  auto n = db.query_int64(sql);
  if (!n)
    return n.err();
  if (*n != 0)
    return storage_error("sales check failed: " + std::string{what} + " ("
                         + std::to_string(*n) + " violations)");
  return {};
}

} // namespace

domain::outcome<std::vector<std::string>> user_tables(database& db) {
  auto stmt = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' "
                         "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                         "ORDER BY name");
  if (!stmt)
    return stmt.err();
  std::vector<std::string> names;
  if (auto err = for_each_row(
        *stmt, [&](statement& row) { names.push_back(row.column_text(0)); }))
    return err;
  return names;
}

domain::error check_sales(database& db) {
  auto quick = db.query_text("PRAGMA quick_check");
  if (!quick)
    return quick.err();
  if (*quick != "ok")
    return storage_error("sales quick_check failed: " + *quick);
  auto fk = db.prepare("PRAGMA foreign_key_check");
  if (!fk)
    return fk.err();
  auto res = fk->step();
  if (!res)
    return res.err();
  if (*res == step_result::row)
    return storage_error("sales foreign key violation in table "
                         + fk->column_text(0));
  if (auto err = expect_zero(
        db, "order totals equal the sum of their line items",
        "SELECT COUNT(*) FROM orders o WHERE o.total_cents <> "
        "(SELECT COALESCE(SUM(i.line_total_cents), 0) FROM order_items i "
        "WHERE i.order_id = o.order_id)"))
    return err;
  if (auto err
      = expect_zero(db, "refunds stay within the order total",
                    "SELECT COUNT(*) FROM orders o WHERE o.total_cents < "
                    "(SELECT COALESCE(SUM(r.amount_cents), 0) FROM refunds r "
                    "WHERE r.order_id = o.order_id)"))
    return err;
  return expect_zero(
    db, "a refund belongs to an item of its own order",
    "SELECT COUNT(*) FROM refunds r JOIN order_items i "
    "ON i.order_item_id = r.order_item_id WHERE i.order_id <> r.order_id");
}

namespace {

domain::outcome<std::string> fingerprint_of(database& db) {
  auto tables = user_tables(db);
  if (!tables)
    return tables.err();
  dump::sha256 hash;
  hash.add(dump::header);
  for (auto& table : *tables) {
    // Columns and primary key, from the table's own declaration.
    auto info = db.prepare("SELECT name, type, pk FROM pragma_table_info(?) "
                           "ORDER BY cid");
    if (!info)
      return info.err();
    info->bind_text(1, table);
    std::vector<std::pair<int64_t, std::string>> pk;
    hash.add(dump::table_line(table));
    if (auto err = for_each_row(*info, [&](statement& row) {
          auto col = row.column_text(0);
          hash.add(dump::column_line(col, row.column_text(1)));
          if (auto k = row.column_int64(2); k > 0)
            pk.emplace_back(k, col);
        }))
      return err;
    std::sort(pk.begin(), pk.end());
    std::string order_by;
    for (auto& [k, col] : pk)
      order_by += (order_by.empty() ? "" : ", ") + quote_identifier(col);
    if (order_by.empty())
      order_by = "rowid";
    auto rows = db.prepare("SELECT * FROM " + quote_identifier(table)
                           + " ORDER BY " + order_by);
    if (!rows)
      return rows.err();
    auto* raw = rows->handle();
    std::string record;
    if (auto err = for_each_row(*rows, [&](statement&) {
          record.clear();
          for (int i = 0, n = sqlite3_column_count(raw); i < n; ++i) {
            switch (sqlite3_column_type(raw, i)) {
              case SQLITE_INTEGER:
                dump::append_integer(record, sqlite3_column_int64(raw, i));
                break;
              case SQLITE_FLOAT:
                dump::append_real(record, sqlite3_column_double(raw, i));
                break;
              case SQLITE_TEXT:
                dump::append_text(
                  record,
                  {reinterpret_cast<const char*>(sqlite3_column_text(raw, i)),
                   static_cast<size_t>(sqlite3_column_bytes(raw, i))});
                break;
              case SQLITE_BLOB:
                dump::append_blob(
                  record,
                  {static_cast<const char*>(sqlite3_column_blob(raw, i)),
                   static_cast<size_t>(sqlite3_column_bytes(raw, i))});
                break;
              default: dump::append_null(record); break;
            }
          }
          record += '\n';
          hash.add(record);
        }))
      return err;
  }
  auto digest = hash.finish();
  if (digest.empty())
    return storage_error("SHA-256 failed (OpenSSL)");
  return digest;
}

} // namespace

domain::outcome<sales_summary> summarize_sales(database& db) {
  sales_summary out;
  auto tables = user_tables(db);
  if (!tables)
    return tables.err();
  for (auto& table : *tables) {
    auto n = db.query_int64("SELECT COUNT(*) FROM " + quote_identifier(table));
    if (!n)
      return n.err();
    out.tables.push_back({table, *n});
    out.total_rows += *n;
  }
  if (out.rows("orders") > 0) {
    auto lo = db.query_text("SELECT MIN(order_date) FROM orders");
    auto hi = db.query_text("SELECT MAX(order_date) FROM orders");
    if (!lo)
      return lo.err();
    if (!hi)
      return hi.err();
    out.first_order_date = *lo;
    out.last_order_date = *hi;
  }
  auto fp = fingerprint_of(db);
  if (!fp)
    return fp.err();
  out.fingerprint = std::move(*fp);
  return out;
}

namespace {

domain::outcome<database> open_read_only(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return make_error(ec::storage_failed, "no sales database at " + path);
  return database::open(path, SQLITE_OPEN_READONLY);
}

} // namespace

int64_t sales_summary::rows(std::string_view table) const noexcept {
  for (auto& t : tables)
    if (t.table == table)
      return t.rows;
  return -1;
}

domain::outcome<std::string> sales_fingerprint(const std::string& path) {
  auto db = open_read_only(path);
  if (!db)
    return db.err();
  return fingerprint_of(*db);
}

domain::outcome<std::string> sales_fingerprint(database& db) {
  return fingerprint_of(db);
}

domain::outcome<sales_summary> summarize_sales(const std::string& path) {
  auto db = open_read_only(path);
  if (!db)
    return db.err();
  return summarize_sales(*db);
}

// -- the canonical dump ------------------------------------------------------

namespace dump {

sha256::sha256() : ctx_(EVP_MD_CTX_new()) {
  ok_ = ctx_ != nullptr
        && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1;
}

sha256::~sha256() {
  EVP_MD_CTX_free(ctx_);
}

void sha256::add(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() >= (1u << 16))
    flush();
}

std::string sha256::finish() {
  flush();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!ok_ || EVP_DigestFinal_ex(ctx_, digest, &size) != 1)
    return {};
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < size; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

void sha256::flush() {
  if (ok_ && !buffer_.empty())
    ok_ = EVP_DigestUpdate(ctx_, buffer_.data(), buffer_.size()) == 1;
  buffer_.clear();
}

std::string table_line(std::string_view table) {
  return "T" + std::to_string(table.size()) + ":" + std::string{table} + "\n";
}

std::string column_line(std::string_view column, std::string_view type) {
  return "C" + std::to_string(column.size()) + ":" + std::string{column} + " "
         + std::to_string(type.size()) + ":" + std::string{type} + "\n";
}

void append_integer(std::string& record, int64_t v) {
  char num[32];
  std::snprintf(num, sizeof num, "i%lld;", static_cast<long long>(v));
  record += num;
}

void append_real(std::string& record, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  char num[32];
  std::snprintf(num, sizeof num, "r%016llx;",
                static_cast<unsigned long long>(bits));
  record += num;
}

void append_text(std::string& record, std::string_view text) {
  record += 't';
  record += std::to_string(text.size());
  record += ':';
  record.append(text);
}

void append_blob(std::string& record, std::string_view bytes) {
  record += 'b';
  record += std::to_string(bytes.size());
  record += ':';
  record.append(bytes);
}

void append_null(std::string& record) {
  record += "n;";
}

} // namespace dump

} // namespace candor::data
