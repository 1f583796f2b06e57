// The two statement runners of the SQL sandbox: an executor process and a
// PostgreSQL connection.

#include "data/sql/runner.hpp"

#include <utility>

#include "data/pg/session.hpp"

namespace candor::data {

namespace {

class process_runner final : public statement_runner {
public:
  explicit process_runner(executor_settings settings)
      : settings_(std::move(settings)) {
    // nop
  }

  domain::error start() override {
    auto proc = executor_process::spawn(settings_);
    if (!proc)
      return proc.err();
    proc_ = std::move(*proc);
    return {};
  }

  bool running() const noexcept override {
    return proc_.running();
  }

  int32_t pid() const noexcept override {
    return static_cast<int32_t>(proc_.pid());
  }

  bool check_gone() override {
    return proc_.running() && proc_.check_gone();
  }

  domain::outcome<domain::sql_exec_result>
  run(const domain::sql_exec_request& req, std::chrono::milliseconds deadline,
      int wake_fd) override {
    return proc_.run(req, deadline, wake_fd);
  }

  bool worn_out() const noexcept override {
    // RLIMIT_CPU counts the process's whole life: replace it well before a
    // legitimate statement could hit the limit.
    return proc_.cpu_us()
           > static_cast<int64_t>(settings_.cpu_seconds) * 500000;
  }

  void stop() override {
    proc_.kill();
  }

private:
  executor_settings settings_;
  executor_process proc_;
};

class postgres_runner final : public statement_runner {
public:
  postgres_runner(std::string dsn, std::chrono::milliseconds connect_timeout)
      : dsn_(std::move(dsn)), connect_timeout_(connect_timeout) {
    // nop
  }

  domain::error start() override {
    auto s = pg::session::open(dsn_, connect_timeout_);
    if (!s)
      return s.err();
    session_ = std::move(*s);
    return {};
  }

  bool running() const noexcept override {
    return session_.running();
  }

  int32_t pid() const noexcept override {
    return session_.backend_pid();
  }

  bool check_gone() override {
    return session_.check_gone();
  }

  domain::outcome<domain::sql_exec_result>
  run(const domain::sql_exec_request& req, std::chrono::milliseconds deadline,
      int wake_fd) override {
    auto t0 = std::chrono::steady_clock::now();
    auto r = session_.run(req, deadline, wake_fd);
    // Lost before the statement was sent (the server ended the idle
    // session; the socket said so only now): once more on a new
    // connection, within what is left of the deadline.
    if (!r && r.err().code == domain::ec::sql_executor_failed
        && !session_.running() && !session_.statement_sent()) {
      auto left = deadline
                  - std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - t0);
      if (left.count() > 0 && !start())
        r = session_.run(req, left, wake_fd);
    }
    return r;
  }

  bool worn_out() const noexcept override {
    return false;
  }

  void stop() override {
    session_.close();
  }

private:
  std::string dsn_;
  std::chrono::milliseconds connect_timeout_;
  pg::session session_;
};

} // namespace

std::unique_ptr<statement_runner>
make_process_runner(const executor_settings& settings) {
  return std::make_unique<process_runner>(settings);
}

std::unique_ptr<statement_runner>
make_postgres_runner(std::string dsn,
                     std::chrono::milliseconds connect_timeout) {
  return std::make_unique<postgres_runner>(std::move(dsn), connect_timeout);
}

} // namespace candor::data
