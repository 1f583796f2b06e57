// The parent side of an executor process: starting it sandboxed, sending
// one statement, enforcing the deadline with SIGKILL and reaping it.

#include "data/sql/executor.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "domain/records.hpp"
#include "domain/text.hpp"
#include "data/sql/executor_io.hpp"
#include "data/sql/executor_wire.hpp"

namespace candor::data {

namespace {

namespace json = boost::json;
using namespace executor_io;
using namespace executor_wire;

std::string describe_status(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    auto sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + " (SIG"
           + (name != nullptr ? name : "?") + ")";
  }
  return "ended with status " + std::to_string(status);
}

} // namespace

std::string executor_limit_for_signal(int sig, int32_t cpu_seconds) {
  switch (sig) {
    case SIGXCPU:
      return "CPU time limit (RLIMIT_CPU " + std::to_string(cpu_seconds)
             + " s over the life of the process, sql.executorCpuSeconds)";
    case SIGXFSZ:
      return "file-size limit (RLIMIT_FSIZE 0: it may not write to a file)";
    case SIGSYS:
      return "system-call filter (seccomp: a call outside its allowlist)";
    default: return {};
  }
}

namespace {

domain::error executor_error(std::string message) {
  return domain::make_error(domain::ec::sql_executor_failed,
                            std::move(message));
}

} // namespace

// -- binary -------------------------------------------------------------------

std::string default_executor_binary() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "/proc/self/exe";
  if (self.filename() == "candor")
    return self.string();
  auto sibling = self.parent_path() / "candor";
  if (std::filesystem::is_regular_file(sibling, ec))
    return sibling.string();
  return self.string();
}

// -- the parent side ----------------------------------------------------------

domain::outcome<executor_process>
executor_process::start(const executor_settings& settings,
                        const std::string& probe, std::string& first) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return executor_error(std::string{"socketpair: "} + std::strerror(errno));
  executor_process proc;
  proc.fd_ = sv[0];
  proc.cpu_seconds_ = std::max(settings.cpu_seconds, 1);
  int child_end = sv[1];
  if (child_end == child_socket_fd) {
    // dup2 onto itself would keep FD_CLOEXEC; move it out of the way.
    child_end = ::fcntl(sv[1], F_DUPFD_CLOEXEC, child_socket_fd + 1);
    ::close(sv[1]);
    if (child_end < 0)
      return executor_error(std::string{"fcntl: "} + std::strerror(errno));
  }
  std::vector<std::string> args = {
    settings.executable,
    "executor",
    "--db",
    settings.db_path,
    "--fd",
    std::to_string(child_socket_fd),
    "--parent",
    std::to_string(::getpid()),
    "--memory-mb",
    std::to_string(settings.memory_mb),
    "--heap-mb",
    std::to_string(settings.heap_limit_mb),
    "--cpu-seconds",
    std::to_string(settings.cpu_seconds),
  };
  if (!settings.catalog_path.empty()) {
    args.emplace_back("--catalog");
    args.emplace_back(settings.catalog_path);
  }
  if (settings.unguarded)
    args.emplace_back("--unguarded");
  if (!probe.empty()) {
    args.emplace_back("--probe-open");
    args.emplace_back(probe);
  }
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  // Nothing the executor runs may write into the server's output; stderr
  // stays for its setup diagnostics (JSON log lines).
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, child_end, child_socket_fd);
  posix_spawn_file_actions_addclosefrom_np(&fa, child_socket_fd + 1);
  sigset_t mask;
  sigemptyset(&mask);
  posix_spawnattr_setsigmask(&attr, &mask);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
                  SIGCHLD, SIGXCPU, SIGXFSZ, SIGSYS, SIGALRM})
    sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  auto rc = ::posix_spawn(&pid, settings.executable.c_str(), &fa, &attr,
                          argv.data(), envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(child_end);
  if (rc != 0)
    return executor_error("cannot start " + settings.executable + ": "
                          + std::strerror(rc));
  proc.pid_ = pid;
  auto st = read_frame(proc.fd_, first, 64 * 1024,
                       clock_type::now() + settings.start_timeout, -1);
  if (st != read_status::ok) {
    auto how = proc.kill();
    return executor_error("the executor did not start (" + how + ")");
  }
  return proc;
}

domain::outcome<std::string>
executor_process::probe_open(const executor_settings& settings,
                             const std::string& path) {
  std::string frame;
  auto proc = start(settings, path, frame);
  if (!proc)
    return proc.err();
  proc->reap();
  return frame;
}

domain::outcome<executor_process>
executor_process::spawn(const executor_settings& settings) {
  std::string frame;
  auto started = start(settings, {}, frame);
  if (!started)
    return started.err();
  auto& proc = *started;
  auto pid = proc.pid_;
  std::error_code ec;
  auto doc = json::parse(frame, ec);
  auto* obj = ec ? nullptr : doc.if_object();
  if (obj != nullptr && obj->contains("error")) {
    auto* msg = obj->if_contains("message");
    std::string text = msg != nullptr && msg->is_string()
                         ? std::string{msg->get_string()}
                         : "unknown";
    proc.kill();
    return executor_error("executor setup failed: " + text);
  }
  auto* ready = obj != nullptr ? obj->if_contains("ready") : nullptr;
  auto* cpid = obj != nullptr ? obj->if_contains("pid") : nullptr;
  if (ready == nullptr || !ready->is_bool() || !ready->get_bool()
      || cpid == nullptr || !cpid->is_int64() || cpid->get_int64() != pid) {
    proc.kill();
    return executor_error("the executor sent an invalid ready frame");
  }
  return std::move(proc);
}

