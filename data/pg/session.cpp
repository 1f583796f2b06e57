// The SQL sandbox's PostgreSQL connection: libpq's asynchronous calls,
// polled with a deadline, a server-side cancel when it passes, and the
// rows converted to the cells the SQLite executor reports.

#include "data/pg/session.hpp"

#include <libpq-fe.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include <poll.h>

#include "data/sql/executor.hpp"
#include "domain/records.hpp"
#include "domain/text.hpp"

namespace candor::data::pg {

namespace {

using clock_type = std::chrono::steady_clock;
using domain::ec;

struct result_deleter {
  void operator()(PGresult* r) const noexcept {
    PQclear(r);
  }
};
using result_ptr = std::unique_ptr<PGresult, result_deleter>;

std::string trimmed(const char* msg) {
  std::string out = msg != nullptr ? msg : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  return out;
}

domain::error lost(PGconn* c, std::string_view what) {
  return domain::make_error(ec::sql_executor_failed,
                            "postgres connection lost " + std::string{what}
                              + ": " + trimmed(PQerrorMessage(c)));
}

// Type OIDs of pg_type (stable since PostgreSQL 7).
constexpr uint32_t oid_bool = 16;
constexpr uint32_t oid_bytea = 17;
constexpr uint32_t oid_int8 = 20;
constexpr uint32_t oid_int2 = 21;
constexpr uint32_t oid_int4 = 23;
constexpr uint32_t oid_oid = 26;
constexpr uint32_t oid_float4 = 700;
constexpr uint32_t oid_float8 = 701;
constexpr uint32_t oid_numeric = 1700;

bool parse_int(std::string_view s, int64_t& out) {
  auto [p, err] = std::from_chars(s.data(), s.data() + s.size(), out);
  return err == std::errc{} && p == s.data() + s.size();
}

double parse_real(std::string_view s) {
  if (s == "NaN")
    return std::nan("");
  if (s == "Infinity")
    return HUGE_VAL;
  if (s == "-Infinity")
    return -HUGE_VAL;
  std::string copy{s};
  return std::strtod(copy.c_str(), nullptr);
}

/// What waiting for the server ended with.
enum class wait_end { ready, deadline, woken, broken };

/// Waits until the socket of `c` is readable (then consumes input), the
/// deadline passes or `wake_fd` becomes readable.
wait_end wait_readable(PGconn* c, clock_type::time_point deadline,
                       int wake_fd) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - clock_type::now())
                  .count();
    if (left <= 0)
      return wait_end::deadline;
    pollfd fds[2] = {{PQsocket(c), POLLIN, 0}, {wake_fd, POLLIN, 0}};
    int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, static_cast<int>(left));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return wait_end::broken;
    }
    if (n == 0)
      continue; // the loop sees the deadline
    if (wake_fd >= 0 && (fds[1].revents & POLLIN) != 0)
      return wait_end::woken;
    if (PQconsumeInput(c) == 0)
      return wait_end::broken;
    return wait_end::ready;
  }
}

/// The next result of the command in flight, waiting as `wait_readable`;
/// a null result with `ready` when the command is complete.
wait_end next_result(PGconn* c, clock_type::time_point deadline, int wake_fd,
                     result_ptr& out) {
  while (PQisBusy(c) != 0) {
    auto w = wait_readable(c, deadline, wake_fd);
    if (w != wait_end::ready)
      return w;
  }
  out.reset(PQgetResult(c));
  return wait_end::ready;
}

/// Reads and drops the results of the command in flight until it is
/// complete; false when `deadline` passed or the wait ended otherwise.
bool drain(PGconn* c, clock_type::time_point deadline, int wake_fd) {
  for (;;) {
    result_ptr r;
    if (next_result(c, deadline, wake_fd, r) != wait_end::ready)
      return false;
    if (!r)
      return true;
  }
}

/// Sends the queued output (a non-blocking connection may leave some).
bool flush(PGconn* c, clock_type::time_point deadline) {
  for (;;) {
    int r = PQflush(c);
    if (r == 0)
      return true;
    if (r < 0)
      return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - clock_type::now())
                  .count();
    if (left <= 0)
      return false;
    pollfd fd{PQsocket(c), POLLIN | POLLOUT, 0};
    if (::poll(&fd, 1, static_cast<int>(left)) < 0 && errno != EINTR)
      return false;
    if ((fd.revents & POLLIN) != 0 && PQconsumeInput(c) == 0)
      return false;
  }
}

