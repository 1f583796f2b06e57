#pragma once

// A connection to PostgreSQL through libpq: statements, parameterised
// queries with text results, and COPY FROM STDIN; every failure an error
// value naming what failed (never the password).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

struct pg_conn;   // libpq's PGconn
struct pg_result; // libpq's PGresult

namespace candor::data::pg {

/// The rows of a query, every value as PostgreSQL's text form (nullopt for
/// NULL).
struct rows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> values;
};

/// One row of a result being read, borrowed from libpq: valid only during
/// the call that is given it.
class row_view {
public:
  row_view(const pg_result* r, int row) noexcept : r_(r), row_(row) {}
  int size() const noexcept;
  bool is_null(int col) const noexcept;
  /// The value's text form (empty for NULL).
  std::string_view value(int col) const noexcept;

private:
  const pg_result* r_;
  int row_;
};

/// Parameters of a statement ($1, $2, ... as text; nullopt for NULL).
using params = std::vector<std::optional<std::string>>;

/// One open connection. Blocking: for set-up, seeding and tests; the
/// request path will use libpq's asynchronous calls in the sql-sandbox
/// actor. Movable, not copyable; closes on destruction.
class connection {
public:
  /// Connects with a libpq connection string ("host=/tmp/x port=5433
  /// dbname=sales user=candor") or URI. Errors (`ec::storage_failed`) carry
  /// libpq's message.
  static domain::outcome<connection> open(const std::string& dsn);

  connection(connection&&) noexcept;
  connection& operator=(connection&&) noexcept;
  ~connection();

  /// Runs one or more statements that return no rows.
  domain::error exec(std::string_view sql);

  /// Runs one statement with `params` ($1, $2, ... as text) and returns its
  /// rows.
  domain::outcome<rows> query(std::string_view sql, const params& ps = {});

  /// Runs one statement with `ps` and calls `each` for every row as it
  /// arrives (libpq's single-row mode: a large result is never held whole).
  /// The rows read before an error have been given to `each`.
  domain::error query_each(std::string_view sql, const params& ps,
                           const std::function<void(const row_view&)>& each);

  /// The SQLSTATE of the last failed call ("23505"), empty when the server
  /// sent none (the connection was lost, or libpq failed on its side).
  const std::string& last_sqlstate() const noexcept {
    return sqlstate_;
  }

  /// Whether the connection is up (false once the server went away).
  bool connected() const noexcept;

  /// Connects again with the same parameters (PQreset); the session's
  /// settings are those of a new connection. The error says why not.
  domain::error reset();

  /// Runs `copy_sql` (a `COPY ... FROM STDIN` statement) and feeds it the
  /// chunks `next` writes into its argument until it returns false (the
  /// chunk of that last call is sent too).
  domain::error copy_in(std::string_view copy_sql,
                        const std::function<bool(std::string&)>& next);

  /// The server's major version (15 for 15.x).
  int server_major() const;

private:
  explicit connection(pg_conn* c) : c_(c) {}
  /// Records the SQLSTATE of `r` (empty when null) and returns the error.
  domain::error failed_with(const pg_result* r, std::string what);
  pg_conn* c_ = nullptr;
  std::string sqlstate_;
};

/// `text` as a COPY text-format field: backslash, tab, newline and
/// carriage return escaped.
void append_copy_field(std::string& out, std::string_view text);

/// `name` quoted as an identifier ("order" -> "\"order\"").
std::string quote_ident(std::string_view name);

} // namespace candor::data::pg
