// The SQLite wrapper: connections, prepared statements, rows and errors as
// values (the allocation budget and transactions have their own files).

#include "data/sqlite.hpp"

#include <limits>
#include <utility>

namespace candor::data {

namespace {

/// True when `text` holds only whitespace and semicolons.
bool blank(std::string_view text) noexcept {
  for (auto c : text)
    if (c != ';' && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f'
        && c != '\v')
      return false;
  return true;
}

/// SQLite takes lengths as int; refuse what does not fit.
constexpr size_t max_length = std::numeric_limits<int>::max();

} // namespace

domain::error storage_error(sqlite3* db) {
  return domain::make_error(domain::ec::storage_failed, db != nullptr
                                                          ? sqlite3_errmsg(db)
                                                          : "out of memory");
}

domain::error storage_error(std::string message) {
  return domain::make_error(domain::ec::storage_failed, std::move(message));
}

// -- database -----------------------------------------------------------------

void database::closer::operator()(sqlite3* db) const noexcept {
  // v2 defers the close until every statement is finalized.
  sqlite3_close_v2(db);
}

domain::outcome<database> database::open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  auto rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  database result;
  result.db_.reset(raw);
  if (rc != SQLITE_OK) {
    auto msg = raw != nullptr ? std::string{sqlite3_errmsg(raw)}
                              : std::string{sqlite3_errstr(rc)};
    return storage_error(path + ": " + msg);
  }
  sqlite3_extended_result_codes(raw, 1);
  return result;
}

domain::error database::last_error() const {
  return storage_error(db_.get());
}

int database::last_error_code() const noexcept {
  return db_ ? sqlite3_extended_errcode(db_.get()) : SQLITE_MISUSE;
}

int64_t database::changes() const noexcept {
  return db_ ? sqlite3_changes64(db_.get()) : 0;
}

int64_t database::last_insert_rowid() const noexcept {
  return db_ ? sqlite3_last_insert_rowid(db_.get()) : 0;
}

bool database::in_transaction() const noexcept {
  return db_ && sqlite3_get_autocommit(db_.get()) == 0;
}

domain::error database::exec(const std::string& sql) {
  if (!db_)
    return storage_error("database is not open");
  char* msg = nullptr;
  auto rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &msg);
  if (rc == SQLITE_OK)
    return {};
  auto err = storage_error(msg != nullptr ? std::string{msg}
                                          : std::string{sqlite3_errstr(rc)});
  sqlite3_free(msg);
  return err;
}

domain::outcome<statement> database::prepare(std::string_view sql) {
  if (!db_)
    return storage_error("database is not open");
  if (sql.size() > max_length)
    return storage_error("statement too long");
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  auto rc = sqlite3_prepare_v2(db_.get(), sql.data(),
                               static_cast<int>(sql.size()), &raw, &tail);
  if (rc != SQLITE_OK)
    return last_error();
  statement result{raw};
  if (raw == nullptr)
    return storage_error("empty statement");
  // Anything after the first statement must compile to nothing.
  auto rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  if (!blank(rest)) {
    sqlite3_stmt* extra = nullptr;
    rc = sqlite3_prepare_v2(db_.get(), rest.data(),
                            static_cast<int>(rest.size()), &extra, nullptr);
    sqlite3_finalize(extra);
    if (rc != SQLITE_OK)
      return last_error();
    if (extra != nullptr)
      return storage_error("more than one statement");
  }
  return result;
}

domain::error database::busy_timeout(std::chrono::milliseconds timeout) {
  if (!db_)
    return storage_error("database is not open");
  auto ms = timeout.count();
  if (ms < 0 || ms > std::numeric_limits<int>::max())
    return storage_error("busy timeout out of range");
  if (sqlite3_busy_timeout(db_.get(), static_cast<int>(ms)) != SQLITE_OK)
    return last_error();
  return {};
}

domain::outcome<int64_t> database::query_int64(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt)
    return stmt.err();
  auto res = stmt->step();
  if (!res)
    return res.err();
  if (*res != step_result::row)
    return storage_error("query returned no row");
  return stmt->column_int64(0);
}

domain::outcome<std::string> database::query_text(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt)
    return stmt.err();
  auto res = stmt->step();
  if (!res)
    return res.err();
  if (*res != step_result::row)
    return storage_error("query returned no row");
  return stmt->column_text(0);
}

// -- statement ----------------------------------------------------------------

void statement::finalizer::operator()(sqlite3_stmt* stmt) const noexcept {
  sqlite3_finalize(stmt);
}

std::string statement::sql() const {
  if (!stmt_)
    return {};
  auto text = sqlite3_sql(stmt_.get());
  return text != nullptr ? std::string{text} : std::string{};
}

