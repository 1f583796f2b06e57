// The ledger on a real PostgreSQL 15 (a throw-away cluster): the same
// /stats and /runs JSON as the SQLite ledger for the same batches, several
// writers creating the schema at once and writing side by side, a lost
// connection opened again by the next write, and storage faults told from
// row faults.

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "data/ledger/pg_sql.hpp"
#include "data/ledger/store.hpp"
#include "data/ledger/writer.hpp"
#include "data/telemetry.hpp"
#include "data/pg/connection.hpp"
#include "tests/support/key_checks.hpp"
#include "tests/support/ledger_rows.hpp"
#include "tests/support/pg_cluster.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;
using namespace candor::test::ledger_rows;

namespace {

/// One cluster for the suite (started by its first test, stopped at exit:
/// initdb costs more than the tests), and a fresh database per test.
test::pg_cluster& shared_cluster() {
  static test::pg_cluster cluster;
  return cluster;
}

struct ledger_cluster {
  test::pg_cluster& cluster = shared_cluster();
  std::string db;
  std::string dsn;

  ledger_cluster() {
    static int n = 0;
    db = "ledger_" + std::to_string(++n);
    auto c = admin();
    BOOST_REQUIRE(!c.exec("CREATE DATABASE " + pg::quote_ident(db)));
    dsn = cluster.dsn(db);
  }

  /// Ends the ledger's sessions on this test's database, as a server
  /// restart would; returns how many.
  int64_t end_ledger_sessions(pg::connection& admin) const {
    auto r = admin.query("SELECT count(pg_terminate_backend(pid)) FROM "
                         "pg_stat_activity WHERE datname = $1 AND "
                         "application_name = 'candor-ledger'",
                         {db});
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    return std::stoll(*r->values.at(0).at(0));
  }

  pg::connection admin() const {
    auto c = pg::connection::open(cluster.dsn());
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
    return std::move(*c);
  }
};

ledger_store open_pg(const std::string& dsn, bool writer) {
  auto store = ledger_store::open_postgres(dsn, writer);
  BOOST_REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.err().message));
  return std::move(*store);
}

constexpr int64_t t0 = 1'700'000'000'000'000;

/// Batches with every kind of row and every case /stats and /runs tell
/// apart: routes, statuses, HTTP errors, failed and fallen-back model calls,
/// a planner's and a model's SQL, warnings, costs, and a request id a
/// client used twice (its second request's window).
std::vector<ledger_batch> sample_batches() {
  std::vector<ledger_batch> out(3);
  const char* routes[] = {"docs", "data", "out_of_scope", ""};
  const char* statuses[]
    = {"answered", "refused", "blocked", "", "no_results", "error"};
  for (int i = 0; i < 40; ++i) {
    auto id = "req-" + std::to_string(i);
    auto ts = t0 + i * 1'000'000;
    auto status = statuses[i % 6];
    int http = status[0] == '\0' ? (i % 2 ? 404 : 503) : 200;
    auto r = request(id, ts, routes[i % 4], status, http, 1000 + i * 37 % 11);
    r.latency_us = 1500 + (i * 7919) % 20000;
    r.question = "question " + std::to_string(i) + " \xC3\xA9t\xC3\xA9";
    r.llm_calls = i % 3;
    r.tokens = 10 * i;
    r.cost_usd = 0.000123 * i;
    if (i % 5 == 0)
      r.warnings = {"request_id_replaced", "w" + std::to_string(i)};
    if (http == 503)
      r.error = "llm_unavailable";
    else if (http == 404)
      r.error = "not_found";
    auto& b = out[static_cast<size_t>(i % 3)];
    b.requests.push_back(r);
    b.traces.push_back(trace_of(id, ts, {"ok", "docs", "answered"}));
    auto call = llm_call(id, ts + 10, i % 4 ? "ok" : "unavailable", i % 3,
                         i % 7 == 0, 100 + i, 20 + i, 0.0000173 * i);
    if (i % 6 == 1) {
      call.prompt = "sql_generate";
      call.provider = i % 12 == 1 ? "local" : "openai";
      call.local_fallback = i % 12 == 1;
    }
    call.tokens_estimated = i % 2 == 0;
    b.llm_calls.push_back(call);
    if (i % 4 == 1) {
      domain::sql_audit_record a;
      a.request_id = id;
      a.ts_us = ts + 20;
      a.sql = "SELECT count(*) FROM orders WHERE id = " + std::to_string(i);
      a.verdict = i % 8 == 1 ? "allow" : "block";
      a.layer = "policy";
      a.reason = i % 8 == 1 ? "" : "writes";
      a.rows = i;
      a.latency_us = 300 + i;
      b.sql_audits.push_back(a);
    }
  }
  // A reused id: a later request with its own trace, call and statement.
  auto ts = t0 + 100'000'000;
  auto again = request("req-7", ts, "docs", "answered", 200, 5000);
  again.question = "the same id again";
  out[2].requests.push_back(again);
  out[2].traces.push_back(trace_of("req-7", ts, {"again", "answered"}));
  out[2].llm_calls.push_back(
    llm_call("req-7", ts + 5, "ok", 0, false, 1, 2, 0.5));
  // A trace without a request row (an HTTP error the supervisor traced).
  out[1].traces.push_back(trace_of("trace-only", t0 + 5, {"timeout"}));
  return out;
}

