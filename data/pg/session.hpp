#pragma once

// One connection of the SQL sandbox's PostgreSQL pool: runs one statement at
// a time with libpq's asynchronous calls, inside a READ ONLY transaction,
// with a deadline that cancels the statement on the server.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "domain/error.hpp"
#include "domain/sql/exec.hpp"

struct pg_conn; // libpq's PGconn

namespace candor::data::pg {

/// One warehouse connection owned by one executor worker (one thread).
/// Move-only; closes the connection when destroyed.
///
/// Every statement runs as: `BEGIN TRANSACTION READ ONLY` with
/// `SET LOCAL statement_timeout` to the statement's deadline (the server's
/// own stop), the statement alone through the extended protocol (which
/// refuses a second statement whatever the policy let through), its rows in
/// single-row mode (kept up to `max_rows` and `executor_reply_budget`
/// bytes, counted beyond), then `ROLLBACK`. The connection's role brings the
/// rest (read-only by default, column grants, work_mem, temp_file_limit).
///
/// At the deadline the statement is cancelled on the server (PQcancel);
/// when the server does not answer within `cancel_grace` the connection is
/// dropped instead. Both are `sql_timeout`.
class session {
public:
  /// Connects to `dsn` without blocking past `timeout` (libpq's
  /// asynchronous connect, polled). Errors: `sql_executor_failed` with
  /// libpq's message.
  static domain::outcome<session> open(const std::string& dsn,
                                       std::chrono::milliseconds timeout);

  session() = default;
  session(session&& other) noexcept;
  session& operator=(session&& other) noexcept;
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  ~session();

  /// True while the connection is open and healthy.
  bool running() const noexcept {
    return conn_ != nullptr;
  }

  /// The server process serving this connection (for /health), 0 if none.
  int32_t backend_pid() const noexcept;

  /// True when the connection broke while idle (the server closed it, was
  /// restarted, ended the session); the connection is closed then.
  bool check_gone();

  /// Runs one statement with `deadline` of wall-clock time from now.
  /// Errors: `sql_timeout` (the deadline passed or the server's
  /// statement_timeout fired), `sql_failed` (the server refused or failed
  /// the statement: a privilege, read-only, a missing column; the message
  /// carries SQLSTATE and the server's text), `sql_executor_failed` (the
  /// connection broke; it is closed, so `running()` turns false),
  /// `shutting_down` (`wake_fd` became readable), `invalid_request` (an
  /// empty statement, one with a NUL byte or longer than
  /// `executor_max_sql`).
  domain::outcome<domain::sql_exec_result>
  run(const domain::sql_exec_request& req, std::chrono::milliseconds deadline,
      int wake_fd = -1);

  /// TOOLS AND TESTS ONLY (`candor-eval sql-guard`'s role layer): the same
  /// in a READ WRITE transaction, still always rolled back, so that what
  /// the role's privileges alone refuse can be seen. Never on the request
  /// path.
  domain::outcome<domain::sql_exec_result>
  run_read_write_probe(const domain::sql_exec_request& req,
                       std::chrono::milliseconds deadline);

  /// Whether the last `run` got as far as sending the statement. A
  /// connection lost before that (a session ended on the server while
  /// idle) cost the statement nothing: it may run on a new connection.
  bool statement_sent() const noexcept {
    return statement_sent_;
  }

  /// The server's notices and warnings during the last `run` (their
  /// primary text, at most 16), e.g. ANALYZE skipping a table the role
  /// does not own.
  const std::vector<std::string>& notices() const noexcept {
    static const std::vector<std::string> none;
    return notices_ ? *notices_ : none;
  }

  /// Closes the connection (no-op when closed).
  void close() noexcept;

  /// How long the server may take to acknowledge a cancel.
  static constexpr std::chrono::milliseconds cancel_grace{1000};

private:
  explicit session(pg_conn* c) : conn_(c) {}
  domain::outcome<domain::sql_exec_result>
  run_in(const char* transaction, const domain::sql_exec_request& req,
         std::chrono::milliseconds deadline, int wake_fd);
  pg_conn* conn_ = nullptr;
  bool statement_sent_ = false;
  std::unique_ptr<std::vector<std::string>> notices_;
};

/// True when the server ran a statement but its privileges kept it from
/// doing anything: ANALYZE or VACUUM skip, with a warning, every table the
/// role does not own (PostgreSQL 15 gives that warning no SQLSTATE of its
/// own, so its English text is what there is to read).
inline bool skipped_for_privileges(const std::vector<std::string>& notices) {
  for (const auto& n : notices)
    if (n.find("only table or database owner can") != std::string::npos
        || n.find("only superuser can") != std::string::npos)
      return true;
  return false;
}

/// A row cell from PostgreSQL's text form and the column's type OID, as
/// the SQLite executor would report it: booleans and integer types as
/// integers, `numeric` as an integer when it has no fraction and fits,
/// else a real; float4/float8 (with NaN and infinities) as reals; bytea as
/// a blob summary; everything else as text cut to `max_cell_chars` code
/// points. Exposed for tests.
domain::cell cell_from_text(uint32_t type_oid, const char* text, size_t len);

} // namespace candor::data::pg
