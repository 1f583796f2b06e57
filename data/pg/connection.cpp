// libpq behind error values: connect, exec, query, COPY FROM STDIN.

#include "data/pg/connection.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <utility>

namespace candor::data::pg {

namespace {

domain::error failed(std::string what, PGconn* c) {
  std::string msg = c != nullptr ? PQerrorMessage(c) : "out of memory";
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
    msg.pop_back();
  return domain::make_error(domain::ec::storage_failed,
                            "postgres: " + std::move(what) + ": " + msg);
}

struct result_deleter {
  void operator()(PGresult* r) const noexcept {
    PQclear(r);
  }
};
using result = std::unique_ptr<PGresult, result_deleter>;

/// The first line of a statement, for error messages.
std::string head(std::string_view sql) {
  sql.remove_prefix(std::min(sql.size(), sql.find_first_not_of(" \n")));
  auto line = sql.substr(0, sql.find('\n'));
  if (line.size() > 80)
    line = line.substr(0, 80);
  return std::string{line};
}

} // namespace

domain::outcome<connection> connection::open(const std::string& dsn) {
  PGconn* c = PQconnectdb(dsn.c_str());
  if (c == nullptr || PQstatus(c) != CONNECTION_OK) {
    auto err = failed("cannot connect", c);
    PQfinish(c);
    return err;
  }
  // Messages in English and no notices on stderr.
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  return connection{c};
}

connection::connection(connection&& o) noexcept
    : c_(std::exchange(o.c_, nullptr)), sqlstate_(std::move(o.sqlstate_)) {}

connection& connection::operator=(connection&& o) noexcept {
  if (this != &o) {
    if (c_ != nullptr)
      PQfinish(c_);
    c_ = std::exchange(o.c_, nullptr);
    sqlstate_ = std::move(o.sqlstate_);
  }
  return *this;
}

connection::~connection() {
  if (c_ != nullptr)
    PQfinish(c_);
}

domain::error connection::failed_with(const pg_result* r, std::string what) {
  const char* state
    = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  sqlstate_ = state != nullptr ? state : "";
  return failed(std::move(what), c_);
}

domain::error connection::exec(std::string_view sql) {
  result r{PQexec(c_, std::string{sql}.c_str())};
  auto st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    return failed_with(r.get(), "'" + head(sql) + "'");
  return {};
}

namespace {

/// The parameters as libpq takes them (pointers into `ps`).
std::vector<const char*> param_values(const params& ps) {
  std::vector<const char*> values;
  values.reserve(ps.size());
  for (const auto& p : ps)
    values.push_back(p ? p->c_str() : nullptr);
  return values;
}

} // namespace

domain::outcome<rows> connection::query(std::string_view sql,
                                        const params& ps) {
  auto values = param_values(ps);
  result r{PQexecParams(c_, std::string{sql}.c_str(),
                        static_cast<int>(values.size()), nullptr, values.data(),
                        nullptr, nullptr, 0)};
  auto st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
    return failed_with(r.get(), "'" + head(sql) + "'");
  rows out;
  const int nf = PQnfields(r.get());
  for (int f = 0; f < nf; ++f)
    out.columns.emplace_back(PQfname(r.get(), f));
  const int nt = PQntuples(r.get());
  out.values.reserve(static_cast<size_t>(nt));
  for (int t = 0; t < nt; ++t) {
    std::vector<std::optional<std::string>> row;
    row.reserve(static_cast<size_t>(nf));
    for (int f = 0; f < nf; ++f) {
      if (PQgetisnull(r.get(), t, f))
        row.emplace_back(std::nullopt);
      else
        row.emplace_back(
          std::string{PQgetvalue(r.get(), t, f),
                      static_cast<size_t>(PQgetlength(r.get(), t, f))});
    }
    out.values.push_back(std::move(row));
  }
  return out;
}

domain::error
connection::copy_in(std::string_view copy_sql,
                    const std::function<bool(std::string&)>& next) {
  result start{PQexec(c_, std::string{copy_sql}.c_str())};
  if (!start || PQresultStatus(start.get()) != PGRES_COPY_IN)
    return failed("'" + head(copy_sql) + "'", c_);
  std::string chunk;
  bool more = true;
  while (more) {
    chunk.clear();
    more = next(chunk);
    if (!chunk.empty()
        && PQputCopyData(c_, chunk.data(), static_cast<int>(chunk.size())) != 1)
      return failed("copy data", c_);
  }
  if (PQputCopyEnd(c_, nullptr) != 1)
    return failed("copy end", c_);
  domain::error err;
  while (PGresult* raw = PQgetResult(c_)) {
    result r{raw};
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK && !err)
      err = failed("'" + head(copy_sql) + "'", c_);
  }
  return err;
}

domain::error
connection::query_each(std::string_view sql, const params& ps,
                       const std::function<void(const row_view&)>& each) {
  auto values = param_values(ps);
  if (PQsendQueryParams(c_, std::string{sql}.c_str(),
                        static_cast<int>(values.size()), nullptr, values.data(),
                        nullptr, nullptr, 0)
      != 1) {
    sqlstate_.clear();
    return failed("'" + head(sql) + "'", c_);
  }
  // Set right after sending (before any result is read); should it fail,
  // the rows arrive in one result, which is read the same way.
  (void)PQsetSingleRowMode(c_);
  // Every result is read, so that the connection is ready for the next
  // statement; the first failure is the one reported.
  domain::error err;
  while (PGresult* raw = PQgetResult(c_)) {
    result r{raw};
    auto st = PQresultStatus(r.get());
    if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK) {
      if (!err)
        for (int t = 0, n = PQntuples(r.get()); t < n; ++t)
          each(row_view{r.get(), t});
    } else if (st != PGRES_COMMAND_OK && !err) {
      err = failed_with(r.get(), "'" + head(sql) + "'");
    }
  }
  if (!err && !connected()) {
    sqlstate_.clear();
    err = failed("'" + head(sql) + "'", c_);
  }
  return err;
}

bool connection::connected() const noexcept {
  return c_ != nullptr && PQstatus(c_) == CONNECTION_OK;
}

domain::error connection::reset() {
  sqlstate_.clear();
  if (c_ == nullptr)
    return failed("cannot reconnect", c_);
  PQreset(c_);
  if (PQstatus(c_) != CONNECTION_OK)
    return failed("cannot reconnect", c_);
  return {};
}

int row_view::size() const noexcept {
  return PQnfields(r_);
}

bool row_view::is_null(int col) const noexcept {
  return PQgetisnull(r_, row_, col) != 0;
}

std::string_view row_view::value(int col) const noexcept {
  if (is_null(col))
    return {};
  return {PQgetvalue(r_, row_, col),
          static_cast<size_t>(PQgetlength(r_, row_, col))};
}

int connection::server_major() const {
  return PQserverVersion(c_) / 10000;
}

void append_copy_field(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

std::string quote_ident(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

} // namespace candor::data::pg
