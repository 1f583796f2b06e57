#pragma once

// Test helper: declares the shared sales database of a test run.

#include <string>

namespace candor::test {

/// The path of a sales database (seed 42) that suites only read. CTest sets
/// $CANDOR_TEST_SALES_DB to the one its `test_sales_cache` fixture made
/// with this build at the start of the run; without it (a suite run by
/// hand) it is generated once per test executable, on first use, in a
/// directory removed at exit.
const std::string& shared_sales_db();

/// Puts a copy of shared_sales_db() at `data_dir`/sales.db (creating the
/// directory), so that a test which does not test its generation does not
/// pay for it at every start: 0.9 s, about 5 s under ASan.
void provide_sales_db(const std::string& data_dir);

} // namespace candor::test
