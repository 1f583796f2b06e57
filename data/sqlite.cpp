#include "data/sqlite.hpp"

#include <atomic>
#include <limits>
#include <mutex>
#include <utility>

namespace candor::data {

namespace {

/// True when `text` holds only whitespace and semicolons.
bool blank(std::string_view text) noexcept {
  for (auto c : text)
    if (c != ';' && c != ' ' && c != '\t' && c != '\n' && c != '\r'
        && c != '\f' && c != '\v')
      return false;
  return true;
}

/// SQLite takes lengths as int; refuse what does not fit.
constexpr size_t max_length = std::numeric_limits<int>::max();

} // namespace

domain::error storage_error(sqlite3* db) {
  return domain::make_error(domain::ec::storage_failed,
                            db != nullptr ? sqlite3_errmsg(db)
                                          : "out of memory");
}

domain::error storage_error(std::string message) {
  return domain::make_error(domain::ec::storage_failed, std::move(message));
}

// -- allocation budget --------------------------------------------------------

namespace {

/// What the current thread may still allocate; inactive outside an
/// allocation_budget.
struct thread_budget {
  bool armed = false;
  bool exceeded = false;
  int64_t limit = 0;
  int64_t used = 0;
};

thread_local thread_budget budget_;

sqlite3_mem_methods default_methods_{};

std::atomic<bool> budget_installed_{false};

/// Counts `n` bytes against the thread's budget; false when over it.
bool charge(int n) noexcept {
  auto& b = budget_;
  if (!b.armed)
    return true;
  b.used += n;
  if (b.used <= b.limit)
    return true;
  b.exceeded = true;
  return false;
}

void* budget_malloc(int n) {
  return charge(n) ? default_methods_.xMalloc(n) : nullptr;
}

void* budget_realloc(void* p, int n) {
  return charge(n) ? default_methods_.xRealloc(p, n) : nullptr;
}

} // namespace

domain::error install_allocation_budget() {
  static std::mutex mtx;
  std::lock_guard<std::mutex> guard{mtx};
  if (budget_installed_)
    return {};
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &default_methods_) != SQLITE_OK)
    return storage_error("cannot read SQLite's allocator");
  auto methods = default_methods_;
  methods.xMalloc = budget_malloc;
  methods.xRealloc = budget_realloc;
  if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK)
    return storage_error("cannot wrap SQLite's allocator: SQLite was "
                         "initialised before install_allocation_budget()");
  budget_installed_ = true;
  return {};
}

bool allocation_budget_installed() noexcept {
  return budget_installed_;
}

allocation_budget::allocation_budget(int64_t bytes) noexcept {
  budget_ = thread_budget{true, false, bytes, 0};
}

allocation_budget::~allocation_budget() {
  budget_.armed = false;
}

int64_t allocation_budget::used() const noexcept {
  return budget_.used;
}

bool allocation_budget::exceeded() const noexcept {
  return budget_.exceeded;
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
  return bind_result(sqlite3_bind_text(stmt_.get(), index, data,
                                       static_cast<int>(value.size()),
                                       lifetime));
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

// -- transaction --------------------------------------------------------------

namespace {

const char* begin_sql(tx_mode mode) noexcept {
  return mode == tx_mode::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED";
}

/// Runs a prepared statement once and leaves it reset.
domain::error run_once(statement& stmt) {
  auto guard = stmt.reset_on_exit();
  return stmt.run();
}

} // namespace

domain::outcome<tx_statements> tx_statements::prepare(database& db,
                                                      tx_mode mode) {
  tx_statements result;
  std::pair<statement*, const char*> all[] = {
    {&result.begin_, begin_sql(mode)},
    {&result.commit_, "COMMIT"},
    {&result.rollback_, "ROLLBACK"},
  };
  for (auto& [stmt, sql] : all) {
    auto res = db.prepare(sql);
    if (!res)
      return res.err();
    *stmt = std::move(*res);
  }
  return result;
}

domain::outcome<transaction> transaction::begin(database& db, tx_mode mode) {
  auto err = db.exec(begin_sql(mode));
  if (err)
    return err;
  return transaction{db};
}

domain::outcome<transaction> transaction::begin(database& db,
                                                tx_statements& stmts) {
  if (!stmts.is_valid())
    return storage_error("transaction statements are not prepared");
  if (auto err = run_once(stmts.begin_))
    return err;
  return transaction{db, &stmts};
}

transaction::transaction(transaction&& other) noexcept
  : db_(std::exchange(other.db_, nullptr)),
    stmts_(std::exchange(other.stmts_, nullptr)) {
  // nop
}

transaction& transaction::operator=(transaction&& other) noexcept {
  if (this != &other) {
    rollback();
    db_ = std::exchange(other.db_, nullptr);
    stmts_ = std::exchange(other.stmts_, nullptr);
  }
  return *this;
}

transaction::~transaction() {
  rollback();
}

domain::error transaction::commit() {
  if (db_ == nullptr)
    return storage_error("no transaction is active");
  auto err = stmts_ != nullptr ? run_once(stmts_->commit_)
                               : db_->exec("COMMIT");
  if (err)
    return err;
  db_ = nullptr;
  return {};
}

void transaction::rollback() noexcept {
  if (db_ == nullptr)
    return;
  // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) already rolled back.
  if (db_->in_transaction()) {
    if (stmts_ != nullptr) {
      // Raw calls: nothing here may allocate (an error value would).
      auto* stmt = stmts_->rollback_.handle();
      sqlite3_step(stmt);
      sqlite3_reset(stmt);
    } else
      sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  db_ = nullptr;
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
