#pragma once

// Test helper: declares the shared sales database of a test executable.

#include <string>

namespace candor::test {

/// The path of a sales database generated once (seed 42) for the whole test
/// executable, on first use; suites only read it. Its directory is removed
/// at exit.
const std::string& shared_sales_db();

} // namespace candor::test
