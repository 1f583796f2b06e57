// Test helper: runs the real candor binaries as child processes, with
// temporary directories and captured stderr.

#include "tests/support/process.hpp"
#include "tests/support/sales_db.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace candor::test {

namespace fs = std::filesystem;

int time_scale() {
  static const int scale = [] {
    const char* v = std::getenv("TEST_TIME_SCALE");
    int n = v != nullptr ? std::atoi(v) : 1;
    return n >= 1 && n <= 20 ? n : 1;
  }();
  return scale;
}

std::string candor_binary() {
  if (auto* p = std::getenv("CANDOR_TEST_BINARY"); p && *p)
    return p;
  return CANDOR_BINARY;
}

std::string candor_eval_binary() {
  if (auto* p = std::getenv("CANDOR_TEST_EVAL_BINARY"); p && *p)
    return p;
  return CANDOR_EVAL_BINARY;
}

std::string make_temp_dir(const std::string& prefix) {
  std::string templ
    = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return {};
  return buf.data();
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  if (!path.empty())
    fs::remove_all(path, ec);
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The environment of a child: ours without CANDOR_* (tests must not depend
/// on the developer's shell), plus `extra`. The scripted provider unless
/// `extra` names one: the end-to-end tests replay the recorded fixtures.
std::vector<std::string>
child_env(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "CANDOR_", 7) != 0)
      out.emplace_back(*e);
  if (!extra.count("CANDOR_LLM_PROVIDER"))
    out.emplace_back("CANDOR_LLM_PROVIDER=fake");
  for (auto& [k, v] : extra)
    out.push_back(k + "=" + v);
  return out;
}

pid_t spawn(std::string bin, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env,
            const std::string& out_path, const std::string& err_path) {
  std::vector<char*> argv;
  argv.push_back(bin.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto envs = child_env(env);
  std::vector<char*> envp;
  for (auto& e : envs)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  if (posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), envp.data())
      != 0)
    pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int wait_exit(pid_t pid, std::chrono::milliseconds within) {
  auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    int status = 0;
    auto r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status))
        return WEXITSTATUS(status);
      if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
      return -1;
    }
    if (r < 0)
      return -1;
    if (std::chrono::steady_clock::now() > deadline)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

} // namespace

namespace {

run_result run_to_end(std::string bin, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env,
                      std::chrono::seconds timeout) {
  run_result r;
  auto dir = make_temp_dir("candor-run");
  auto pid = spawn(std::move(bin), args, env, dir + "/out", dir + "/err");
  if (pid > 0) {
    r.exit_code = wait_exit(pid, timeout);
    if (r.exit_code == -1) {
      ::kill(pid, SIGKILL);
      wait_exit(pid, std::chrono::seconds{5});
    }
  }
  r.out = slurp(dir + "/out");
  r.err = slurp(dir + "/err");
  remove_tree(dir);
  return r;
}

} // namespace

run_result run_candor(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env,
                      std::chrono::seconds timeout) {
  return run_to_end(candor_binary(), args, env, timeout);
}

run_result run_program(const std::string& program,
                       const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env,
                       std::chrono::seconds timeout) {
  return run_to_end(program, args, env, timeout);
}

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    auto colon = rest.find(':');
    auto dir = rest.substr(0, colon);
    rest = colon == rest.npos ? std::string_view{} : rest.substr(colon + 1);
    if (dir.empty())
      continue;
    auto candidate = std::string{dir} + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

run_result run_candor_eval(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env,
                           std::chrono::seconds timeout) {
  return run_to_end(candor_eval_binary(), args, env, timeout);
}

server_process::server_process(std::map<std::string, std::string> env,
                               std::vector<std::string> extra_args)
    : env_(std::move(env)), extra_args_(std::move(extra_args)) {
  dir_ = make_temp_dir("candor-e2e");
  data_dir_ = dir_ + "/var";
  log_path_ = dir_ + "/stderr.log";
}

server_process::~server_process() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait_exit(pid_, std::chrono::seconds{10});
  }
  remove_tree(dir_);
}

bool server_process::start(std::chrono::seconds within) {
  if (provide_sales_ && !fs::exists(data_dir_ + "/sales.db"))
    provide_sales_db(data_dir_);
  std::vector<std::string> args{"serve", "--port", "0", "--data-dir",
                                data_dir_};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  pid_ = spawn(candor_binary(), args, env_, dir_ + "/stdout.log", log_path_);
  if (pid_ <= 0)
    return false;
  auto deadline = std::chrono::steady_clock::now() + within * time_scale();
  while (std::chrono::steady_clock::now() < deadline) {
    auto text = slurp(log_path_);
    auto at = text.find("\"event\":\"listening\"");
    if (at != std::string::npos) {
      auto p = text.find("\"port\":", at);
      if (p != std::string::npos) {
        port_ = static_cast<uint16_t>(std::atoi(text.c_str() + p + 7));
        return port_ != 0;
      }
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return false;
}

int server_process::stop(int sig, std::chrono::seconds within) {
  if (pid_ <= 0)
    return -1;
  ::kill(pid_, sig);
  auto rc = wait_exit(pid_, within * time_scale());
  if (rc != -1)
    pid_ = -1;
  return rc;
}

std::string server_process::log() const {
  return slurp(log_path_);
}

} // namespace candor::test
