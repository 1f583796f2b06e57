#pragma once

// The executor process that runs model-written SQL: its limits, settings,
// wire protocol and the parent-side handle.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "domain/sql/exec.hpp"
#include "domain/error.hpp"

/// The executor process: the fourth defence layer in front of model-written
/// SQL (DESIGN.md §5). A separate, exec'd `candor executor` process that
/// opens the sales database read-only and immutable, applies the connection
/// defences of the validation connection (data::harden_connection, the same
/// data::sql_authorizer), checks every statement with its own
/// data::sql_guard (statement shape and the bytecode audit, on a second
/// connection), refuses NUL bytes, restricts itself (close_range, no-new-privs,
/// parent-death signal, setrlimit, hard heap limit) and installs a seccomp
/// allowlist before it reads its first statement. It then answers one
/// statement at a time over a socket.
///
/// Protocol (both directions): a frame is a 4-byte big-endian length and
/// that many bytes of one JSON object. The executor first sends
/// `{"ready": true, "pid"}` (or `{"error", "message"}` and exits when its
/// setup failed). Then, per request `{"sql", "maxRows", "deadlineMs"}`, it
/// replies `{"columns", "rows", "rowCount", "truncated", "elapsedUs",
/// "cpuUs"}` (cpuUs: the process's CPU time so far) or
/// `{"error": "sql_failed"|"invalid_request", "message"}`. A cell is null, a
/// number, a string (cut to `max_cell_chars` code points), `{"blob": N}` or
/// `{"inf": 1|-1}` (an infinite real, which JSON cannot spell).
///
/// The parent side (`executor_process`) enforces the deadline with SIGKILL
/// and treats anything unexpected from the child (a bad frame, a frame too
/// large, the socket closing) as the child's failure: it is killed and
/// reaped, and nothing partial is passed on.
namespace candor::data {

// -- limits -------------------------------------------------------------------

/// Largest request frame (the statement plus a little JSON).
inline constexpr uint32_t executor_max_request = 256 * 1024;

/// Largest reply frame the parent accepts.
inline constexpr uint32_t executor_max_reply = 16 * 1024 * 1024;

/// The executor stops adding rows (and sets `truncated`) once the encoded
/// rows pass this many bytes, well below `executor_max_reply`.
inline constexpr size_t executor_reply_budget = 4 * 1024 * 1024;

/// Text cells are cut to this many UTF-8 code points.
inline constexpr size_t max_cell_chars = 1000;

/// Longest accepted statement, in bytes (SQLITE_LIMIT_SQL_LENGTH too).
inline constexpr size_t executor_max_sql = 100000;

/// How an `sql_executor_failed` message starts when the executor was
/// killed by one of its limits (RLIMIT_CPU, RLIMIT_FSIZE, the seccomp
/// filter); the rest names the limit, the key that sets it where there is
/// one, and the signal. sql_execute shows such a message to the user.
inline constexpr std::string_view executor_limit_prefix
  = "the executor reached its ";

/// True for an error of an executor killed by one of its limits.
inline bool is_executor_limit(const domain::error& err) {
  return err.code == domain::ec::sql_executor_failed
         && err.message.rfind(executor_limit_prefix, 0) == 0;
}

/// The limit a signal that ended an executor stands for, e.g. "CPU time
/// limit (RLIMIT_CPU 10 s, sql.executorCpuSeconds)"; empty for a signal
/// that is no limit's (SIGKILL, SIGSEGV, ...).
std::string executor_limit_for_signal(int sig, int32_t cpu_seconds);

// -- settings -----------------------------------------------------------------

/// How to start one executor process.
struct executor_settings {
  /// The binary that has the `executor` subcommand (see
  /// `default_executor_binary`).
  std::string executable;
  /// The sales database.
  std::string db_path;
  /// The catalog its allowlist comes from; empty: the built-in one.
  std::string catalog_path;
  /// Address space the process may map on top of its own image (the
  /// binary and its libraries, about 70 MiB): RLIMIT_AS is set to what is
  /// mapped when the limits are applied plus this.
  int64_t memory_mb = 256;
  /// sqlite3_hard_heap_limit64 (the soft limit is half of it).
  int64_t heap_limit_mb = 64;
  /// RLIMIT_CPU (soft; the hard limit is one second more).
  int32_t cpu_seconds = 10;
  /// TESTS ONLY: no authorizer and no statement-shape checks (read-only,
  /// single statement, no EXPLAIN), so that the process-level layer and the
  /// connection settings are tested alone. Never set from configuration.
  bool unguarded = false;
  /// How long the process may take to report that it is ready.
  std::chrono::milliseconds start_timeout{10000};
};

/// The `candor` binary to exec: the running executable when it is called
/// `candor`, else a `candor` next to it (the test and benchmark binaries
/// live beside it in the build directory), else the running executable.
std::string default_executor_binary();

// -- the child ----------------------------------------------------------------

/// Options of the hidden `candor executor` subcommand.
struct executor_options {
  executor_settings settings;
  /// The connected socket the executor talks on.
  int fd = -1;
  /// The pid of the process that spawned it (checked after setting the
  /// parent-death signal).
  pid_t parent = 0;
  /// TESTS ONLY: after the sandbox is in place, try to create this file and
  /// report what happened instead of serving statements.
  std::string probe_open;
};

/// Parses `executor --db PATH --fd N --parent PID [--memory-mb N]
/// [--heap-mb N] [--cpu-seconds N] [--unguarded] [--probe-open PATH]`
/// (`argv[0]` is "executor").
domain::outcome<executor_options> parse_executor_args(int argc, char** argv);

/// The executor's main: sets up the sandbox and serves statements until the
/// socket closes. Returns the process exit code (0 when the parent closed
/// the socket). Only ever run in a freshly exec'd process.
int executor_main(const executor_options& opts);

// -- the parent side ----------------------------------------------------------

/// One running executor process, owned by one thread at a time. Move-only;
/// the destructor kills and reaps the process.
class executor_process {
public:
  /// Starts `settings.executable executor ...` with posix_spawn (glibc
  /// implements it with CLONE_VM|CLONE_VFORK plus exec, safe from a
  /// threaded process): an empty environment, default signal dispositions,
  /// an empty signal mask, stdin from /dev/null, the socket on fd 3 and
  /// every other descriptor above 2 closed. Waits for the ready frame.
  ///
  /// The child's parent-death signal follows the *calling thread*: spawn
  /// from a thread that outlives the process.
  static domain::outcome<executor_process>
  spawn(const executor_settings& settings);

