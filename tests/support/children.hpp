#pragma once

// Watching processes from a test: the executor children of a server, whether
// a process still runs, and waiting for a condition.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <sys/types.h>

namespace candor::test {

/// Children of `parent` whose command line mentions "executor", with their
/// state letter (R, S, Z, ...).
inline std::map<pid_t, char> executors_of(pid_t parent) {
  std::map<pid_t, char> out;
  for (auto& e : std::filesystem::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != name.npos)
      continue;
    std::ifstream stat{e.path() / "stat"};
    std::string line;
    if (!std::getline(stat, line))
      continue;
    auto close = line.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest{line.substr(close + 2)};
    char state = '?';
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent)
      continue;
    std::ifstream cmd{e.path() / "cmdline"};
    std::string cmdline{std::istreambuf_iterator<char>{cmd}, {}};
    if (cmdline.find("executor") != std::string::npos)
      out[static_cast<pid_t>(std::stol(name))] = state;
  }
  return out;
}

/// True when `pid` no longer runs (gone, or a zombie left to a parent that
/// does not reap).
inline bool not_running(pid_t pid) {
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  std::string line;
  if (!std::getline(stat, line))
    return true;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size()
         && line[close + 2] == 'Z';
}

template <class Pred>
bool eventually(Pred pred,
                std::chrono::milliseconds within = std::chrono::seconds{10}) {
  auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return pred();
}

} // namespace candor::test
