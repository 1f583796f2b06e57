#pragma once

// A test-only stand-in for the SQL sandbox: implements sql_sandbox_actor on
// an in-process read-only connection (no executor process). For node-level
// tests only; the product's sandbox lives in actors/.

#include <functional>
#include <memory>
#include <string>

#include "actors/interfaces.hpp"
#include "domain/error.hpp"

namespace candor::test {

/// Decides one statement; the default runs it read-only on `db_path`.
using sandbox_script = std::function<domain::outcome<domain::sql_exec_result>(
  const domain::sql_exec_request&)>;

/// Runs `req.sql` on a read-only, query-only connection to `db_path`,
/// keeping at most `req.max_rows` rows. SQLite errors are `sql_failed`.
domain::outcome<domain::sql_exec_result>
run_in_process(const std::string& db_path, const domain::sql_exec_request& req);

/// Spawns the stand-in in `sys`; every exec goes through `script`.
actors::sql_sandbox_actor spawn_test_sandbox(caf::actor_system& sys,
                                             sandbox_script script);

} // namespace candor::test