void write_all(ledger_store& store, const std::vector<ledger_batch>& batches) {
  for (auto& b : batches) {
    auto err = store.write(b);
    BOOST_REQUIRE_MESSAGE(!err, err.message);
  }
}

std::string text(const domain::outcome<std::string>& r) {
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  return *r;
}

int64_t rows_of(pg::connection& c, const std::string& sql) {
  auto r = c.query(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  return std::stoll(*r->values.at(0).at(0));
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(data_ledger_postgres, ledger_cluster)

BOOST_AUTO_TEST_CASE(the_same_json_as_the_sqlite_ledger) {
  test::temp_dir dir;
  auto batches = sample_batches();
  auto lite = open_store(dir.file("ledger.db"), true);
  write_all(lite, batches);
  auto pg = open_pg(dsn, true);
  BOOST_TEST(std::string{pg.backend_name()} == "postgres");
  BOOST_TEST(std::string{lite.backend_name()} == "sqlite");
  write_all(pg, batches);
  auto reader = open_pg(dsn, false);
  BOOST_TEST(count(reader) == 41);
  // Windows: everything, a part, nothing; fictional and real cost.
  struct window {
    const char* label;
    int64_t seconds;
    int64_t now;
  };
  for (auto w :
       {window{"1h", 3600, t0 + 200'000'000},
        window{"15s", 15, t0 + 25'000'000}, window{"1s", 1, t0 - 10'000'000}})
    for (bool fictional : {true, false}) {
      auto want = text(lite.stats_json(w.label, w.seconds, w.now, fictional));
      BOOST_TEST(text(reader.stats_json(w.label, w.seconds, w.now, fictional))
                   == want,
                 "window " << w.label);
    }
  // The 1h window has every request: a figure of each kind is not zero.
  auto all = parse(lite.stats_json("1h", 3600, t0 + 200'000'000, false));
  BOOST_TEST(all.at("totals").at("requests").as_int64() == 41);
  BOOST_TEST(all.at("llm").at("sqlByPlanner").as_int64() > 0);
  BOOST_TEST(all.at("llm").at("localFallbacks").as_int64() > 0);
  BOOST_TEST(all.at("clientErrors").as_int64() > 0);
  for (int i = 0; i < 40; ++i) {
    auto id = "req-" + std::to_string(i);
    BOOST_TEST(text(reader.run_json(id)) == text(lite.run_json(id)), id);
  }
  BOOST_TEST(text(reader.run_json("trace-only"))
             == text(lite.run_json("trace-only")));
  auto reused = parse(reader.run_json("req-7"));
  BOOST_TEST(reused.at("requestsWithId").as_int64() == 2);
  BOOST_TEST(reused.at("trace").as_array().size() == 2u);
  auto missing = reader.run_json("no-such-id");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.err().code == domain::ec::not_found);
  // The writer's own connection reads the same.
  BOOST_TEST(text(pg.run_json("req-5")) == text(lite.run_json("req-5")));
}

BOOST_AUTO_TEST_CASE(writers_starting_at_once_share_one_schema) {
  // Four writers open (and so create the schema) at the same moment.
  constexpr int n = 4;
  std::vector<std::optional<ledger_store>> stores(n);
  std::vector<std::string> errors(n);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < n)
        std::this_thread::yield();
      auto s = ledger_store::open_postgres(dsn, true);
      if (s.ok())
        stores[static_cast<size_t>(i)].emplace(std::move(*s));
      else
        errors[static_cast<size_t>(i)] = s.err().message;
    });
  for (auto& t : threads)
    t.join();
  for (int i = 0; i < n; ++i)
    BOOST_TEST_REQUIRE(errors[static_cast<size_t>(i)].empty(),
                       errors[static_cast<size_t>(i)]);
  auto admin = pg::connection::open(dsn);
  BOOST_REQUIRE(admin.ok());
  BOOST_TEST(
    rows_of(*admin, "SELECT count(*) FROM candor_ledger.schema_version")
    == ledger_pg_sql::schema_version); // one row per version: created once
  // Two of them write at the same time, as two processes would.
  constexpr int per_writer = 300;
  std::vector<std::thread> writers;
  std::vector<std::string> write_errors(2);
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&, w] {
      for (int k = 0; k < per_writer; k += 30) {
        ledger_batch b;
        for (int j = k; j < k + 30; ++j) {
          auto id = "w" + std::to_string(w) + "-" + std::to_string(j);
          b.requests.push_back(
            request(id, t0 + j, "docs", "answered", 200, 1000));
          b.traces.push_back(trace_of(id, t0 + j, {"ok"}));
        }
        if (auto err = stores[static_cast<size_t>(w)]->write(b)) {
          write_errors[static_cast<size_t>(w)] = err.message;
          return;
        }
      }
    });
  for (auto& t : writers)
    t.join();
  BOOST_TEST(write_errors[0].empty(), write_errors[0]);
  BOOST_TEST(write_errors[1].empty(), write_errors[1]);
  // A reader sees both writers' rows, each once.
  auto reader = open_pg(dsn, false);
  BOOST_TEST(count(reader) == 2 * per_writer);
  BOOST_TEST(parse(reader.run_json("w0-17")).at("trace").as_array().size()
             == 1u);
  BOOST_TEST(
    parse(reader.run_json("w1-299")).at("request").at("requestId").as_string()
    == "w1-299");
  BOOST_TEST(rows_of(*admin, "SELECT count(DISTINCT request_id) FROM "
                             "candor_ledger.requests")
             == 2 * per_writer);
  // A reader cannot write.
  BOOST_TEST(static_cast<bool>(reader.write(
    {{request("r-only", t0, "docs", "answered", 200, 1)}, {}, {}, {}})));
}