/// The error a failed result stands for. SQLSTATE 57014 (query_canceled,
/// also the server's statement_timeout) is a timeout; connection classes
/// (08) lose the connection; everything else the server refused is the
/// statement's own failure.
domain::error result_error(const PGresult* r) {
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  std::string code = state != nullptr ? state : "";
  auto primary = trimmed(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
  if (primary.empty())
    primary = trimmed(PQresultErrorMessage(r));
  if (code == "57014")
    return domain::make_error(ec::sql_timeout,
                              "the statement was cancelled by the server at "
                              "its deadline");
  auto msg = "postgres " + (code.empty() ? std::string{"error"} : code) + ": "
             + primary;
  // Connection exceptions (08) and the server ending the session
  // (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect
  // now): the connection is gone, not the statement's fault.
  if (code.rfind("08", 0) == 0 || code.rfind("57P", 0) == 0)
    return domain::make_error(ec::sql_executor_failed, std::move(msg));
  return domain::make_error(ec::sql_failed, std::move(msg));
}

} // namespace

// -- cells --------------------------------------------------------------------

domain::cell cell_from_text(uint32_t type_oid, const char* text, size_t len) {
  using domain::cell;
  cell c;
  std::string_view s{text, len};
  switch (type_oid) {
    case oid_bool:
      c.kind = cell::integer;
      c.i = s == "t" ? 1 : 0;
      return c;
    case oid_int2:
    case oid_int4:
    case oid_int8:
    case oid_oid:
      if (parse_int(s, c.i)) {
        c.kind = cell::integer;
        return c;
      }
      break;
    case oid_numeric:
      if (s.find_first_of(".eEN") == std::string_view::npos
          && parse_int(s, c.i)) {
        c.kind = cell::integer;
        return c;
      }
      c.kind = cell::real;
      c.r = parse_real(s);
      return c;
    case oid_float4:
    case oid_float8:
      c.kind = cell::real;
      c.r = parse_real(s);
      return c;
    case oid_bytea: {
      // Text form "\x0a0b...": two hex digits per byte.
      c.kind = cell::blob;
      c.i = s.size() >= 2 && s.substr(0, 2) == "\\x"
              ? static_cast<int64_t>((s.size() - 2) / 2)
              : static_cast<int64_t>(s.size());
      c.s = "<blob " + std::to_string(c.i) + " bytes>";
      return c;
    }
    default: break;
  }
  c.kind = cell::text;
  std::string full;
  if (domain::valid_utf8(s)) {
    full.assign(s);
  } else {
    // A database in another encoding: invalid bytes become U+FFFD.
    for (unsigned char ch : s) {
      if (ch < 0x80)
        full.push_back(static_cast<char>(ch));
      else
        full += "\xEF\xBF\xBD";
    }
  }
  c.s = domain::cut_utf8(full, max_cell_chars);
  if (c.s.size() < full.size())
    c.s += "\xE2\x80\xA6";
  return c;
}

// -- session ------------------------------------------------------------------

domain::outcome<session> session::open(const std::string& dsn,
                                       std::chrono::milliseconds timeout) {
  PGconn* c = PQconnectStart(dsn.c_str());
  if (c == nullptr)
    return domain::make_error(ec::sql_executor_failed,
                              "postgres: out of memory");
  auto fail = [&](std::string what) -> domain::error {
    auto err = domain::make_error(ec::sql_executor_failed,
                                  "postgres: " + std::move(what) + ": "
                                    + trimmed(PQerrorMessage(c)));
    PQfinish(c);
    return err;
  };
  if (PQstatus(c) == CONNECTION_BAD)
    return fail("cannot connect");
  auto deadline = clock_type::now() + timeout;
  auto state = PGRES_POLLING_WRITING;
  while (state != PGRES_POLLING_OK) {
    if (state == PGRES_POLLING_FAILED)
      return fail("cannot connect");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - clock_type::now())
                  .count();
    if (left <= 0)
      return fail("connecting took longer than "
                  + std::to_string(timeout.count()) + " ms");
    pollfd fd{PQsocket(c),
              static_cast<short>(state == PGRES_POLLING_READING ? POLLIN
                                                                : POLLOUT),
              0};
    int n = ::poll(&fd, 1, static_cast<int>(left));
    if (n < 0 && errno != EINTR)
      return fail("poll");
    if (n > 0)
      state = PQconnectPoll(c);
  }
  if (PQsetnonblocking(c, 1) != 0)
    return fail("non-blocking mode");
  session out{c};
  out.notices_ = std::make_unique<std::vector<std::string>>();
  // Kept for the last statement (a few, for tools); never on stderr.
  PQsetNoticeReceiver(
    c,
    [](void* arg, const PGresult* r) {
      auto* kept = static_cast<std::vector<std::string>*>(arg);
      if (kept->size() < 16)
        kept->push_back(trimmed(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)));
    },
    out.notices_.get());
  return out;
}

