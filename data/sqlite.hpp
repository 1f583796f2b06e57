#pragma once

// A small SQLite wrapper: connections, statements, rows, transactions and
// the allocation budget, with errors as values.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "domain/error.hpp"

/// A small RAII layer over the SQLite C API, shared by every database in
/// data/ (ledger, sales, retrieval index). Failures are `domain::error` values
/// with code `storage_failed` and SQLite's own message; nothing throws.
///
/// Objects here are not thread-safe: use one `database` (and its statements)
/// from one thread at a time. A `statement` must not outlive its `database`.
namespace candor::data {

class statement;

/// Opens the usual way: read-write, create when missing, URI file names.
inline constexpr int default_open_flags
  = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;

/// Builds a `storage_failed` error from SQLite's current message on `db`.
domain::error storage_error(sqlite3* db);

/// Builds a `storage_failed` error with a message of our own.
domain::error storage_error(std::string message);

// -- database -----------------------------------------------------------------

/// One SQLite connection. Move-only; closes on destruction.
class database {
public:
  // -- construction -----------------------------------------------------------

  /// Opens `path` (a file name, `:memory:` or a `file:` URI when the flags
  /// include SQLITE_OPEN_URI) with `sqlite3_open_v2` flags.
  static domain::outcome<database> open(const std::string& path,
                                        int flags = default_open_flags);

  database() = default;
  database(database&&) noexcept = default;
  database& operator=(database&&) noexcept = default;
  database(const database&) = delete;
  database& operator=(const database&) = delete;
  ~database() = default;

  // -- properties -------------------------------------------------------------

  /// True unless default-constructed or moved from.
  bool is_open() const noexcept {
    return db_ != nullptr;
  }

  /// The raw handle, for what this wrapper does not cover (authorizer,
  /// `sqlite3_limit`, `sqlite3_db_config`). Stays owned by this object.
  sqlite3* handle() const noexcept {
    return db_.get();
  }

  /// The most recent error on this connection as a `storage_failed` error.
  domain::error last_error() const;

  /// The most recent extended result code (e.g. SQLITE_CONSTRAINT_CHECK).
  int last_error_code() const noexcept;

  /// Rows changed by the most recent INSERT, UPDATE or DELETE.
  int64_t changes() const noexcept;

  int64_t last_insert_rowid() const noexcept;

  /// True while an explicit transaction is open.
  bool in_transaction() const noexcept;

  // -- operations -------------------------------------------------------------

  /// Runs one or more statements, discarding any rows.
  domain::error exec(const std::string& sql);

  /// Compiles exactly one statement. Trailing whitespace, `;` and comments
  /// are fine; a second statement is an error, and so is an empty one.
  domain::outcome<statement> prepare(std::string_view sql);

  /// Waits up to `timeout` on a locked database before failing with
  /// "database is locked".
  domain::error busy_timeout(std::chrono::milliseconds timeout);

  /// Runs a one-row query (e.g. `PRAGMA user_version`, `SELECT COUNT(*)`)
  /// and returns its first column as an integer; no row is an error.
  domain::outcome<int64_t> query_int64(std::string_view sql);

  /// Like `query_int64`, for a text result (NULL gives "").
  domain::outcome<std::string> query_text(std::string_view sql);

private:
  struct closer {
    void operator()(sqlite3* db) const noexcept;
  };

  std::unique_ptr<sqlite3, closer> db_;
};

// -- statement ----------------------------------------------------------------

/// What one `statement::step()` produced; errors travel in the outcome.
enum class step_result : uint8_t {
  row,  ///< a row is available through the column getters
  done, ///< the statement has finished
};

/// A prepared statement. Move-only; finalizes on destruction.
///
/// Re-use: after a `step()`, the next `bind_*` call first resets the statement
/// and clears every binding, so each execution binds all its parameters
/// afresh. Use `reset_on_exit()` to reset at scope exit, which also ends the
/// read transaction a half-read SELECT keeps open.
///
/// Parameters are 1-based; columns are 0-based (as in SQLite).
class statement {
public:
  /// Resets its statement when the scope ends.
  class reset_guard {
  public:
    explicit reset_guard(statement& stmt) noexcept : stmt_(&stmt) {}
    reset_guard(const reset_guard&) = delete;
    reset_guard& operator=(const reset_guard&) = delete;
    ~reset_guard() {
      stmt_->reset();
    }

  private:
    statement* stmt_;
  };

  statement() = default;
  statement(statement&&) noexcept = default;
  statement& operator=(statement&&) noexcept = default;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement() = default;

  // -- properties -------------------------------------------------------------

  bool is_valid() const noexcept {
    return stmt_ != nullptr;
  }
  sqlite3_stmt* handle() const noexcept {
    return stmt_.get();
  }

  /// The SQL text this statement was prepared from.
  std::string sql() const;

  /// True between a `step()` that returned a row and the reset or the end.
  bool busy() const noexcept;

  /// True when the statement does not write (SELECT, most PRAGMAs).
  bool read_only() const noexcept;

  int parameter_count() const noexcept;

  // -- binding (each call returns the error, and the first one is also
  //    reported by the next `step()`) ---------------------------------------

  domain::error bind_int64(int index, int64_t value);
  domain::error bind_double(int index, double value);
  /// Copies `value` (SQLITE_TRANSIENT): the view may die after the call.
  domain::error bind_text(int index, std::string_view value);
  /// Binds `value` without copying it (SQLITE_STATIC), which saves SQLite a
  /// malloc, a copy and a free per value on hot inserts. The bytes must stay
  /// alive and unchanged until the statement is reset (`reset()` clears the
  /// bindings, so a `reset_on_exit()` guard declared after the values are
  /// bound keeps them safe); SQLite copies the value into the row itself.
  domain::error bind_text_ref(int index, std::string_view value);
  domain::error bind_null(int index);