BOOST_AUTO_TEST_CASE(a_lost_connection_is_opened_again_and_no_row_is_lost) {
  auto writer = open_pg(dsn, true);
  auto reader = open_pg(dsn, false);
  auto admin = this->admin();
  auto batch = [](const std::string& id) {
    ledger_batch b;
    b.requests.push_back(request(id, t0, "docs", "answered", 200, 10));
    return b;
  };
  BOOST_REQUIRE(!writer.write(batch("before-1")));
  // The server ends both sessions (a restart, a failover): the next write
  // and the next read open new ones.
  BOOST_TEST(end_ledger_sessions(admin) == 2);
  auto err = writer.write(batch("after-1"));
  BOOST_TEST(!err, err.message);
  BOOST_TEST(count(reader) == 2);
  // No connection possible: a storage fault, the batch is kept by the
  // caller and written once the database is back.
  BOOST_REQUIRE(!admin.exec("ALTER DATABASE " + pg::quote_ident(db)
                            + " ALLOW_CONNECTIONS false"));
  end_ledger_sessions(admin);
  err = writer.write(batch("during-1"));
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(writer.last_write_storage_fault());
  BOOST_TEST(!reader.count_requests().ok());
  BOOST_REQUIRE(!admin.exec("ALTER DATABASE " + pg::quote_ident(db)
                            + " ALLOW_CONNECTIONS true"));
  err = writer.write(batch("during-1"));
  BOOST_TEST(!err, err.message);
  BOOST_TEST(!writer.last_write_storage_fault());
  BOOST_TEST(count(reader) == 3);
}