session::session(session&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)),
      statement_sent_(other.statement_sent_),
      notices_(std::move(other.notices_)) {
  // nop
}

session& session::operator=(session&& other) noexcept {
  if (this != &other) {
    close();
    conn_ = std::exchange(other.conn_, nullptr);
    statement_sent_ = other.statement_sent_;
    notices_ = std::move(other.notices_);
  }
  return *this;
}

session::~session() {
  close();
}

void session::close() noexcept {
  if (conn_ != nullptr)
    PQfinish(std::exchange(conn_, nullptr));
}

int32_t session::backend_pid() const noexcept {
  return conn_ != nullptr ? PQbackendPID(conn_) : 0;
}

bool session::check_gone() {
  if (conn_ == nullptr)
    return false;
  pollfd fd{PQsocket(conn_), POLLIN, 0};
  if (::poll(&fd, 1, 0) > 0) {
    // Readable while idle: a notice, or the server saying goodbye.
    if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
      close();
      return true;
    }
    while (PQisBusy(conn_) == 0) {
      result_ptr r{PQgetResult(conn_)};
      if (!r)
        break;
    }
  }
  if (PQstatus(conn_) != CONNECTION_OK) {
    close();
    return true;
  }
  return false;
}

domain::outcome<domain::sql_exec_result>
session::run(const domain::sql_exec_request& req,
             std::chrono::milliseconds deadline, int wake_fd) {
  return run_in("BEGIN TRANSACTION READ ONLY", req, deadline, wake_fd);
}

domain::outcome<domain::sql_exec_result>
session::run_read_write_probe(const domain::sql_exec_request& req,
                              std::chrono::milliseconds deadline) {
  return run_in("BEGIN TRANSACTION READ WRITE", req, deadline, -1);
}

