// The executor process itself (`candor executor`): it hardens itself,
// opens the sales database read-only and runs one statement per frame.
// The parent side is data/sql/executor.cpp.

#include "data/sql/executor.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <sqlite3.h>

#include "data/sales/catalog.hpp"
#include "data/sql/guard.hpp"
#include "data/sql/recent.hpp"
#include "domain/records.hpp"
#include "domain/text.hpp"
#include "data/sql/executor_wire.hpp"

namespace candor::data {

namespace {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;
using namespace executor_wire;

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool send_json(int fd, const json::object& obj) {
  return write_all(fd, make_frame(json::serialize(obj)));
}

/// Reads the child's request frames: as much as has arrived per read (one
/// read usually brings a whole frame), the rest kept for the next frame.
class frame_reader {
public:
  /// The next frame's payload. Nothing on EOF, error or an oversized frame.
  std::optional<std::string> next(int fd, uint32_t max) {
    for (;;) {
      auto avail = buf_.size() - pos_;
      if (avail >= 4) {
        auto n = frame_length(
          reinterpret_cast<const unsigned char*>(buf_.data() + pos_));
        if (n > max)
          return std::nullopt;
        if (avail - 4 >= n) {
          std::string payload = buf_.substr(pos_ + 4, n);
          pos_ += 4 + n;
          if (pos_ == buf_.size()) {
            buf_.clear();
            pos_ = 0;
          }
          return payload;
        }
      }
      char tmp[65536];
      auto r = ::read(fd, tmp, sizeof tmp);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return std::nullopt;
      buf_.append(tmp, static_cast<size_t>(r));
    }
  }

private:
  std::string buf_;
  size_t pos_ = 0;
};

json::object error_json(std::string_view kind, std::string_view message) {
  json::object obj;
  obj["error"] = kind;
  obj["message"] = message;
  return obj;
}

// -- cells --------------------------------------------------------------------

/// Text that is safe to put in JSON: invalid UTF-8 bytes become U+FFFD,
/// and at most `max_cell_chars` code points are kept ("…" marks a cut).
std::string clean_text(const char* data, size_t size) {
  std::string text{data, size};
  if (!domain::valid_utf8(text)) {
    std::string fixed;
    fixed.reserve(text.size());
    for (unsigned char c : text) {
      if (c < 0x80)
        fixed.push_back(static_cast<char>(c));
      else
        fixed += "\xEF\xBF\xBD";
    }
    text = std::move(fixed);
  }
  auto cut = domain::cut_utf8(text, max_cell_chars);
  if (cut.size() < text.size())
    cut += "\xE2\x80\xA6";
  return cut;
}

/// An `sql_failed` message for SQLite's "out of memory", naming the two
/// limits the statement ran into.
std::string out_of_memory_text(int64_t heap_mb, int64_t memory_mb) {
  return "out of memory: the statement needs more memory than the executor "
         "may use (SQLite heap limit sql.heapLimitMb = "
         + std::to_string(heap_mb)
         + " MiB; executor memory sql.executorMemoryMb = "
         + std::to_string(memory_mb) + " MiB)";
}

// -- the child's statement runner ---------------------------------------------

struct stmt_closer {
  void operator()(sqlite3_stmt* st) const noexcept {
    sqlite3_finalize(st);
  }
};
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_closer>;

/// How many prepared statements an executor keeps for a repeat of the same
/// text.
constexpr size_t kept_statements = 32;

struct runner {
  sqlite3* db = nullptr;
  data::sql_authorizer* auth = nullptr; ///< null when unguarded
  /// The validation connection's full check (authorizer, statement shape,
  /// bytecode audit) on a second connection; null when unguarded.
  data::sql_guard* guard = nullptr;
  bool unguarded = false;
  /// The memory settings, named in an "out of memory" message.
  int64_t heap_mb = 0;
  int64_t memory_mb = 0;
  /// The progress handler's own deadline (a second guard; the parent's
  /// SIGKILL comes first).
  clock_type::time_point deadline;
  /// Statements that passed every check below, prepared, by exact text: a
  /// repeat runs the same compiled program (the guard's verdict on a text
  /// cannot change while the database and the allowlist stay the same, and
  /// the authorizer stays installed should SQLite ever recompile it).
  recent_statements<stmt_ptr> kept{kept_statements};
};

/// Resets a statement when a run ends, whatever the way out (a kept one
/// must not hold its read transaction or its last row).
struct reset_on_exit {
  sqlite3_stmt* st;
  ~reset_on_exit() {
    sqlite3_reset(st);
  }
};

/// Grace between the parent's deadline and the progress handler's.
constexpr auto progress_grace = std::chrono::milliseconds{250};

int progress_callback(void* p) noexcept {
  auto* r = static_cast<runner*>(p);
  return clock_type::now() > r->deadline ? 1 : 0;
}


std::string denial_text(const data::sql_authorizer* auth) {
  if (auth == nullptr || auth->denials().empty())
    return {};
  auto& d = auth->denials().front();
  std::string out = " (" + d.rule + ": " + d.action;
  if (!d.table.empty())
    out += " " + d.table + (d.column.empty() ? "" : "." + d.column);
  if (!d.function.empty())
    out += " " + d.function;
  return out + ")";
}

/// Checks `sql` with the executor's own guard, prepares it under the
/// authorizer and checks its shape; on success `out` holds the statement
/// and the result is empty, else it is the error reply.
json::object prepare_checked(runner& r, std::string_view sql, stmt_ptr& out) {
  if (r.guard != nullptr) {
    // The bytecode audit catches what the authorizer cannot see
    // (SQL-SANDBOX-NOTES G1: joins with USING or NATURAL).
    auto verdict = r.guard->check(sql);
    if (!verdict.allowed())
      return error_json("sql_failed",
                        verdict.message + " (" + verdict.rule + ")");
  }
  if (r.auth != nullptr)
    r.auth->clear();
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  auto rc = sqlite3_prepare_v3(r.db, sql.data(), static_cast<int>(sql.size()),
                               SQLITE_PREPARE_NO_VTAB | SQLITE_PREPARE_PERSISTENT,
                               &raw, &tail);
  stmt_ptr st{raw};
  if (rc != SQLITE_OK)
    return error_json("sql_failed",
                      (rc & 0xFF) == SQLITE_NOMEM
                        ? out_of_memory_text(r.heap_mb, r.memory_mb)
                        : std::string{sqlite3_errmsg(r.db)}
                            + denial_text(r.auth));
  if (!st)
    return error_json("sql_failed", "the statement is empty");
  if (!r.unguarded) {
    std::string_view rest{tail,
                          static_cast<size_t>(sql.data() + sql.size() - tail)};
    if (!domain::trim_ascii(rest).empty()) {
      sqlite3_stmt* second = nullptr;
      auto rc2
        = sqlite3_prepare_v3(r.db, rest.data(), static_cast<int>(rest.size()),
                             SQLITE_PREPARE_NO_VTAB, &second, nullptr);
      stmt_ptr second_ptr{second};
      if (rc2 != SQLITE_OK || second != nullptr)
        return error_json("sql_failed", "more than one statement");
    }
    if (sqlite3_stmt_readonly(st.get()) == 0)
      return error_json("sql_failed", "the statement is not read-only");
    if (sqlite3_stmt_isexplain(st.get()) != 0)
      return error_json("sql_failed", "EXPLAIN is not allowed");
    if (sqlite3_column_count(st.get()) == 0)
      return error_json("sql_failed", "the statement returns no columns");
  }
  out = std::move(st);
  return {};
}

json::object run_statement(runner& r, std::string_view sql, int64_t max_rows,
                           int64_t deadline_ms) {
  auto start = clock_type::now();
  r.deadline = start + std::chrono::milliseconds{deadline_ms} + progress_grace;
  if (sql.find('\0') != std::string_view::npos)
    return error_json("sql_failed", "the statement contains a NUL byte");
  sqlite3_stmt* st = nullptr;
  stmt_ptr owned; // a statement too long to keep
  if (auto* kept = r.kept.find(sql)) {
    st = kept->get();
  } else {
    auto checked = prepare_checked(r, sql, owned);
    if (!checked.empty())
      return checked;
    if (auto* k = r.kept.put(sql, std::move(owned)))
      st = k->get();
    else
      st = owned.get();
  }
  reset_on_exit reset{st};
  auto ncols = sqlite3_column_count(st);
  json::array columns;
  for (int i = 0; i < ncols; ++i) {
    auto* name = sqlite3_column_name(st, i);
    columns.emplace_back(name != nullptr ? clean_text(name, std::strlen(name))
                                         : std::string{});
  }
  json::array rows;
  int64_t row_count = 0;
  size_t bytes = 0;
  bool truncated = false;
  for (;;) {
    auto rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
      break;
    if (rc != SQLITE_ROW)
      return error_json("sql_failed",
                        (rc & 0xFF) == SQLITE_NOMEM
                          ? out_of_memory_text(r.heap_mb, r.memory_mb)
                          : std::string{sqlite3_errmsg(r.db)});
    ++row_count;
    if (truncated || static_cast<int64_t>(rows.size()) >= max_rows
        || bytes > executor_reply_budget) {
      truncated = true;
      continue; // keep counting
    }
    json::array row;
    row.reserve(static_cast<size_t>(ncols));
    for (int i = 0; i < ncols; ++i) {
      switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
          row.emplace_back(
            static_cast<int64_t>(sqlite3_column_int64(st, i)));
          bytes += 12;
          break;
        case SQLITE_FLOAT: {
          auto d = sqlite3_column_double(st, i);
          if (std::isfinite(d)) {
            row.emplace_back(d);
          } else {
            // JSON has no infinity (Boost.JSON would write "Infinity").
            json::object inf;
            inf["inf"] = d > 0 ? 1 : -1;
            row.emplace_back(std::move(inf));
          }
          bytes += 24;
          break;
        }
        case SQLITE_TEXT: {
          auto* p
            = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
          auto n = static_cast<size_t>(sqlite3_column_bytes(st, i));
          auto s = clean_text(p != nullptr ? p : "", p != nullptr ? n : 0);
          // Worst case once serialized: every byte a \u00XX escape.
          bytes += s.size() * 6 + 4;
          row.emplace_back(std::move(s));
          break;
        }
        case SQLITE_BLOB: {
          json::object blob;
          blob["blob"]
            = static_cast<int64_t>(sqlite3_column_bytes(st, i));
          row.emplace_back(std::move(blob));
          bytes += 24;
          break;
        }
        default:
          row.emplace_back(nullptr);
          bytes += 6;
          break;
      }
    }
    rows.emplace_back(std::move(row));
  }
  json::object out;
  out["columns"] = std::move(columns);
  out["rows"] = std::move(rows);
  out["rowCount"] = row_count;
  out["truncated"] = truncated;
  timespec cpu{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  out["cpuUs"]
    = static_cast<int64_t>(cpu.tv_sec) * 1000000 + cpu.tv_nsec / 1000;
  out["elapsedUs"] = static_cast<int64_t>(
    std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now()
                                                          - start)
      .count());
  return out;
}

/// Decodes one request frame and runs its statement.
json::object serve_frame(runner& r, const std::string& frame) {
  std::error_code ec;
  auto doc = json::parse(frame, ec);
  auto* obj = ec ? nullptr : doc.if_object();
  auto* sql = obj != nullptr ? obj->if_contains("sql") : nullptr;
  auto* max_rows = obj != nullptr ? obj->if_contains("maxRows") : nullptr;
  auto* deadline = obj != nullptr ? obj->if_contains("deadlineMs") : nullptr;
  if (sql == nullptr || !sql->is_string() || max_rows == nullptr
      || !max_rows->is_int64() || max_rows->get_int64() < 0
      || deadline == nullptr || !deadline->is_int64()
      || deadline->get_int64() <= 0
      || sql->get_string().size() > executor_max_sql)
    return error_json("invalid_request", "malformed request frame");
  return run_statement(r, sql->get_string(), max_rows->get_int64(),
                       deadline->get_int64());
}

// -- the child's sandbox ------------------------------------------------------

bool set_limit(int resource, rlim_t soft, rlim_t hard) {
  rlimit lim{soft, hard};
  return ::setrlimit(resource, &lim) == 0;
}

/// The address space the process has mapped, in bytes (the first field of
/// /proc/self/statm, which is what RLIMIT_AS is checked against); -1 when
/// it cannot be read.
int64_t mapped_bytes() {
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char buf[128];
  auto n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0)
    return -1;
  int64_t pages = 0;
  auto [p, ec] = std::from_chars(buf, buf + n, pages);
  if (ec != std::errc{} || p == buf || pages <= 0)
    return -1;
  auto page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? pages * page : -1;
}