BOOST_AUTO_TEST_CASE(the_writer_keeps_its_rows_through_an_outage) {
  auto metrics = std::make_shared<actors::telemetry>();
  actors::ledger_settings ls;
  ls.where = ledger_location::postgres(dsn);
  ls.retry_delay = std::chrono::milliseconds{20};
  ls.writer_nice = 0;
  auto rows = [](const std::string& prefix) {
    ledger_batch b;
    for (int i = 0; i < 5; ++i)
      b.requests.push_back(
        request(prefix + std::to_string(i), t0, "docs", "answered", 200, 10));
    return b;
  };
  auto admin = this->admin();
  {
    actors::ledger_writer writer{open_pg(dsn, true), metrics, ls};
    // The database goes away: the batch fails, again and again, and waits.
    BOOST_REQUIRE(!admin.exec("ALTER DATABASE " + pg::quote_ident(db)
                              + " ALLOW_CONNECTIONS false"));
    end_ledger_sessions(admin);
    writer.submit(rows("outage-"), nullptr);
    for (int i = 0; i < 250 && metrics->ledger_failure().empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    BOOST_TEST(!metrics->ledger_failure().empty());
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
    BOOST_TEST(metrics->ledger_backlog_records() == 5);
    // Back: the kept batch is written, then the next one.
    BOOST_REQUIRE(!admin.exec("ALTER DATABASE " + pg::quote_ident(db)
                              + " ALLOW_CONNECTIONS true"));
    std::promise<int64_t> written;
    writer.submit(rows("after-"), [&](int64_t n) { written.set_value(n); });
    auto done = written.get_future();
    BOOST_REQUIRE(done.wait_for(std::chrono::seconds{10})
                  == std::future_status::ready);
    BOOST_TEST(done.get() == 10);
  }
  BOOST_TEST(metrics->ledger_failure().empty());
  auto reader = open_pg(dsn, false);
  BOOST_TEST(count(reader) == 10);
  BOOST_TEST(parse(reader.run_json("outage-4")).at("request").is_object());
}

BOOST_AUTO_TEST_CASE(a_refused_row_is_a_row_fault_and_writes_nothing) {
  auto writer = open_pg(dsn, true);
  ledger_batch b;
  b.requests.push_back(request("fine-1", t0, "docs", "answered", 200, 10));
  auto bad = request("bad-utf8", t0, "docs", "answered", 200, 10);
  bad.question = "not UTF-8: \xFF\xFE";
  b.requests.push_back(bad);
  auto err = writer.write(b);
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(!writer.last_write_storage_fault());
  // All or nothing: the good row went with the bad one.
  BOOST_TEST(count(writer) == 0);
  // NUL bytes cannot be stored in text: they are left out, not refused.
  auto nul = request("with-nul", t0, "docs", "answered", 200, 10);
  nul.question = std::string{"a\0b", 3};
  BOOST_REQUIRE(!writer.write({{nul}, {}, {}, {}}));
  BOOST_TEST(
    parse(writer.run_json("with-nul")).at("request").at("question").as_string()
    == "ab");
}

BOOST_AUTO_TEST_CASE(a_role_that_only_writes_rows_needs_no_create) {
  auto admin = this->admin();
  (void)admin.exec("CREATE ROLE candor_rows LOGIN");
  auto rows_dsn = cluster.dsn(db, "candor_rows");
  // Without the schema it cannot create it, and says so.
  auto early = ledger_store::open_postgres(rows_dsn, true);
  BOOST_REQUIRE(!early.ok());
  BOOST_TEST(early.err().message.find("permission denied") != std::string::npos,
             early.err().message);
  // Created by an administrator, then rows only: USAGE, SELECT, INSERT.
  open_pg(dsn, true);
  auto owner = pg::connection::open(dsn);
  BOOST_REQUIRE(owner.ok());
  BOOST_REQUIRE(
    !owner->exec("GRANT USAGE ON SCHEMA candor_ledger TO candor_rows; "
                 "GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA candor_ledger "
                 "TO candor_rows"));
  auto writer = open_pg(rows_dsn, true);
  ledger_batch b;
  b.requests.push_back(request("rows-only-1", t0, "docs", "answered", 200, 1));
  b.traces.push_back(trace_of("rows-only-1", t0, {"ok"}));
  auto err = writer.write(b);
  BOOST_TEST(!err, err.message);
  auto reader = open_pg(rows_dsn, false);
  BOOST_TEST(count(reader) == 1);
}

BOOST_AUTO_TEST_CASE(api_keys_and_per_key_figures) {
  auto writer = open_pg(dsn, true);
  auto reader = open_pg(dsn, false);
  test::check_key_calls(writer, reader);
}

BOOST_AUTO_TEST_CASE(a_version_1_schema_is_migrated_keeping_its_rows) {
  auto db_admin = pg::connection::open(dsn);
  BOOST_REQUIRE(db_admin.ok());
  BOOST_REQUIRE(!db_admin->exec(ledger_pg_sql::schema_head));
  BOOST_REQUIRE(!db_admin->exec(ledger_pg_sql::schema_v1));
  BOOST_REQUIRE(!db_admin->exec(
    "INSERT INTO candor_ledger.requests (request_id, ts_us, method, path, "
    "route, status, blocked_by, http_status, error, latency_us, question, "
    "llm_calls, tokens, cost_usd, warnings, writer) VALUES ('old-1', 1, "
    "'POST', '/ask', 'docs', 'answered', '', 200, '', 5, 'q', 1, 7, 0, "
    "'[]', 'w')"));
  auto writer = open_pg(dsn, true);
  BOOST_TEST(count(writer) == 1);
  BOOST_TEST(rows_of(*db_admin, "SELECT max(version) FROM "
                                "candor_ledger.schema_version")
             == ledger_pg_sql::schema_version);
  auto reader = open_pg(dsn, false);
  test::check_key_calls(writer, reader);
}

BOOST_AUTO_TEST_CASE(the_reader_needs_the_schema) {
  auto reader = ledger_store::open_postgres(dsn, false);
  BOOST_REQUIRE(!reader.ok());
  BOOST_TEST(reader.err().message.find("candor_ledger") != std::string::npos,
             reader.err().message);
  auto nowhere = ledger_store::open_postgres(
    "host=/nonexistent-candor port=5432 connect_timeout=2", true);
  BOOST_TEST(!nowhere.ok());
}

BOOST_AUTO_TEST_SUITE_END()
