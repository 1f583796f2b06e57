// The SQL sandbox with CAF's real scheduler and real executor processes
// (the `candor` binary next to the test binary) on a generated sales
// database: results, caps, deadline kills under load, memory bombs, crashes,
// writes, the seccomp filter and clean shutdown. The process-level layer is
// tested with the authorizer and the statement checks bypassed
// (`executor_settings::unguarded`).

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
#include "tests/support/sales_db.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace std::chrono_literals;
using actors::sql_exec_request;
using actors::sql_exec_result;

namespace {

const std::string& shared_db() {
  return test::shared_sales_db();
}

actors::sandbox_settings settings_for(bool unguarded, int32_t pool = 2,
                                      int64_t deadline_ms = 5000) {
  actors::sandbox_settings s;
  s.exec.executable = actors::default_executor_binary();
  s.exec.db_path = shared_db();
  s.exec.unguarded = unguarded;
  s.pool_size = pool;
  s.deadline_ms = deadline_ms;
  s.respawn_backoff = 100ms;
  return s;
}

/// Pids of this process's executor children (from /proc).
std::set<pid_t> executor_children() {
  std::set<pid_t> out;
  auto me = ::getpid();
  for (auto& e : std::filesystem::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != name.npos)
      continue;
    std::ifstream stat{e.path() / "stat"};
    std::string line;
    if (!std::getline(stat, line))
      continue;
    // pid (comm) state ppid ...
    auto close = line.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest{line.substr(close + 2)};
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != me)
      continue;
    std::ifstream cmd{e.path() / "cmdline"};
    std::string cmdline{std::istreambuf_iterator<char>{cmd}, {}};
    if (cmdline.find("executor") != std::string::npos)
      out.insert(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

/// Resident set size of this process in bytes.
int64_t own_rss() {
  std::ifstream statm{"/proc/self/statm"};
  int64_t size = 0;
  int64_t resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

std::string proc_status_field(pid_t pid, const std::string& field) {
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
  std::future<exec_outcome> exec_async(std::string sql,
                                       int32_t deadline_ms = 0,
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
              [prom](caf::error& e) {
                prom->set_value(actors::to_domain(e));
              });
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

int64_t num(const boost::json::object& obj, const char* key) {
  return obj.at(key).as_int64();
}

bool pool_full(const boost::json::object& h) {
  return num(h, "ready") == num(h, "size");
}

/// The same statement on an in-process read-only connection.
std::vector<std::vector<std::string>> direct(const std::string& sql) {
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

std::string cell_text(const domain::cell& c) {
  switch (c.kind) {
    case domain::cell::integer:
      return std::to_string(c.i);
    case domain::cell::text:
      return c.s;
    case domain::cell::null:
      return "NULL";
    default:
      return c.s;
  }
}

/// The smallest `sql.executorMemoryMb` the configuration accepts.
int64_t smallest_accepted_memory_mb() {
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
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    0600);
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
constexpr auto runaway
  = "SELECT count(*) FROM orders a, orders b, orders c WHERE a.total_cents "
    "+ b.total_cents = c.total_cents";

} // namespace

BOOST_AUTO_TEST_SUITE(actors_sql_sandbox)

BOOST_AUTO_TEST_CASE(a_legitimate_query_returns_the_right_rows) {
  pool p{settings_for(false)};
  auto sql = std::string{"SELECT channel, count(*) AS n, sum(total_cents) "
                         "FROM orders GROUP BY channel ORDER BY channel"};
  auto r = p.exec(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto expected = direct(sql);
  BOOST_REQUIRE_EQUAL(r->columns.size(), 3u);
  BOOST_CHECK_EQUAL(r->columns[1], "n");
  BOOST_REQUIRE_EQUAL(r->rows.size(), expected.size());
  BOOST_CHECK(!expected.empty());
  for (size_t i = 0; i < expected.size(); ++i)
    for (size_t j = 0; j < 3; ++j)
      BOOST_CHECK_EQUAL(cell_text(r->rows[i][j]), expected[i][j]);
  BOOST_CHECK_EQUAL(r->row_count, static_cast<int64_t>(expected.size()));
  BOOST_CHECK(!r->truncated);
  BOOST_CHECK_GT(r->elapsed_us, 0);
  BOOST_CHECK(r->rows[0][1].kind == domain::cell::integer);
}

BOOST_AUTO_TEST_CASE(rows_are_capped_and_counted) {
  pool p{settings_for(false)};
  auto r = p.exec("SELECT order_id FROM orders ORDER BY order_id", 0, 7);
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->rows.size(), 7u);
  BOOST_CHECK(r->truncated);
  auto total = direct("SELECT count(*) FROM orders");
  BOOST_CHECK_EQUAL(std::to_string(r->row_count), total[0][0]);
  auto first = direct("SELECT min(order_id) FROM orders");
  BOOST_CHECK_EQUAL(cell_text(r->rows[0][0]), first[0][0]);
  // The sandbox's own cap applies to a request that asks for more.
  auto s = settings_for(false);
  s.max_rows = 5;
  pool q{s};
  auto r2 = q.exec("SELECT order_id FROM orders", 0, 1000);
  BOOST_REQUIRE(r2.ok());
  BOOST_CHECK_EQUAL(r2->rows.size(), 5u);
}

BOOST_AUTO_TEST_CASE(long_text_is_cut_on_a_character_boundary) {
  pool p{settings_for(false)};
  auto sql = std::string{"SELECT group_concat('é' || order_number, '') FROM "
                         "(SELECT order_number FROM orders ORDER BY order_id "
                         "LIMIT 200)"};
  auto r = p.exec(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto& s = r->rows.at(0).at(0).s;
  auto full = direct(sql)[0][0];
  BOOST_CHECK_GT(full.size(), 2000u);
  BOOST_CHECK(domain::valid_utf8(s));
  // 1,000 code points and the ellipsis.
  BOOST_CHECK_EQUAL(s, domain::cut_utf8(full, actors::max_cell_chars)
                         + "\xE2\x80\xA6");
}

BOOST_AUTO_TEST_CASE(blobs_are_summarised) {
  pool p{settings_for(false)};
  auto r = p.exec("SELECT CAST(order_number AS BLOB) FROM orders ORDER BY "
                  "order_id LIMIT 1");
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto& c = r->rows.at(0).at(0);
  auto len = direct("SELECT length(order_number) FROM orders ORDER BY "
                    "order_id LIMIT 1")[0][0];
  BOOST_CHECK(c.kind == domain::cell::blob);
  BOOST_CHECK_EQUAL(c.s, "<blob " + len + " bytes>");
}

BOOST_AUTO_TEST_CASE(every_kind_of_cell_survives_the_trip) {
  pool p{settings_for(false)};
  auto r = p.exec("SELECT 1e999, -1e999, 0.25, 9223372036854775807, "
                  "-9223372036854775807 - 1, NULL, 'x' FROM regions LIMIT 1");
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto& row = r->rows.at(0);
  BOOST_CHECK(row[0].kind == domain::cell::real && std::isinf(row[0].r)
              && row[0].r > 0);
  BOOST_CHECK(row[1].kind == domain::cell::real && std::isinf(row[1].r)
              && row[1].r < 0);
  BOOST_CHECK_EQUAL(row[2].r, 0.25);
  BOOST_CHECK_EQUAL(row[3].i, INT64_MAX);
  BOOST_CHECK_EQUAL(row[4].i, INT64_MIN);
  BOOST_CHECK(row[5].kind == domain::cell::null);
  BOOST_CHECK_EQUAL(row[6].s, "x");
  BOOST_CHECK_EQUAL(num(p.health(), "crashes"), 0);
}

BOOST_AUTO_TEST_CASE(the_executor_applies_the_authorizer_and_shape_checks) {
  pool p{settings_for(false)};
  auto pii = p.exec("SELECT email FROM customers");
  BOOST_REQUIRE(!pii.ok());
  BOOST_CHECK(pii.err().code == domain::ec::sql_failed);
  BOOST_CHECK_NE(pii.err().message.find("customers.email"),
                 std::string::npos);
  auto two = p.exec("SELECT 1 FROM orders; SELECT 2 FROM orders");
  BOOST_REQUIRE(!two.ok());
  BOOST_CHECK_MESSAGE(
    two.err().message.find("multiple_statements") != std::string::npos,
    two.err().message);
  auto write = p.exec("DELETE FROM orders");
  BOOST_REQUIRE(!write.ok());
  BOOST_CHECK(write.err().code == domain::ec::sql_failed);
  // G1: a join with USING reads customers.email without a column read the
  // authorizer could see; the executor's bytecode audit refuses it.
  auto g1 = p.exec("SELECT count(*) FROM (SELECT 'a@b.example' AS email) g "
                   "JOIN customers USING (email)");
  BOOST_REQUIRE(!g1.ok());
  BOOST_CHECK(g1.err().code == domain::ec::sql_failed);
  auto nul = p.exec(std::string{"SELECT 1 FROM orders \0; DROP TABLE x", 36});
  BOOST_REQUIRE(!nul.ok());
  BOOST_CHECK_NE(nul.err().message.find("NUL"), std::string::npos);
  auto empty = p.exec("");
  BOOST_REQUIRE(!empty.ok());
  BOOST_CHECK(empty.err().code == domain::ec::invalid_request);
  // A refusal leaves the executor alive.
  auto h = p.health();
  BOOST_CHECK_EQUAL(num(h, "crashes"), 0);
  BOOST_CHECK_EQUAL(num(h, "respawns"), 0);
  BOOST_CHECK(p.exec("SELECT count(*) FROM orders").ok());
}

BOOST_AUTO_TEST_CASE(a_runaway_query_is_killed_while_others_are_served) {
  pool p{settings_for(true, 2)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto start = std::chrono::steady_clock::now();
  auto slow = p.exec_async(runaway, 400);
  std::vector<std::future<exec_outcome>> others;
  for (int i = 0; i < 50; ++i)
    others.push_back(p.exec_async(
      "SELECT count(*) FROM orders WHERE order_id % 50 = "
      + std::to_string(i)));
  auto killed = slow.get();
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE(!killed.ok());
  BOOST_CHECK(killed.err().code == domain::ec::sql_timeout);
  BOOST_CHECK_LT(took, 3s);
  int ok = 0;
  for (auto& f : others) {
    auto r = f.get();
    BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    ok += r.ok() ? 1 : 0;
  }
  BOOST_CHECK_EQUAL(ok, 50);
  BOOST_CHECK(p.wait_health([](const boost::json::object& h) {
    return pool_full(h) && num(h, "kills") == 1 && num(h, "respawns") == 1;
  }));
}

BOOST_AUTO_TEST_CASE(bombs_mixed_into_200_parallel_queries) {
  pool p{settings_for(true, 2)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  const char* bombs[] = {
    runaway,
    "SELECT length(printf('%.*c', 900000000, 'x'))",
    "SELECT count(*) FROM (SELECT randomblob(90000) FROM orders ORDER BY 1)",
    "SELECT length(group_concat(hex(zeroblob(50000)))) FROM order_items",
  };
  std::vector<std::future<exec_outcome>> good;
  std::vector<std::future<exec_outcome>> bad;
  for (int i = 0; i < 200; ++i) {
    if (i % 25 == 0)
      bad.push_back(p.exec_async(bombs[(i / 25) % 4], 500));
    else
      good.push_back(p.exec_async("SELECT count(*) FROM order_items WHERE "
                                  "order_id = "
                                  + std::to_string(i + 1)));
  }
  for (auto& f : good) {
    auto r = f.get();
    BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  }
  for (auto& f : bad)
    BOOST_CHECK(!f.get().ok());
  BOOST_CHECK(p.wait_health(pool_full));
  BOOST_CHECK_EQUAL(num(p.health(), "crashes"), 0);
  BOOST_CHECK_EQUAL(executor_children().size(), 2u);
}

BOOST_AUTO_TEST_CASE(a_memory_bomb_is_contained) {
  pool p{settings_for(true, 1)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  BOOST_REQUIRE(p.exec("SELECT count(*) FROM orders").ok());
  auto before = own_rss();
  for (auto* bomb :
       {"SELECT length(group_concat(hex(zeroblob(50000)))) FROM order_items",
        "SELECT count(*) FROM (SELECT randomblob(90000) FROM orders ORDER "
        "BY 1)",
        "SELECT length(printf('%.*c', 900000000, 'x'))"}) {
    auto r = p.exec(bomb, 1500);
    BOOST_CHECK_MESSAGE(!r.ok(), bomb);
    if (!r.ok())
      BOOST_CHECK_MESSAGE(r.err().code == domain::ec::sql_failed
                            || r.err().code == domain::ec::sql_timeout,
                          bomb << ": " << r.err().message);
  }
  auto after = own_rss();
  BOOST_CHECK_LT(after - before, 8 * 1024 * 1024);
  auto next = p.exec("SELECT count(*) FROM regions");
  BOOST_CHECK_MESSAGE(next.ok(), (next.ok() ? "" : next.err().message));
}

BOOST_AUTO_TEST_CASE(every_accepted_memory_setting_runs_real_queries) {
  // sql.executorMemoryMb of 32, 48 or 64 (all accepted) used to fail
  // every query needing a little memory: RLIMIT_AS was the whole address
  // space, and the executor's image alone (binary, libraries, ICU data)
  // maps about 70 MiB, so no allocation could grow the heap.
  const std::string queries[] = {
    // The scripted "revenue by channel" query.
    "SELECT o.channel, ROUND(SUM(o.total_cents - COALESCE((SELECT "
    "SUM(r.amount_cents) FROM refunds r WHERE r.order_id = o.order_id), 0)) "
    "/ 100.0, 2) AS revenue_eur FROM orders o WHERE o.status IN ('paid', "
    "'partially_refunded', 'refunded') GROUP BY o.channel ORDER BY "
    "revenue_eur DESC",
    // A few MiB of sorter and distinct set.
    "SELECT count(DISTINCT order_id || '-' || product_id) FROM order_items",
    "SELECT count(*) FROM (SELECT order_number, customer_id FROM orders "
    "ORDER BY order_number DESC)",
  };
  auto smallest = smallest_accepted_memory_mb();
  for (int64_t mb : {smallest, smallest + 16, smallest + 32}) {
    auto s = settings_for(false);
    s.exec.memory_mb = mb;
    auto proc = actors::executor_process::spawn(s.exec);
    BOOST_REQUIRE_MESSAGE(proc.ok(), mb << " MiB: "
                                        << (proc.ok() ? ""
                                                      : proc.err().message));
    for (auto& sql : queries) {
      sql_exec_request req;
      req.sql = sql;
      req.max_rows = 10;
      auto r = proc->run(req, 10s);
      BOOST_CHECK_MESSAGE(r.ok(), mb << " MiB: " << sql << ": "
                                     << (r.ok() ? "" : r.err().message));
      if (r.ok())
        BOOST_CHECK_EQUAL(direct(sql).size(),
                          static_cast<size_t>(r->row_count));
    }
  }
}

BOOST_AUTO_TEST_CASE(memory_runs_out_as_an_error_with_stderr_in_a_file) {
  // With the server's log in a file, the allocator's message on a failed
  // allocation ("tcmalloc: allocation failed") is a write to a regular
  // file, which RLIMIT_FSIZE=0 turned into SIGXFSZ: the executor died
  // instead of the statement failing. The limit is the smallest accepted
  // one and below the SQLite heap limit, so the allocator fails first.
  test::temp_dir dir{"candor-sandbox-stderr"};
  auto s = settings_for(true);
  s.exec.memory_mb = smallest_accepted_memory_mb();
  s.exec.heap_limit_mb = 256;
  domain::outcome<actors::executor_process> proc
    = domain::make_error(domain::ec::internal, "not started");
  {
    stderr_to_file redirect{dir.file("server.log")};
    proc = actors::executor_process::spawn(s.exec);
  }
  BOOST_REQUIRE_MESSAGE(proc.ok(), (proc.ok() ? "" : proc.err().message));
  auto pid = proc->pid();
  sql_exec_request req;
  req.sql = "SELECT count(*) FROM (SELECT randomblob(90000) FROM orders "
            "ORDER BY 1)";
  req.max_rows = 10;
  auto bomb = proc->run(req, 10s);
  BOOST_REQUIRE(!bomb.ok());
  BOOST_CHECK_MESSAGE(bomb.err().code == domain::ec::sql_failed,
                      bomb.err().message);
  BOOST_CHECK_NE(bomb.err().message.find("out of memory"),
                 std::string::npos);
  BOOST_CHECK_NE(bomb.err().message.find("sql.executorMemoryMb"),
                 std::string::npos);
  // The same process serves the next statement.
  BOOST_CHECK(proc->running());
  BOOST_CHECK_EQUAL(proc->pid(), pid);
  req.sql = "SELECT count(*) FROM regions";
  auto next = proc->run(req, 10s);
  BOOST_CHECK_MESSAGE(next.ok(), (next.ok() ? "" : next.err().message));
}

BOOST_AUTO_TEST_CASE(an_executor_killed_by_its_cpu_limit_names_the_limit) {
  auto s = settings_for(true);
  s.exec.cpu_seconds = 1;
  auto proc = actors::executor_process::spawn(s.exec);
  BOOST_REQUIRE_MESSAGE(proc.ok(), (proc.ok() ? "" : proc.err().message));
  sql_exec_request req;
  req.sql = runaway;
  req.max_rows = 10;
  // A deadline well past the CPU limit: SIGXCPU comes first.
  auto r = proc->run(req, 20s);
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
  BOOST_CHECK_MESSAGE(actors::is_executor_limit(r.err()), r.err().message);
  for (auto* part : {"CPU time limit", "RLIMIT_CPU 1 s",
                     "sql.executorCpuSeconds", "SIGXCPU"})
    BOOST_CHECK_MESSAGE(r.err().message.find(part) != std::string::npos,
                        r.err().message);
  BOOST_CHECK(!proc->running());
  // A kill from outside names no limit.
  auto other = actors::executor_process::spawn(s.exec);
  BOOST_REQUIRE(other.ok());
  auto victim = other->pid();
  std::thread killer{[victim] {
    std::this_thread::sleep_for(200ms);
    ::kill(victim, SIGKILL);
  }};
  auto killed = other->run(req, 20s);
  killer.join();
  BOOST_REQUIRE(!killed.ok());
  BOOST_CHECK(!actors::is_executor_limit(killed.err()));
  BOOST_CHECK_NE(killed.err().message.find("signal 9"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_killed_executor_fails_only_its_own_request) {
  pool p{settings_for(true, 2, 20000)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto slow = p.exec_async(runaway);
  std::vector<pid_t> busy;
  BOOST_REQUIRE(p.wait_health([&](const boost::json::object&) {
    busy = p.busy_pids();
    return busy.size() == 1 && busy[0] > 0;
  }));
  BOOST_REQUIRE_EQUAL(::kill(busy[0], SIGKILL), 0);
  auto r = slow.get();
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
  BOOST_CHECK_NE(r.err().message.find("signal 9"), std::string::npos);
  for (int i = 0; i < 10; ++i)
    BOOST_CHECK(p.exec("SELECT count(*) FROM products").ok());
  BOOST_CHECK(p.wait_health([&](const boost::json::object& h) {
    return pool_full(h) && num(h, "crashes") == 1 && num(h, "kills") == 0;
  }));
  auto pids = executor_children();
  BOOST_CHECK_EQUAL(pids.size(), 2u);
  BOOST_CHECK(pids.count(busy[0]) == 0);
}

BOOST_AUTO_TEST_CASE(an_executor_killed_while_idle_is_replaced_first) {
  pool p{settings_for(true, 1)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[0].at("pid").as_int64());
  BOOST_REQUIRE_EQUAL(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(50ms);
  auto r = p.exec("SELECT count(*) FROM orders");
  BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  auto h = p.health();
  BOOST_CHECK_EQUAL(num(h, "crashes"), 1);
  BOOST_CHECK_EQUAL(num(h, "respawns"), 1);
}

BOOST_AUTO_TEST_CASE(an_executor_killed_while_idle_is_replaced_unasked) {
  auto s = settings_for(true, 2);
  s.idle_check = 50ms;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[1].at("pid").as_int64());
  BOOST_REQUIRE_EQUAL(::kill(pid, SIGKILL), 0);
  BOOST_CHECK(p.wait_health([pid](const boost::json::object& h) {
    auto now = h.at("executors").as_array()[1].at("pid").as_int64();
    return pool_full(h) && num(h, "crashes") == 1 && now != pid && now > 0;
  }));
  BOOST_CHECK_EQUAL(executor_children().size(), 2u);
}

BOOST_AUTO_TEST_CASE(executors_are_recycled_before_their_cpu_limit) {
  // RLIMIT_CPU of 1 s over the life of a process; each statement burns
  // about 0.17 s of CPU, so without recycling the process would die of
  // SIGXCPU within these 16 statements.
  auto s = settings_for(false, 1);
  s.exec.cpu_seconds = 1;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  for (int i = 0; i < 16; ++i) {
    auto r = p.exec("SELECT count(*) FROM orders a JOIN regions b JOIN "
                    "regions c ON b.country_code < c.country_code WHERE "
                    "a.total_cents + length(b.country_name) > 0");
    BOOST_CHECK_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  }
  BOOST_CHECK(p.wait_health(pool_full));
  auto h = p.health();
  BOOST_CHECK_EQUAL(num(h, "crashes"), 0);
  BOOST_CHECK_GE(num(h, "recycles"), 1);
}

BOOST_AUTO_TEST_CASE(writes_are_impossible_even_without_the_authorizer) {
  test::temp_dir dir{"candor-sandbox-writes"};
  auto before = data::sales_fingerprint(shared_db());
  BOOST_REQUIRE(before.ok());
  pool p{settings_for(true, 1)};
  std::vector<std::string> writes = {
    "VACUUM INTO '" + dir.file("copy.db") + "'",
    "ATTACH '" + dir.file("new.db") + "' AS extra",
    "CREATE TABLE t(x)",
    "INSERT INTO regions (country_code, country_name, shipping_zone, in_eu) "
    "VALUES ('XX', 'X', 'A', 0)",
    "UPDATE orders SET total_cents = 0",
    "DELETE FROM orders",
    "DROP TABLE orders",
    "WITH x AS (SELECT 1) DELETE FROM orders",
    "PRAGMA writable_schema = 1",
  };
  for (auto& w : writes) {
    auto r = p.exec(w);
    // Statements that returned normally must have changed nothing (checked
    // below); a write verb must fail outright.
    if (w.rfind("PRAGMA", 0) != 0)
      BOOST_CHECK_MESSAGE(!r.ok(), w);
  }
  // Even with query_only switched off, the connection is read-only.
  BOOST_CHECK(p.exec("PRAGMA query_only = 0").ok());
  BOOST_CHECK(!p.exec("DELETE FROM orders").ok());
  BOOST_CHECK(std::filesystem::is_empty(dir.path));
  auto after = data::sales_fingerprint(shared_db());
  BOOST_REQUIRE(after.ok());
  BOOST_CHECK_EQUAL(*before, *after);
}

BOOST_AUTO_TEST_CASE(the_seccomp_filter_is_installed_and_denies_open) {
  pool p{settings_for(false, 1)};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[0].at("pid").as_int64());
  BOOST_CHECK_EQUAL(proc_status_field(pid, "Seccomp"), "2");
  BOOST_CHECK_EQUAL(proc_status_field(pid, "NoNewPrivs"), "1");
  // Only stdin, stdout, stderr, the socket and the database (the running
  // and the checking connection) are open.
  std::set<int> fds;
  for (auto& e : std::filesystem::directory_iterator(
         "/proc/" + std::to_string(pid) + "/fd"))
    fds.insert(std::stoi(e.path().filename().string()));
  BOOST_CHECK((fds == std::set<int>{0, 1, 2, 3, 4, 5}));
  // A fully set-up executor cannot create a file.
  test::temp_dir dir{"candor-sandbox-probe"};
  auto s = settings_for(false);
  auto probe = actors::executor_process::probe_open(s.exec,
                                                    dir.file("x"));
  BOOST_REQUIRE_MESSAGE(probe.ok(), (probe.ok() ? "" : probe.err().message));
  auto report = boost::json::parse(*probe).as_object();
  BOOST_CHECK_EQUAL(report.at("probe").as_string(), "denied");
  BOOST_CHECK_EQUAL(report.at("errno").as_int64(), EPERM);
  BOOST_CHECK(!std::filesystem::exists(dir.file("x")));
}

BOOST_AUTO_TEST_CASE(a_full_queue_is_overloaded) {
  auto s = settings_for(true, 1);
  s.queue_limit = 2;
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto slow = p.exec_async(runaway, 600);
  BOOST_REQUIRE(p.wait_health(
    [](const boost::json::object& h) { return num(h, "busy") == 1; }));
  auto q1 = p.exec_async("SELECT 1 FROM regions LIMIT 1");
  auto q2 = p.exec_async("SELECT 2 FROM regions LIMIT 1");
  BOOST_REQUIRE(p.wait_health(
    [](const boost::json::object& h) { return num(h, "queued") == 2; }));
  auto over = p.exec("SELECT 3 FROM regions LIMIT 1");
  BOOST_REQUIRE(!over.ok());
  BOOST_CHECK(over.err().code == domain::ec::overloaded);
  BOOST_CHECK(slow.get().err().code == domain::ec::sql_timeout);
  BOOST_CHECK(q1.get().ok());
  BOOST_CHECK(q2.get().ok());
  BOOST_CHECK_EQUAL(num(p.health(), "rejected"), 1);
}

BOOST_AUTO_TEST_CASE(a_missing_database_fails_fast) {
  auto s = settings_for(false, 1);
  s.exec.db_path = "/nonexistent/sales.db";
  pool p{s};
  BOOST_REQUIRE(p.wait_health([](const boost::json::object& h) {
    return h.at("executors").as_array()[0].at("state").as_string() == "down";
  }));
  auto r = p.exec("SELECT 1");
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
}

BOOST_AUTO_TEST_CASE(a_slot_whose_restart_failed_comes_back) {
  // The executor dies while idle and cannot be restarted at first (its
  // database is gone): that statement fails, and the slot must keep
  // retrying instead of staying lost once the database is back.
  test::temp_dir dir{"candor-sandbox-restart"};
  auto path = dir.file("sales.db");
  std::filesystem::copy_file(shared_db(), path);
  auto s = settings_for(false, 1);
  s.exec.db_path = path;
  s.idle_check = 60s; // only the statement notices the death
  pool p{s};
  BOOST_REQUIRE(p.wait_health(pool_full));
  auto pid = static_cast<pid_t>(
    p.health().at("executors").as_array()[0].at("pid").as_int64());
  std::filesystem::rename(path, path + ".away");
  BOOST_REQUIRE_EQUAL(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(50ms);
  auto r = p.exec("SELECT count(*) FROM orders");
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == domain::ec::sql_executor_failed);
  std::filesystem::rename(path + ".away", path);
  BOOST_CHECK(p.wait_health(pool_full));
  auto again = p.exec("SELECT count(*) FROM orders");
  BOOST_CHECK_MESSAGE(again.ok(), (again.ok() ? "" : again.err().message));
}

BOOST_AUTO_TEST_CASE(shutdown_leaves_no_children) {
  std::set<pid_t> seen;
  {
    pool p{settings_for(true, 2)};
    BOOST_REQUIRE(p.wait_health(pool_full));
    // One executor busy with a runaway statement at shutdown.
    auto slow = p.exec_async(runaway, 30000);
    BOOST_REQUIRE(p.wait_health(
      [](const boost::json::object& h) { return num(h, "busy") == 1; }));
    seen = executor_children();
    BOOST_CHECK_EQUAL(seen.size(), 2u);
    auto start = std::chrono::steady_clock::now();
    p.stop();
    BOOST_CHECK_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  BOOST_CHECK(executor_children().empty());
  for (auto pid : seen)
    BOOST_CHECK(!std::filesystem::exists("/proc/" + std::to_string(pid)));
}

BOOST_AUTO_TEST_SUITE_END()