/// Points stderr at /dev/null when it is a regular file. Under
/// RLIMIT_FSIZE=0 a write to a regular file raises SIGXFSZ, and stderr is
/// the server's: when its log goes to a file, the first diagnostic an
/// allocator prints on a failed allocation ("tcmalloc: allocation failed")
/// would kill the executor instead of letting the allocation fail. Such a
/// write could never reach the file anyway (EFBIG). A terminal or a pipe
/// stays.
bool quiet_stderr_if_file() {
  struct stat st {};
  if (::fstat(2, &st) != 0 || !S_ISREG(st.st_mode))
    return true;
  int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0)
    return false;
  bool ok = ::dup2(null, 2) == 2;
  ::close(null);
  return ok;
}

/// The seccomp allowlist, installed once the database is open and the
/// PRNG seeded. Determined with `strace -f` over the sandbox tests, memory
/// bombs and the sql-guard corpus: after this point an executor made only
/// read (its socket), write (its socket), pread64 (the database), brk,
/// clock_gettime (CLOCK_PROCESS_CPUTIME_ID for cpuUs) and exit_group. The
/// list adds what the allocator may need under memory pressure (mmap and
/// mprotect without PROT_EXEC, munmap, mremap, madvise), gettimeofday (the
/// vDSO fallback), exit and rt_sigreturn, and write to stderr (a fatal
/// allocator message). Anything else kills the process (SIGSYS); found the
/// hard way: getpid (SQLite's first randomness, hence the early seed),
/// close and newfstatat (the connection's destructor, hence _exit). The
/// file-opening and file-probing calls fail with EPERM instead, so that
/// SQLite reports an error (VACUUM INTO, ATTACH, a journal probe) rather
/// than the process dying.
domain::error install_seccomp(int fd) {
  auto* ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (ctx == nullptr)
    return domain::make_error(domain::ec::internal, "seccomp_init failed");
  std::unique_ptr<void, void (*)(void*)> guard{
    ctx, [](void* c) { seccomp_release(c); }};
  int rc = 0;
  auto allow = [&](int nr) {
    if (rc == 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  };
  auto ufd = static_cast<scmp_datum_t>(fd);
  // The socket only: requests in, replies out (and stderr for a fatal
  // message of the allocator).
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 1,
                          SCMP_A0(SCMP_CMP_EQ, ufd));
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                          SCMP_A0(SCMP_CMP_EQ, ufd));
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                          SCMP_A0(SCMP_CMP_EQ, scmp_datum_t{2}));
  // The database file, already open.
  allow(SCMP_SYS(pread64));
  // Memory, never executable.
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  allow(SCMP_SYS(munmap));
  allow(SCMP_SYS(mremap));
  allow(SCMP_SYS(brk));
  allow(SCMP_SYS(madvise));
  // Time (the vDSO normally answers without a system call).
  allow(SCMP_SYS(clock_gettime)); // CLOCK_PROCESS_CPUTIME_ID: a real call
  allow(SCMP_SYS(gettimeofday));
  // Leaving.
  allow(SCMP_SYS(exit_group));
  allow(SCMP_SYS(exit));
  allow(SCMP_SYS(rt_sigreturn));
  // Opening or probing files fails instead of killing.
  for (int nr :
       {SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(creat),
        SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
        SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2),
        SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getcwd),
        SCMP_SYS(unlink), SCMP_SYS(unlinkat)})
    if (rc == 0 && nr >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
  if (rc != 0)
    return domain::make_error(domain::ec::internal,
                              "seccomp_rule_add failed: "
                                + std::string{std::strerror(-rc)});
  rc = seccomp_load(ctx);
  if (rc != 0)
    return domain::make_error(domain::ec::internal,
                              "seccomp_load failed: "
                                + std::string{std::strerror(-rc)});
  return {};
}

