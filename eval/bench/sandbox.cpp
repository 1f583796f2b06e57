// SQL sandbox latency benchmark: one small query through
// the sandbox against the same query on an in-process read-only connection,
// measured in the same run with the two interleaved.
//
//   candor-bench-sandbox --db SALES_DB [--iterations N] [--warmup N]
//                        [--sql STATEMENT] [--executor CANDOR_BINARY]
//
// Three paths per iteration, in turn:
//   inproc   prepare + step + copy the cells on a hardened read-only
//            connection with the authorizer, in this process (the floor);
//   process  the same statement through one executor process
//            (data::executor_process: frame, JSON, socket, the child's
//            prepare + step, parse) from this thread;
//   actor    through the sql_sandbox actor (pool of 1): a CAF request to
//            the sandbox, which hands it to its detached worker, which
//            runs it on the executor process and replies.
// Prints P50/P95/P99 of each in microseconds, the P50 overhead of
// `process` and `actor` over `inproc`, and PASS/MISS against the target
// (P50 overhead of the actor path <= 500 us). Exit 0 unless it failed to
// run.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <sqlite3.h>

#include "data/sql/executor.hpp"
#include "actors/sql_sandbox.hpp"
#include "data/sales/catalog.hpp"
#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/types.hpp"

using namespace candor;
using clock_type = std::chrono::steady_clock;

namespace {

struct options {
  std::string db;
  std::string executor;
  std::string sql = "SELECT order_number, status, total_cents FROM orders "
                    "WHERE order_id = 4242";
  int iterations = 3000;
  int warmup = 300;
};

int usage() {
  std::fprintf(stderr,
               "usage: candor-bench-sandbox --db SALES_DB [--iterations N] "
               "[--warmup N] [--sql STATEMENT] [--executor CANDOR]\n");
  return 2;
}

double percentile(std::vector<double> xs, double p) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto idx = static_cast<size_t>(p * static_cast<double>(xs.size() - 1) + 0.5);
  return xs[std::min(idx, xs.size() - 1)];
}

/// The in-process baseline: what the executor does, minus the process.
struct inproc {
  data::database db;
  std::optional<data::sql_authorizer> auth;

  bool open(const std::string& path) {
    auto d = data::open_read_only(path, true);
    if (!d)
      return false;
    db = std::move(*d);
    if (data::harden_connection(db))
      return false;
    auto cat = data::catalog::load_default();
    if (!cat)
      return false;
    auto a = data::sql_authorizer::for_connection(
      db, {cat->allowed_columns(), data::default_sql_functions()});
    if (!a)
      return false;
    auth.emplace(std::move(*a));
    auth->install(db.handle());
    return true;
  }

  int64_t run(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v3(db.handle(), sql.data(),
                           static_cast<int>(sql.size()), SQLITE_PREPARE_NO_VTAB,
                           &st, nullptr)
        != SQLITE_OK)
      return -1;
    std::vector<std::vector<domain::cell>> rows;
    auto n = sqlite3_column_count(st);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<domain::cell> row(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        auto& c = row[static_cast<size_t>(i)];
        switch (sqlite3_column_type(st, i)) {
          case SQLITE_INTEGER:
            c.kind = domain::cell::integer;
            c.i = sqlite3_column_int64(st, i);
            break;
          case SQLITE_FLOAT:
            c.kind = domain::cell::real;
            c.r = sqlite3_column_double(st, i);
            break;
          case SQLITE_TEXT:
            c.kind = domain::cell::text;
            c.s = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
            break;
          default: break;
        }
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return static_cast<int64_t>(rows.size());
  }
};

void print_line(const char* name, const std::vector<double>& xs,
                double base_p50) {
  auto p50 = percentile(xs, 0.50);
  std::printf("%-8s P50 %8.1f us  P95 %8.1f us  P99 %8.1f us", name, p50,
              percentile(xs, 0.95), percentile(xs, 0.99));
  if (base_p50 >= 0)
    std::printf("  P50 overhead %7.1f us", p50 - base_p50);
  std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
  if (auto err = candor::data::install_allocation_budget()) {
    std::fprintf(stderr, "bench_sandbox: %s\n", err.message.c_str());
    return 1;
  }
  options o;
  o.executor = data::default_executor_binary();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage();
    std::string value = argv[++i];
    if (arg == "--db")
      o.db = value;
    else if (arg == "--executor")
      o.executor = value;
    else if (arg == "--sql")
      o.sql = value;
    else if (arg == "--iterations")
      o.iterations = std::max(1, std::atoi(value.c_str()));
    else if (arg == "--warmup")
      o.warmup = std::max(0, std::atoi(value.c_str()));
    else
      return usage();
  }
  if (o.db.empty())
    return usage();
  inproc base;
  if (!base.open(o.db)) {
    std::fprintf(stderr, "bench_sandbox: cannot open %s\n", o.db.c_str());
    return 1;
  }
  data::executor_settings es;
  es.executable = o.executor;
  es.db_path = o.db;
  auto proc = data::executor_process::spawn(es);
  if (!proc) {
    std::fprintf(stderr, "bench_sandbox: %s\n", proc.err().message.c_str());
    return 1;
  }
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  actors::sandbox_settings ss;
  ss.exec = es;
  ss.pool_size = 1;
  auto sandbox = sys.spawn(actors::sql_sandbox, ss);
  caf::scoped_actor self{sys};
  domain::sql_exec_request req;
  req.request_id = "bench";
  req.sql = o.sql;
  req.max_rows = 200;
  int64_t expected = base.run(o.sql);
  if (expected < 0) {
    std::fprintf(stderr, "bench_sandbox: the statement does not prepare\n");
    return 1;
  }
  bool failed = false;
  auto through_actor = [&] {
    self->request(sandbox, std::chrono::seconds{30}, atom::exec_v, req)
      .receive(
        [&](domain::sql_exec_result& r) {
          failed = failed || r.row_count != expected;
        },
        [&](caf::error&) { failed = true; });
  };
  auto through_process = [&] {
    auto r = proc->run(req, std::chrono::milliseconds{5000});
    failed = failed || !r || r->row_count != expected;
  };
  auto time = [](auto&& f) {
    auto t0 = clock_type::now();
    f();
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0)
      .count();
  };
  std::vector<double> t_base;
  std::vector<double> t_proc;
  std::vector<double> t_actor;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    auto a = time([&] { base.run(o.sql); });
    auto b = time(through_process);
    auto c = time(through_actor);
    if (i >= o.warmup) {
      t_base.push_back(a);
      t_proc.push_back(b);
      t_actor.push_back(c);
    }
  }
  caf::anon_send_exit(sandbox, caf::exit_reason::user_shutdown);
  if (failed) {
    std::fprintf(stderr, "bench_sandbox: a sandboxed run failed or returned "
                         "other rows\n");
    return 1;
  }
  std::printf("statement: %s\nrows: %lld, iterations: %d (after %d warm-up)"
              "\n",
              o.sql.c_str(), static_cast<long long>(expected), o.iterations,
              o.warmup);
  auto base_p50 = percentile(t_base, 0.5);
  print_line("inproc", t_base, -1);
  print_line("process", t_proc, base_p50);
  print_line("actor", t_actor, base_p50);
  auto overhead = percentile(t_actor, 0.5) - base_p50;
  std::printf("target: P50 overhead of the sandbox <= 500 us: %s (%.1f us)\n",
              overhead <= 500 ? "PASS" : "MISS", overhead);
  return 0;
}
