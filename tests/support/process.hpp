#pragma once

// Test helper: declares running the real candor binaries as child
// processes for end-to-end tests.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

/// Runs the real `candor` binary as a child process for end-to-end tests:
/// a fresh temporary data directory, stderr captured to a file, the port
/// read from the "listening" log line. Everything is cleaned up on
/// destruction (the child is killed if still running).
namespace candor::test {

/// Paths of the candor and candor-eval binaries under test.
std::string candor_binary();

/// How many times longer a server may take to start or stop than the
/// tests' own bounds: TEST_TIME_SCALE (1 to 20, default 1), which
/// eval/sanitize.sh sets for its slower builds.
int time_scale();
std::string candor_eval_binary();

/// A fresh temporary directory (removed by remove_tree).
std::string make_temp_dir(const std::string& prefix);
void remove_tree(const std::string& path);

struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs `candor args...` to completion with extra environment variables.
run_result run_candor(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env = {},
                      std::chrono::seconds timeout = std::chrono::seconds{60});

/// Runs `candor-eval args...` the same way.
run_result run_candor_eval(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {},
                           std::chrono::seconds timeout
                           = std::chrono::seconds{60});

/// Runs any program (an absolute path) to completion the same way.
run_result run_program(const std::string& program,
                       const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env = {},
                       std::chrono::seconds timeout = std::chrono::seconds{60});

/// The absolute path of `name` found in $PATH; empty when it is not there.
std::string find_in_path(const std::string& name);

class server_process {
public:
  explicit server_process(std::map<std::string, std::string> env = {},
                          std::vector<std::string> extra_args = {});
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  /// Starts `candor serve --port 0 --data-dir <tmp>` and waits until it
  /// listens. False (with log()) when it did not start within `within`.
  /// The data directory gets a ready sales database (provide_sales_db)
  /// unless generate_sales() was called first.
  bool start(std::chrono::seconds within = std::chrono::seconds{30});

  /// Sends `sig` and waits for the exit; returns the exit code (128+signal
  /// when killed by a signal, -1 on timeout).
  int stop(int sig, std::chrono::seconds within = std::chrono::seconds{30});

  uint16_t port() const noexcept {
    return port_;
  }
  const std::string& data_dir() const noexcept {
    return data_dir_;
  }
  pid_t pid() const noexcept {
    return pid_;
  }

  /// The next start() generates the sales database itself, as a fresh
  /// installation does.
  void generate_sales() noexcept {
    provide_sales_ = false;
  }

  /// Everything the server wrote to stderr so far.
  std::string log() const;

private:
  std::map<std::string, std::string> env_;
  std::vector<std::string> extra_args_;
  std::string dir_;
  std::string data_dir_;
  std::string log_path_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  bool provide_sales_ = true;
};

} // namespace candor::test