int setup_failed(int fd, std::string_view message) {
  send_json(fd, error_json("setup_failed", message));
  return 3;
}

int parse_int(std::string_view text, int64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && p == text.data() + text.size() ? 0 : -1;
}

} // namespace

// -- the child ----------------------------------------------------------------

domain::outcome<executor_options> parse_executor_args(int argc, char** argv) {
  executor_options o;
  auto bad = [](std::string msg) {
    return domain::make_error(domain::ec::invalid_request,
                              "executor: " + std::move(msg));
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--unguarded") {
      o.settings.unguarded = true;
      continue;
    }
    if (i + 1 >= argc)
      return bad("missing value for " + std::string{arg});
    std::string_view value = argv[++i];
    int64_t n = 0;
    if (arg == "--db") {
      o.settings.db_path = value;
    } else if (arg == "--catalog") {
      o.settings.catalog_path = value;
    } else if (arg == "--probe-open") {
      o.probe_open = value;
    } else if (parse_int(value, n) != 0 || n < 0) {
      return bad("bad number for " + std::string{arg});
    } else if (arg == "--fd") {
      o.fd = static_cast<int>(n);
    } else if (arg == "--parent") {
      o.parent = static_cast<pid_t>(n);
    } else if (arg == "--memory-mb") {
      o.settings.memory_mb = n;
    } else if (arg == "--heap-mb") {
      o.settings.heap_limit_mb = n;
    } else if (arg == "--cpu-seconds") {
      o.settings.cpu_seconds = static_cast<int32_t>(n);
    } else {
      return bad("unknown option " + std::string{arg});
    }
  }
  if (o.settings.db_path.empty() || o.fd < 0 || o.parent <= 0)
    return bad("--db, --fd and --parent are required");
  return o;
}

