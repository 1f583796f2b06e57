#pragma once

// Test helper: a small lending-library database, shaped unlike the sales
// database, for the catalog draft and check.

#include <string>

namespace candor::test {

/// Writes the library database at `path` (deterministic): members (with
/// names, e-mail addresses and telephone numbers), member_addresses (only
/// personal data), books, and loans referencing both. Returns the number
/// of loans made in 2025, which the tests ask for.
long make_library_db(const std::string& path);

} // namespace candor::test