  // -- execution --------------------------------------------------------------

  /// Advances to the next row, or reports done or an error.
  domain::outcome<step_result> step();

  /// Steps until done (discarding rows), for INSERT/UPDATE/DDL.
  domain::error run();

  /// `sqlite3_reset` + `sqlite3_clear_bindings`; forgets a bind error.
  void reset() noexcept;

  /// A guard that calls `reset()` when it goes out of scope.
  [[nodiscard]] reset_guard reset_on_exit() noexcept {
    return reset_guard{*this};
  }

  // -- columns of the current row ---------------------------------------------

  int column_count() const noexcept;
  std::string column_name(int col) const;
  /// SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  int column_type(int col) const noexcept;
  bool is_null(int col) const noexcept;
  int64_t column_int64(int col) const noexcept;
  double column_double(int col) const noexcept;
  /// The column as text (NULL gives ""); copies the bytes.
  std::string column_text(int col) const;

private:
  friend class database;

  struct finalizer {
    void operator()(sqlite3_stmt* stmt) const noexcept;
  };

  explicit statement(sqlite3_stmt* stmt) noexcept : stmt_(stmt) {}

  domain::error bind_result(int rc);
  domain::error bind_text_with(int index, std::string_view value,
                               sqlite3_destructor_type lifetime);
  void prepare_for_bind() noexcept;

  std::unique_ptr<sqlite3_stmt, finalizer> stmt_;
  bool stepped_ = false;
  domain::error bind_error_;
};

/// Steps `stmt` to its end and calls `row(stmt)` for every row; the first
/// failed step is the result.
template <class F>
domain::error for_each_row(statement& stmt, F&& row) {
  for (;;) {
    auto res = stmt.step();
    if (!res)
      return res.err();
    if (*res == step_result::done)
      return {};
    row(stmt);
  }
}

// -- transaction --------------------------------------------------------------

/// How a transaction takes its locks (see SQLite's BEGIN).
enum class tx_mode : uint8_t {
  deferred,  ///< read snapshot on first read, write lock on first write
  immediate, ///< write lock now: the mode for writers
};

/// BEGIN, COMMIT and ROLLBACK prepared once, for a connection that opens a
/// transaction per batch: `database::exec` parses and compiles the text on
/// every call, which costs more than running it. Move-only; must not
/// outlive its database.
class tx_statements {
public:
  static domain::outcome<tx_statements> prepare(database& db, tx_mode mode);

  tx_statements() = default;

  /// True once prepared.
  bool is_valid() const noexcept {
    return begin_.is_valid();
  }

private:
  friend class transaction;

  statement begin_;
  statement commit_;
  statement rollback_;
};

/// An open transaction: BEGIN on creation, ROLLBACK on destruction unless
/// `commit()` succeeded. Move-only; must not outlive its database.
class transaction {
public:
  static domain::outcome<transaction> begin(database& db,
                                            tx_mode mode = tx_mode::immediate);

  /// Like `begin(db, mode)` with `stmts` (prepared on `db`) for BEGIN,
  /// COMMIT and ROLLBACK; `stmts` must outlive the transaction.
  static domain::outcome<transaction> begin(database& db, tx_statements& stmts);

  transaction(transaction&& other) noexcept;
  transaction& operator=(transaction&& other) noexcept;
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  ~transaction();

  /// COMMIT. On failure the transaction stays open and the destructor (or
  /// `rollback()`) undoes it.
  domain::error commit();

  /// ROLLBACK now; a no-op once committed or rolled back.
  void rollback() noexcept;

  /// True until committed or rolled back.
  bool active() const noexcept {
    return db_ != nullptr;
  }

private:
  explicit transaction(database& db, tx_statements* stmts = nullptr) noexcept
      : db_(&db), stmts_(stmts) {}

  database* db_ = nullptr;
  tx_statements* stmts_ = nullptr; ///< null: the SQL text is run each time
};

/// `name` as a double-quoted SQL identifier ("" escapes a quote).
std::string quote_identifier(std::string_view name);

/// `text` as a single-quoted SQL string literal ('' escapes a quote).
std::string quote_literal(std::string_view text);

// -- allocation budget --------------------------------------------------------

/// Wraps SQLite's allocator so that `allocation_budget` can bound what one
/// thread allocates. Process-wide, and only possible before SQLite is
/// initialised (before the first connection is opened): call it first
/// thing in `main`. Idempotent. Outside an `allocation_budget` the wrapper
/// only forwards to SQLite's default allocator, so the ledger and the
/// index are unaffected (unlike `sqlite3_hard_heap_limit64`, which is
/// process-wide).
domain::error install_allocation_budget();

/// True once `install_allocation_budget` has succeeded.
bool allocation_budget_installed() noexcept;

/// While alive, every byte SQLite allocates on this thread (malloc and
/// realloc sizes, summed; frees do not give any back) counts against
/// `bytes`; past it, allocations fail and SQLite reports SQLITE_NOMEM.
/// This bounds the work of compiling one hostile statement on a shared
/// connection: SQLite's own limits do not bound how often it copies a
/// CTE body. Does nothing unless `install_allocation_budget` succeeded.
/// Not nestable; one per thread at a time.
class allocation_budget {
public:
  explicit allocation_budget(int64_t bytes) noexcept;
  allocation_budget(const allocation_budget&) = delete;
  allocation_budget& operator=(const allocation_budget&) = delete;
  ~allocation_budget();

  /// Bytes counted so far.
  int64_t used() const noexcept;

  /// True when an allocation was refused.
  bool exceeded() const noexcept;
};

} // namespace candor::data