int executor_main(const executor_options& opts) {
  int fd = opts.fd;
  auto& cfg = opts.settings;
  // Die with the parent; if it is already gone, the signal was missed.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != opts.parent)
    return 3;
  ::prctl(PR_SET_DUMPABLE, 0);
  // No privilege gain through exec from here on (libseccomp sets it too).
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return setup_failed(fd, "PR_SET_NO_NEW_PRIVS failed");
  auto self_pid = static_cast<int64_t>(::getpid());
  // Every inherited descriptor but stdin/stdout/stderr and the socket.
  if (fd > 3)
    ::syscall(SYS_close_range, 3u, static_cast<unsigned>(fd - 1), 0u);
  if (::syscall(SYS_close_range, static_cast<unsigned>(fd + 1), ~0u, 0u) != 0)
    return setup_failed(fd, "close_range failed");
  if (!quiet_stderr_if_file())
    return setup_failed(fd, "cannot point stderr at /dev/null");
  auto mb = [](int64_t n) { return static_cast<rlim_t>(n) << 20; };
  auto cpu = static_cast<rlim_t>(std::max(cfg.cpu_seconds, 1));
  // RLIMIT_AS counts every mapping, and before it has allocated anything
  // the process already maps about 70 MiB: the candor binary and its
  // shared libraries (30 MiB of them ICU's data file, mapped but never
  // read), tcmalloc's first spans. A limit of `memory_mb` in total would
  // leave nothing to allocate below that (every executorMemoryMb up to 64
  // failed that way), and would shift with every library the binary
  // links. So `memory_mb` is what the executor may map on top of its image.
  auto image = mapped_bytes();
  if (image < 0)
    return setup_failed(fd, "cannot read /proc/self/statm");
  auto as_limit = static_cast<rlim_t>(image) + mb(cfg.memory_mb);
  if (!set_limit(RLIMIT_CORE, 0, 0) || !set_limit(RLIMIT_FSIZE, 0, 0)
      || !set_limit(RLIMIT_NPROC, 0, 0) || !set_limit(RLIMIT_MEMLOCK, 0, 0)
      || !set_limit(RLIMIT_CPU, cpu, cpu + 1)
      || !set_limit(RLIMIT_AS, as_limit, as_limit))
    return setup_failed(fd, "setrlimit failed");
  // SQLite's heap limit needs memory statistics, set before initialising.
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);
  if (sqlite3_initialize() != SQLITE_OK)
    return setup_failed(fd, "sqlite3_initialize failed");
  sqlite3_hard_heap_limit64(mb(cfg.heap_limit_mb));
  sqlite3_soft_heap_limit64(mb(cfg.heap_limit_mb) / 2);
  // The process has one thread: no connection mutex.
  auto db = data::open_read_only(cfg.db_path, true, true);
  if (!db)
    return setup_failed(fd, db.err().message);
  if (auto err = data::harden_connection(*db, data::sql_limits{}))
    return setup_failed(fd, err.message);
  runner r;
  r.db = db->handle();
  r.unguarded = cfg.unguarded;
  r.heap_mb = cfg.heap_limit_mb;
  r.memory_mb = cfg.memory_mb;
  std::optional<data::sql_authorizer> auth;
  if (!cfg.unguarded) {
    auto cat = cfg.catalog_path.empty()
                 ? data::catalog::load_default()
                 : data::catalog::load(cfg.catalog_path);
    if (!cat)
      return setup_failed(fd, cat.err().message);
    auto made = data::sql_authorizer::for_connection(
      *db, {cat->allowed_columns(), data::default_sql_functions()});
    if (!made)
      return setup_failed(fd, made.err().message);
    auth.emplace(std::move(*made));
    auth->install(r.db);
    r.auth = &*auth;
  }
  std::optional<data::sql_guard> guard;
  if (!cfg.unguarded) {
    auto cat = cfg.catalog_path.empty()
                 ? data::catalog::load_default()
                 : data::catalog::load(cfg.catalog_path);
    if (!cat)
      return setup_failed(fd, cat.err().message);
    auto g = data::sql_guard::open(
      cfg.db_path, {cat->allowed_columns(), data::default_sql_functions()},
      data::sql_limits{}, true);
    if (!g)
      return setup_failed(fd, g.err().message);
    guard.emplace(std::move(*g));
    r.guard = &*guard;
  }
  sqlite3_progress_handler(r.db, 1000, progress_callback, &r);
  // Seed SQLite's PRNG now: its first use reads /dev/urandom and getpid.
  unsigned char seed_probe[4];
  sqlite3_randomness(sizeof seed_probe, seed_probe);
  // The database (and the catalog) are open: no new descriptors from now.
  if (!set_limit(RLIMIT_NOFILE, 8, 8))
    return setup_failed(fd, "setrlimit(RLIMIT_NOFILE) failed");
  if (auto err = install_seccomp(fd))
    return setup_failed(fd, err.message);
  if (!opts.probe_open.empty()) {
    auto probe
      = ::open(opts.probe_open.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    json::object obj;
    obj["probe"] = probe >= 0 ? "opened" : "denied";
    obj["errno"] = probe >= 0 ? 0 : errno;
    ::_exit(send_json(fd, obj) ? 0 : 1);
  }
  json::object ready;
  ready["ready"] = true;
  ready["pid"] = self_pid;
  // From here on, leave with _exit: destructors would close descriptors
  // and probe files, which the filter does not allow.
  if (!send_json(fd, ready))
    ::_exit(1);
  frame_reader reader;
  for (;;) {
    auto frame = reader.next(fd, executor_max_request);
    if (!frame)
      ::_exit(0); // the parent closed the socket (or sent garbage)
    // An allocation outside SQLite that fails at the memory limit (the
    // rows being encoded) answers "out of memory" like SQLite's own; left
    // uncaught it would end the process (std::terminate).
    std::string out;
    try {
      out = make_frame(json::serialize(serve_frame(r, *frame)));
    } catch (const std::bad_alloc&) {
      out.clear();
      out.shrink_to_fit();
      out = make_frame(json::serialize(
        error_json("sql_failed", out_of_memory_text(r.heap_mb, r.memory_mb))));
    }
    if (!write_all(fd, out))
      ::_exit(1);
  }
}

} // namespace candor::data
