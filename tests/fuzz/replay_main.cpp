// Runs a fuzz target over files without libFuzzer: every file named on the
// command line, and every file in every directory named (sorted, so runs are
// reproducible). Built with the normal compiler, this is how CTest replays the
// seed corpora and the crash regressions on every run; built with clang and
// -fsanitize=fuzzer the same target file gets libFuzzer's main instead.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p{argv[i]};
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n",
                   argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files\n");
    return 2;
  }
  for (auto& f : files) {
    std::ifstream in{f, std::ios::binary};
    std::string bytes{std::istreambuf_iterator<char>{in}, {}};
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
  }
  std::printf("replay: %zu inputs, no crash\n", files.size());
  return 0;
}
