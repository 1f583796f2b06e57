#pragma once

// What an executor worker of the SQL sandbox runs statements on: a forked
// executor process over the SQLite file, or a connection to the PostgreSQL
// warehouse. One interface, so the worker's life cycle (start, run with a
// deadline, replace when lost) is written once.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "data/sql/executor.hpp"
#include "domain/error.hpp"
#include "domain/sql/exec.hpp"

namespace candor::data {

/// One statement runner, owned by one executor worker (one thread).
class statement_runner {
public:
  virtual ~statement_runner() = default;

  /// Starts the process or opens the connection. Errors:
  /// `sql_executor_failed` with the reason.
  virtual domain::error start() = 0;

  /// True while started and not lost.
  virtual bool running() const noexcept = 0;

  /// The executor's pid or the server process's pid (for /health).
  virtual int32_t pid() const noexcept = 0;

  /// True when it was lost while idle (then it is stopped).
  virtual bool check_gone() = 0;

  /// Runs one statement within `deadline`; see executor_process::run and
  /// pg::session::run for the errors. A runner that is no longer
  /// `running()` afterwards was lost with the statement.
  virtual domain::outcome<domain::sql_exec_result>
  run(const domain::sql_exec_request& req, std::chrono::milliseconds deadline,
      int wake_fd)
    = 0;

  /// True after a statement when the runner should be replaced before the
  /// next one (an executor process nearing its lifetime CPU limit).
  virtual bool worn_out() const noexcept = 0;

  /// Kills the process or closes the connection.
  virtual void stop() = 0;
};

/// Forked `candor executor` processes over the SQLite sales database.
std::unique_ptr<statement_runner>
make_process_runner(const executor_settings& settings);

/// Connections to the PostgreSQL warehouse at `dsn` (as its reading role).
std::unique_ptr<statement_runner>
make_postgres_runner(std::string dsn, std::chrono::milliseconds connect_timeout);

} // namespace candor::data
