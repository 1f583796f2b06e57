// The single Boost.Test binary; suites live in tests/<area>/<unit>.cpp and
// each top-level suite is one CTest entry (see CMakeLists.txt).
#define BOOST_TEST_MODULE candor
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <iostream>

#include "data/sqlite.hpp"

namespace {

/// What `candor`'s main does first: the SQL guard's compile budget must be
/// installed before any test opens a database.
struct sqlite_setup {
  sqlite_setup() {
    if (auto err = candor::data::install_allocation_budget()) {
      std::cerr << "install_allocation_budget: " << err.message << "\n";
      std::abort();
    }
  }
};

} // namespace

BOOST_TEST_GLOBAL_FIXTURE(sqlite_setup);
