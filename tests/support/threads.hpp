#pragma once

// Test helper: finds this process's threads by name through /proc.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace candor::test {

/// The /proc/self/task/<tid> directories of this process's threads named
/// `name` (a thread's name is its `comm`, at most 15 characters).
inline std::vector<std::filesystem::path>
threads_named(const std::string& name) {
  std::vector<std::filesystem::path> out;
  for (const auto& task :
       std::filesystem::directory_iterator{"/proc/self/task"}) {
    std::ifstream comm{task.path() / "comm"};
    std::string line;
    std::getline(comm, line);
    if (line == name)
      out.push_back(task.path());
  }
  return out;
}

} // namespace candor::test
