#pragma once

// Test helper: a temporary directory removed with its contents.

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace candor::test {

/// A fresh directory under the system temp dir, removed with its contents
/// when the object goes away.
struct temp_dir {
  std::filesystem::path path;

  explicit temp_dir(const std::string& prefix = "candor") {
    auto pattern
      = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX"))
          .string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }

  std::string file(const std::string& name) const {
    return (path / name).string();
  }
};

} // namespace candor::test