bool statement::busy() const noexcept {
  return stmt_ && sqlite3_stmt_busy(stmt_.get()) != 0;
}

bool statement::read_only() const noexcept {
  return stmt_ && sqlite3_stmt_readonly(stmt_.get()) != 0;
}

int statement::parameter_count() const noexcept {
  return stmt_ ? sqlite3_bind_parameter_count(stmt_.get()) : 0;
}

void statement::prepare_for_bind() noexcept {
  if (stepped_)
    reset();
}

domain::error statement::bind_result(int rc) {
  if (rc == SQLITE_OK)
    return {};
  auto err = storage_error(sqlite3_db_handle(stmt_.get()));
  if (!bind_error_)
    bind_error_ = err;
  return err;
}

domain::error statement::bind_int64(int index, int64_t value) {
  if (!stmt_)
    return storage_error("statement is not prepared");
  prepare_for_bind();
  return bind_result(sqlite3_bind_int64(stmt_.get(), index, value));
}

domain::error statement::bind_double(int index, double value) {
  if (!stmt_)
    return storage_error("statement is not prepared");
  prepare_for_bind();
  return bind_result(sqlite3_bind_double(stmt_.get(), index, value));
}

domain::error statement::bind_text(int index, std::string_view value) {
  return bind_text_with(index, value, SQLITE_TRANSIENT);
}

domain::error statement::bind_text_ref(int index, std::string_view value) {
  return bind_text_with(index, value, SQLITE_STATIC);
}

domain::error statement::bind_text_with(int index, std::string_view value,
                                        sqlite3_destructor_type lifetime) {
  if (!stmt_)
    return storage_error("statement is not prepared");
  prepare_for_bind();
  if (value.size() > max_length) {
    auto err = storage_error("text value too long");
    if (!bind_error_)
      bind_error_ = err;
    return err;
  }
  // A null data pointer would bind NULL; an empty view must bind ''.
  auto data = value.data() != nullptr ? value.data() : "";
  return bind_result(sqlite3_bind_text(
    stmt_.get(), index, data, static_cast<int>(value.size()), lifetime));
}

domain::error statement::bind_null(int index) {
  if (!stmt_)
    return storage_error("statement is not prepared");
  prepare_for_bind();
  return bind_result(sqlite3_bind_null(stmt_.get(), index));
}

domain::outcome<step_result> statement::step() {
  if (!stmt_)
    return storage_error("statement is not prepared");
  if (bind_error_)
    return bind_error_;
  stepped_ = true;
  auto rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW)
    return step_result::row;
  if (rc == SQLITE_DONE)
    return step_result::done;
  auto err = storage_error(sqlite3_db_handle(stmt_.get()));
  // Leave the statement ready to run again; the error is already copied.
  sqlite3_reset(stmt_.get());
  return err;
}

domain::error statement::run() {
  for (;;) {
    auto res = step();
    if (!res)
      return res.err();
    if (*res == step_result::done)
      return {};
  }
}

void statement::reset() noexcept {
  if (stmt_) {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  stepped_ = false;
  bind_error_ = {};
}

int statement::column_count() const noexcept {
  return stmt_ ? sqlite3_column_count(stmt_.get()) : 0;
}

std::string statement::column_name(int col) const {
  if (!stmt_)
    return {};
  auto name = sqlite3_column_name(stmt_.get(), col);
  return name != nullptr ? std::string{name} : std::string{};
}

int statement::column_type(int col) const noexcept {
  return stmt_ ? sqlite3_column_type(stmt_.get(), col) : SQLITE_NULL;
}

bool statement::is_null(int col) const noexcept {
  return column_type(col) == SQLITE_NULL;
}

int64_t statement::column_int64(int col) const noexcept {
  return stmt_ ? sqlite3_column_int64(stmt_.get(), col) : 0;
}

double statement::column_double(int col) const noexcept {
  return stmt_ ? sqlite3_column_double(stmt_.get(), col) : 0.0;
}

std::string statement::column_text(int col) const {
  if (!stmt_)
    return {};
  // Text first, then bytes: the documented safe order.
  auto text = sqlite3_column_text(stmt_.get(), col);
  auto size = sqlite3_column_bytes(stmt_.get(), col);
  if (text == nullptr || size <= 0)
    return {};
  return std::string{reinterpret_cast<const char*>(text),
                     static_cast<size_t>(size)};
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (auto c : name) {
    if (c == '"')
      out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string quote_literal(std::string_view text) {
  std::string out = "'";
  for (auto c : text) {
    if (c == '\'')
      out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

} // namespace candor::data
