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

struct pg_conn; // libpq's PGconn

namespace candor::data::pg {

/// The rows of a query, every value as PostgreSQL's text form (nullopt for
/// NULL).
struct rows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> values;
};

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
  domain::outcome<rows>
  query(std::string_view sql,
        const std::vector<std::optional<std::string>>& params = {});

  /// Runs `copy_sql` (a `COPY ... FROM STDIN` statement) and feeds it the
  /// chunks `next` writes into its argument until it returns false (the
  /// chunk of that last call is sent too).
  domain::error copy_in(std::string_view copy_sql,
                        const std::function<bool(std::string&)>& next);

  /// The server's major version (15 for 15.x).
  int server_major() const;

private:
  explicit connection(pg_conn* c) : c_(c) {}
  pg_conn* c_ = nullptr;
};

/// `text` as a COPY text-format field: backslash, tab, newline and
/// carriage return escaped.
void append_copy_field(std::string& out, std::string_view text);

/// `name` quoted as an identifier ("order" -> "\"order\"").
std::string quote_ident(std::string_view name);

} // namespace candor::data::pg
