// The code serves any company's documents and data: the sample company's
// name and proper nouns appear only in its data (conf/, data/kb/,
// fixtures/, eval/ sets) and in the generator of its sample database, not
// in the code that answers.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"

namespace fs = std::filesystem;

namespace {

/// The sample world's names: the company, its club, its stores and its
/// product lines.
const std::vector<std::string> sample_names{
  "kestrel",   "cycle works", "utrecht",   "ghent",    "strada",
  "ridgeline", "volt_city",   "volt_trek", "fledgling"};

/// The generator of the embedded sample database (`candor seed`): it is the
/// sample, as data/kb is.
bool is_sample_generator(const fs::path& p) {
  auto rel = p.lexically_relative(fs::path{std::string{CANDOR_SOURCE_DIR}})
               .generic_string();
  return rel == "data/sales/gen.hpp" || rel == "data/sales/gen.cpp"
         || rel == "data/sales/orders.cpp" || rel == "data/sales/world.hpp"
         || rel == "data/sales/generator.hpp";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_world_neutral)

BOOST_AUTO_TEST_CASE(the_code_names_no_sample_company) {
  std::vector<std::string> found;
  size_t files = 0;
  for (auto* room : {"actors", "net", "domain", "data", "app"}) {
    auto root = fs::path{std::string{CANDOR_SOURCE_DIR}} / room;
    for (auto& e : fs::recursive_directory_iterator(root)) {
      auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")
          || is_sample_generator(e.path()))
        continue;
      ++files;
      std::ifstream in{e.path()};
      std::string line;
      for (size_t n = 1; std::getline(in, line); ++n) {
        auto l = lower(line);
        for (auto& name : sample_names)
          if (l.find(name) != std::string::npos)
            found.push_back(
              e.path()
                .lexically_relative(fs::path{std::string{CANDOR_SOURCE_DIR}})
                .generic_string()
              + ":" + std::to_string(n) + ": " + name);
      }
    }
  }
  BOOST_CHECK_GT(files, 200u); // the walk found the code
  std::string list;
  for (auto& f : found)
    list += "\n  " + f;
  BOOST_CHECK_MESSAGE(found.empty(), "the sample world named in code:" << list);
}

BOOST_AUTO_TEST_SUITE_END()
