#pragma once

// Shared by the SQL sandbox tests (tests/actors/sql_sandbox*.cpp): a sandbox
// on its own actor system, /proc probes and direct reference queries.

#include "data/config_load.hpp"
#include "actors/sql_sandbox.hpp"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/sales/gen.hpp"
#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/config.hpp"
#include "domain/records.hpp"
#include "domain/text.hpp"
#include "tests/support/children.hpp"
#include "tests/support/sales_db.hpp"
#include "tests/support/temp_dir.hpp"

namespace candor::test::sql_sandbox_support {

using namespace std::chrono_literals;
using domain::sql_exec_request;
using domain::sql_exec_result;

inline const std::string& shared_db() {
  return test::shared_sales_db();
}

inline actors::sandbox_settings settings_for(bool unguarded, int32_t pool = 2,
                                             int64_t deadline_ms = 5000) {
  actors::sandbox_settings s;
  s.exec.executable = data::default_executor_binary();
  s.exec.db_path = shared_db();
  s.exec.unguarded = unguarded;
  s.pool_size = pool;
  s.deadline_ms = deadline_ms;
  s.respawn_backoff = 100ms;
  return s;
}

/// Pids of this process's executor children (from /proc).
inline std::set<pid_t> executor_children() {
  std::set<pid_t> out;
  for (auto& [pid, state] : executors_of(::getpid()))
    out.insert(pid);
  return out;
}

/// Resident set size of this process in bytes.
inline int64_t own_rss() {
  std::ifstream statm{"/proc/self/statm"};
  int64_t size = 0;
  int64_t resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

inline std::string proc_status_field(pid_t pid, const std::string& field) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::string{domain::trim_ascii(line.substr(field.size() + 1))};
  return {};
}

using exec_outcome = domain::outcome<sql_exec_result>;

/// An actor system with one sandbox; everything is stopped and reaped when
/// it goes away.
struct pool {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  actors::sql_sandbox_actor sandbox;

  explicit pool(actors::sandbox_settings s) {
    actors::add_message_types(cfg);
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
    sandbox = sys->spawn(actors::sql_sandbox, std::move(s));
  }

  ~pool() {
    stop();
  }

  void stop() {
    if (!sys)
      return;
    caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
    sandbox = nullptr;
    sys.reset(); // waits for every actor, detached workers included
  }

  /// Sends a statement; the future holds the outcome.
  std::future<exec_outcome> exec_async(std::string sql, int32_t deadline_ms = 0,
                                       int32_t max_rows = 0) {
    auto prom = std::make_shared<std::promise<exec_outcome>>();
    auto fut = prom->get_future();
    sql_exec_request req;
    req.request_id = "t";
    req.sql = std::move(sql);
    req.deadline_ms = deadline_ms;
    req.max_rows = max_rows;
    auto h = sandbox;
    sys->spawn([h, req, prom](caf::event_based_actor* self) {
      self->request(h, 120s, atom::exec_v, req)
        .then([prom](sql_exec_result& r) { prom->set_value(std::move(r)); },
              [prom](caf::error& e) { prom->set_value(actors::to_domain(e)); });
    });
    return fut;
  }

  exec_outcome exec(std::string sql, int32_t deadline_ms = 0,
                    int32_t max_rows = 0) {
    return exec_async(std::move(sql), deadline_ms, max_rows).get();
  }

  boost::json::object health() {
    caf::scoped_actor self{*sys};
    boost::json::object out;
    self->request(sandbox, 10s, atom::health_v)
      .receive([&](std::string& j) { out = boost::json::parse(j).as_object(); },
               [&](caf::error&) { BOOST_FAIL("no health reply"); });
    return out;
  }

  /// Polls health until `pred` holds or `within` passes.
  template <class Pred>
  bool wait_health(Pred pred, std::chrono::milliseconds within = 10s) {
    auto until = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < until) {
      if (pred(health()))
        return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  /// Pids of busy executors.
  std::vector<pid_t> busy_pids() {
    std::vector<pid_t> out;
    auto h = health();
    for (auto& e : h.at("executors").as_array())
      if (e.at("state").as_string() == "busy")
        out.push_back(static_cast<pid_t>(e.at("pid").as_int64()));
    return out;
  }
};

inline int64_t num(const boost::json::object& obj, const char* key) {
  return obj.at(key).as_int64();
}

inline bool pool_full(const boost::json::object& h) {
  return num(h, "ready") == num(h, "size");
}

/// The same statement on an in-process read-only connection.
inline std::vector<std::vector<std::string>> direct(const std::string& sql) {
  auto db = data::open_read_only(shared_db());
  BOOST_REQUIRE(db.ok());
  auto st = db->prepare(sql);
  BOOST_REQUIRE(st.ok());
  std::vector<std::vector<std::string>> rows;
  auto* h = st->handle();
  while (sqlite3_step(h) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(h); ++i) {
      auto* t = sqlite3_column_text(h, i);
      row.emplace_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

inline std::string cell_text(const domain::cell& c) {
  switch (c.kind) {
    case domain::cell::integer: return std::to_string(c.i);
    case domain::cell::text: return c.s;
    case domain::cell::null: return "NULL";
    default: return c.s;
  }
}

/// The smallest `sql.executorMemoryMb` the configuration accepts.
inline int64_t smallest_accepted_memory_mb() {
  for (int64_t mb = 1; mb <= 1024; ++mb) {
    auto cfg = data::load_config(
      domain::default_config_json(), "",
      {{"CANDOR_SQL_EXECUTOR_MEMORY_MB", std::to_string(mb)}}, {});
    if (cfg.ok())
      return mb;
  }
  BOOST_FAIL("no executorMemoryMb up to 1024 is accepted");
  return 0;
}

/// Points this process's stderr at `path` until destroyed (an executor
/// spawned meanwhile inherits it, as it inherits the server's log file).
struct stderr_to_file {
  int saved = -1;

  explicit stderr_to_file(const std::string& path) {
    int fd
      = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    BOOST_REQUIRE(fd >= 0);
    saved = ::fcntl(2, F_DUPFD_CLOEXEC, 10);
    BOOST_REQUIRE(saved >= 0);
    BOOST_REQUIRE_EQUAL(::dup2(fd, 2), 2);
    ::close(fd);
  }

  ~stderr_to_file() {
    ::dup2(saved, 2);
    ::close(saved);
  }
};

/// A statement that runs far longer than any deadline used here.
inline constexpr auto runaway
  = "SELECT count(*) FROM orders a, orders b, orders c WHERE a.total_cents "
    "+ b.total_cents = c.total_cents";

} // namespace candor::test::sql_sandbox_support