  executor_process() = default;
  executor_process(executor_process&& other) noexcept;
  executor_process& operator=(executor_process&& other) noexcept;
  executor_process(const executor_process&) = delete;
  executor_process& operator=(const executor_process&) = delete;
  ~executor_process();

  /// True while there is a process (spawned, not yet reaped).
  bool running() const noexcept {
    return pid_ > 0;
  }

  pid_t pid() const noexcept {
    return pid_;
  }

  /// CPU time the process had used after its last successful statement
  /// (RLIMIT_CPU counts the whole life of the process, so a long-lived
  /// executor must be replaced before it reaches the limit).
  int64_t cpu_us() const noexcept {
    return cpu_us_;
  }

  /// True when the process has gone away while idle (socket hung up); it
  /// is reaped then.
  bool check_gone();

  /// Runs one statement with `deadline` of wall-clock time from now. The
  /// process is SIGKILLed and reaped (so `running()` turns false) on
  /// `sql_timeout` (the deadline passed), `sql_executor_failed` (it died,
  /// sent something invalid or too large) and `shutting_down` (`wake_fd`
  /// became readable: the owner is stopping). `sql_failed` and
  /// `invalid_request` (SQLite or the executor refused the statement)
  /// leave it running. A process killed by one of its limits is
  /// `sql_executor_failed` with a message that starts with
  /// `executor_limit_prefix` and names the limit.
  domain::outcome<domain::sql_exec_result>
  run(const domain::sql_exec_request& req, std::chrono::milliseconds deadline,
      int wake_fd = -1);

  /// TESTS ONLY: starts an executor with `--probe-open path`, which sets up
  /// its whole sandbox and then tries to create `path`. Returns the
  /// executor's report, e.g. `{"probe":"denied","errno":1}`.
  static domain::outcome<std::string>
  probe_open(const executor_settings& settings, const std::string& path);

  /// SIGKILLs and reaps the process (no-op when none). Returns how it
  /// ended, e.g. "killed by signal 9" or "exited with status 0".
  std::string kill();

private:
  /// Spawns the process and reads its first frame into `first`.
  static domain::outcome<executor_process>
  start(const executor_settings& settings, const std::string& probe,
        std::string& first);

  /// Reaps after the process is known to be dying; sets pid_ = -1 and
  /// last_signal_.
  std::string reap();

  /// The error for a process that went away during a statement (`how`:
  /// what kill() returned): names the limit when a limit's signal ended it.
  domain::error lost(std::string_view what, const std::string& how) const;

  pid_t pid_ = -1;
  int fd_ = -1;
  int64_t cpu_us_ = 0;
  /// RLIMIT_CPU of the process (for the message when it is reached).
  int32_t cpu_seconds_ = 0;
  /// The signal that ended the last reaped process (0: none).
  int last_signal_ = 0;
};

} // namespace candor::data