executor_process::executor_process(executor_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), fd_(std::exchange(other.fd_, -1)),
      cpu_us_(std::exchange(other.cpu_us_, 0)),
      cpu_seconds_(other.cpu_seconds_), last_signal_(other.last_signal_) {
  // nop
}

executor_process&
executor_process::operator=(executor_process&& other) noexcept {
  if (this != &other) {
    kill();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    cpu_us_ = std::exchange(other.cpu_us_, 0);
    cpu_seconds_ = other.cpu_seconds_;
    last_signal_ = other.last_signal_;
  }
  return *this;
}

executor_process::~executor_process() {
  kill();
}

std::string executor_process::reap() {
  std::string how = "not running";
  if (pid_ > 0) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    how = r == pid_ ? describe_status(status) : "already reaped";
    last_signal_ = r == pid_ && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    pid_ = -1;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  return how;
}

domain::error executor_process::lost(std::string_view what,
                                     const std::string& how) const {
  auto limit = executor_limit_for_signal(last_signal_, cpu_seconds_);
  if (!limit.empty())
    return executor_error(std::string{executor_limit_prefix} + limit
                          + " and was " + how);
  return executor_error(std::string{what} + " (" + how + ")");
}

std::string executor_process::kill() {
  if (pid_ > 0)
    ::kill(pid_, SIGKILL);
  return reap();
}

bool executor_process::check_gone() {
  if (pid_ <= 0)
    return true;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) == 0)
    return false;
  // Idle executors send nothing: data or a hang-up means it is unusable.
  kill();
  return true;
}

namespace {

/// True when process `pid` is stopped (state T or t in /proc/PID/stat).
bool stopped(pid_t pid) {
  if (pid <= 0)
    return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  auto* f = std::fopen(path, "re");
  if (f == nullptr)
    return false;
  char buf[512];
  auto n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string_view stat{buf, n};
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses.
  auto close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size())
    return false;
  auto state = stat[close + 2];
  return state == 'T' || state == 't';
}

} // namespace

domain::outcome<domain::sql_exec_result>
executor_process::run(const domain::sql_exec_request& req,
                      std::chrono::milliseconds deadline, int wake_fd) {
  if (pid_ <= 0)
    return executor_error("no executor process");
  auto until = clock_type::now() + deadline;
  json::object obj;
  obj["sql"] = req.sql;
  obj["maxRows"] = static_cast<int64_t>(std::max(req.max_rows, 0));
  obj["deadlineMs"]
    = static_cast<int64_t>(std::max<int64_t>(deadline.count(), 1));
  if (!write_frame(fd_, make_frame(json::serialize(obj)), until)) {
    auto how = kill();
    return lost("cannot send to the executor", how);
  }
  std::string frame;
  switch (read_frame(fd_, frame, executor_max_reply, until, wake_fd)) {
    case read_status::ok: break;
    case read_status::timeout:
      if (stopped(pid_)) {
        // Stopped (SIGSTOP, a debugger), not slow: the statement is not
        // at fault, and the sandbox runs it again on a healthy executor.
        auto how = kill();
        return executor_error("the executor process was stopped and did "
                              "not answer within "
                              + std::to_string(deadline.count()) + " ms (" + how
                              + ")");
      }
      kill();
      return domain::make_error(domain::ec::sql_timeout,
                                "the statement ran longer than "
                                  + std::to_string(deadline.count())
                                  + " ms; its executor was killed");
    case read_status::wake:
      kill();
      return domain::make_error(domain::ec::shutting_down,
                                "the SQL sandbox is stopping");
    case read_status::closed: {
      // A read error is not always an exit: kill first so that the wait
      // cannot block (a signal to an unreaped child is harmless, and its
      // status still tells how it ended).
      auto how = kill();
      return lost("the executor process died", how);
    }
    case read_status::too_large: {
      kill();
      return executor_error("the executor's reply exceeds "
                            + std::to_string(executor_max_reply) + " bytes");
    }
  }
  std::error_code ec;
  auto doc = json::parse(frame, ec);
  auto* reply = ec ? nullptr : doc.if_object();
  if (reply == nullptr) {
    kill();
    return executor_error("the executor sent a malformed reply");
  }
  if (auto* err = reply->if_contains("error")) {
    auto* msg = reply->if_contains("message");
    std::string text = msg != nullptr && msg->is_string()
                         ? std::string{msg->get_string()}
                         : std::string{};
    if (err->is_string() && err->get_string() == "sql_failed")
      return domain::make_error(domain::ec::sql_failed, std::move(text));
    if (err->is_string() && err->get_string() == "invalid_request")
      return domain::make_error(domain::ec::invalid_request, std::move(text));
    kill();
    return executor_error("the executor sent an unknown error");
  }
  if (auto* cpu = reply->if_contains("cpuUs"); cpu && cpu->is_int64())
    cpu_us_ = cpu->get_int64();
  auto res = parse_result(*reply, req.max_rows);
  if (!res) {
    kill();
    return executor_error("the executor sent a malformed result");
  }
  return std::move(*res);
}

} // namespace candor::data
