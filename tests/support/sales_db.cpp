// Test helper: the sales database generated once (seed 42) per test run,
// and copies of it for data directories.

#include "tests/support/sales_db.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "data/sales/gen.hpp"
#include "tests/support/temp_dir.hpp"

namespace candor::test {

namespace fs = std::filesystem;

const std::string& shared_sales_db() {
  static const std::string db = []() -> std::string {
    if (const char* made = std::getenv("CANDOR_TEST_SALES_DB");
        made != nullptr && fs::exists(made))
      return made;
    static temp_dir dir{"candor-sales"};
    auto path = dir.file("sales.db");
    auto summary = data::generate_sales(path, 42, {});
    if (!summary.ok()) // a test fails on the exception, naming it
      throw std::runtime_error("generating the sales database: "
                               + summary.err().message);
    return path;
  }();
  return db;
}

void provide_sales_db(const std::string& data_dir) {
  fs::create_directories(data_dir);
  fs::copy_file(shared_sales_db(), data_dir + "/sales.db",
                fs::copy_options::overwrite_existing);
}

} // namespace candor::test