domain::outcome<domain::sql_exec_result>
session::run_in(const char* transaction, const domain::sql_exec_request& req,
                std::chrono::milliseconds deadline, int wake_fd) {
  using domain::make_error;
  if (req.sql.empty() || req.sql.size() > executor_max_sql
      || req.sql.find('\0') != std::string::npos)
    return make_error(ec::invalid_request,
                      "the statement is empty, too long or holds a NUL byte");
  if (conn_ == nullptr)
    return make_error(ec::sql_executor_failed, "postgres: not connected");
  auto start = clock_type::now();
  auto until = start + deadline;
  auto* c = conn_;
  statement_sent_ = false;
  if (notices_)
    notices_->clear();
  // Any outcome but the statement's own failure leaves the connection in an
  // unknown state: it is closed, and the worker opens another.
  auto drop = [&](domain::error err) {
    close();
    return err;
  };
  // Asks the server to stop what this connection runs (a connection of
  // its own, on the server's socket: quick, and safe from this thread).
  auto send_cancel = [&] {
    char why[256] = {0};
    if (PGcancel* pc = PQgetCancel(c)) {
      PQcancel(pc, why, sizeof why);
      PQfreeCancel(pc);
    }
  };
  auto on_wait = [&](wait_end w, std::string_view what) -> domain::error {
    switch (w) {
      case wait_end::woken:
        // Closing alone would leave the statement running on the server
        // until it next writes to the socket.
        send_cancel();
        return drop(make_error(ec::shutting_down, "the sandbox is stopping"));
      case wait_end::deadline:
        return drop(make_error(ec::sql_timeout,
                               "the statement passed its deadline of "
                                 + std::to_string(deadline.count()) + " ms"));
      default: return drop(lost(c, what));
    }
  };
  // Cancels the statement on the server and waits (a little) for the
  // server to end it, draining what it sends.
  auto cancel = [&]() -> domain::error {
    send_cancel();
    auto grace = clock_type::now() + cancel_grace;
    auto late = [&](const char* what) {
      return drop(make_error(ec::sql_timeout,
                             "the statement passed its deadline of "
                               + std::to_string(deadline.count())
                               + " ms and the server did not " + what));
    };
    if (!drain(c, grace, wake_fd))
      return late("stop it");
    // The cancelled statement aborted the transaction: end it, so that the
    // session serves the next statement.
    if (PQsendQuery(c, "ROLLBACK") == 0 || !flush(c, grace))
      return drop(lost(c, "ending a cancelled transaction"));
    if (!drain(c, grace, wake_fd))
      return late("end its transaction");
    return make_error(ec::sql_timeout, "the statement passed its deadline of "
                                         + std::to_string(deadline.count())
                                         + " ms and was cancelled");
  };
  // 1. The transaction, with the server's own deadline.
  auto ms = std::max<int64_t>(deadline.count(), 1);
  auto begin = std::string{transaction} + "; SET LOCAL statement_timeout = "
               + std::to_string(ms);
  if (PQsendQuery(c, begin.c_str()) == 0 || !flush(c, until))
    return drop(lost(c, "starting the transaction"));
  for (;;) {
    result_ptr r;
    if (auto w = next_result(c, until, wake_fd, r); w != wait_end::ready)
      return on_wait(w, "starting the transaction");
    if (!r)
      break;
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
      return drop(result_error(r.get()));
  }
  // 2. The statement alone, rows one by one.
  domain::sql_exec_result out;
  domain::error failure;
  statement_sent_ = true;
  if (PQsendQueryParams(c, req.sql.c_str(), 0, nullptr, nullptr, nullptr,
                        nullptr, 0)
        == 0
      || PQsetSingleRowMode(c) == 0 || !flush(c, until))
    return drop(lost(c, "sending the statement"));
  size_t bytes = 0;
  auto max_rows = static_cast<size_t>(std::max(req.max_rows, 0));
  for (;;) {
    result_ptr r;
    auto w = next_result(c, until, wake_fd, r);
    if (w == wait_end::deadline)
      return cancel();
    if (w != wait_end::ready)
      return on_wait(w, "reading rows");
    if (!r)
      break;
    auto status = PQresultStatus(r.get());
    if (status == PGRES_SINGLE_TUPLE || status == PGRES_TUPLES_OK) {
      int ncols = PQnfields(r.get());
      if (out.columns.empty() && ncols > 0)
        for (int i = 0; i < ncols; ++i)
          out.columns.emplace_back(PQfname(r.get(), i));
      for (int row = 0; row < PQntuples(r.get()); ++row) {
        ++out.row_count;
        if (out.rows.size() >= max_rows || bytes > executor_reply_budget) {
          out.truncated = true;
          continue;
        }
        std::vector<domain::cell> cells;
        cells.reserve(static_cast<size_t>(ncols));
        for (int i = 0; i < ncols; ++i) {
          if (PQgetisnull(r.get(), row, i) != 0) {
            cells.emplace_back();
            continue;
          }
          auto len = static_cast<size_t>(PQgetlength(r.get(), row, i));
          cells.push_back(cell_from_text(PQftype(r.get(), i),
                                         PQgetvalue(r.get(), row, i), len));
          bytes += cells.back().s.size() + 16;
        }
        out.rows.push_back(std::move(cells));
      }
    } else if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE
               || status == PGRES_NONFATAL_ERROR) {
      failure = result_error(r.get());
    } else if (status != PGRES_COMMAND_OK) {
      failure = make_error(ec::sql_failed,
                           std::string{"postgres: unexpected result "}
                             + PQresStatus(status));
    }
  }
  if (failure && failure.code == ec::sql_executor_failed)
    return drop(std::move(failure));
  // 3. Nothing to keep: the transaction ends the same way either way.
  if (PQsendQuery(c, "ROLLBACK") == 0 || !flush(c, until + cancel_grace))
    return drop(lost(c, "ending the transaction"));
  for (;;) {
    result_ptr r;
    auto w = next_result(c, until + cancel_grace, wake_fd, r);
    if (w != wait_end::ready)
      return on_wait(w, "ending the transaction");
    if (!r)
      break;
  }
  if (failure)
    return failure;
  out.elapsed_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     clock_type::now() - start)
                     .count();
  return out;
}

} // namespace candor::data::pg
