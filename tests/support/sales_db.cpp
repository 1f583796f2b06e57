// Test helper: the sales database generated once (seed 42) per test
// executable.

#include "tests/support/sales_db.hpp"

#include <boost/test/unit_test.hpp>

#include "data/sales/gen.hpp"
#include "tests/support/temp_dir.hpp"

namespace candor::test {

const std::string& shared_sales_db() {
  static temp_dir dir{"candor-sales"};
  static const std::string db = [] {
    auto path = dir.file("sales.db");
    auto summary = data::generate_sales(path, 42, {});
    BOOST_REQUIRE_MESSAGE(summary.ok(),
                          (summary.ok() ? "" : summary.err().message));
    return path;
  }();
  return db;
}

} // namespace candor::test
