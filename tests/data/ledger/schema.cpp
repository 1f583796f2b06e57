// The ledger's schema versions: a version-1 database is migrated with its
// rows, a reused request id keeps every trace (and /runs shows the latest
// request's), every query uses an index.

#include "data/ledger/store.hpp"

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "data/ledger/sql.hpp"
#include "data/sqlite.hpp"
#include "tests/support/ledger_rows.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;
using namespace candor::test::ledger_rows;

BOOST_AUTO_TEST_SUITE(data_ledger_schema)

BOOST_AUTO_TEST_CASE(a_reused_request_id_keeps_every_trace_in_order) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  auto store = open_store(path, true);
  ledger_batch batch;
  batch.requests.push_back(request("again", 1, "docs", "answered", 200, 1));
  batch.traces.push_back(trace_of("again", 1, {"a0", "a1", "a2"}));
  batch.traces.push_back(trace_of("other", 2, {"o0"}));
  batch.llm_calls.push_back(llm_call("again", 1, "first", 0, false, 1, 1, 0));
  BOOST_REQUIRE(!store.write(batch));
  batch.clear();
  // The second request with the id arrives at 3 and takes 5 us.
  batch.requests.push_back(request("again", 3, "docs", "refused", 200, 5));
  // Longer than one multi-row insert, and twice in the same batch.
  std::vector<std::string> long_trace;
  for (int i = 0; i < 10; ++i)
    long_trace.push_back("b" + std::to_string(i));
  batch.traces.push_back(trace_of("again", 3, long_trace));
  batch.traces.push_back(trace_of("again", 4, {"c0"}));
  batch.llm_calls.push_back(llm_call("again", 5, "second", 0, false, 1, 1, 0));
  batch.llm_calls.push_back(llm_call("again", 9, "later", 0, false, 1, 1, 0));
  auto err = store.write(batch);
  BOOST_REQUIRE_MESSAGE(!err, err.message);
  // Every trace is stored, in order.
  std::vector<std::string> want{"a0", "a1", "a2"};
  want.insert(want.end(), long_trace.begin(), long_trace.end());
  want.push_back("c0");
  BOOST_TEST(stored_trace_outcomes(path, "again") == want,
             boost::test_tools::per_element());
  BOOST_TEST(trace_outcomes(store, "other") == std::vector<std::string>{"o0"},
             boost::test_tools::per_element());
  // /runs shows the latest request with the id and only its rows: the trace
  // stamped with its arrival, the model calls within its 5 us.
  auto doc = parse(store.run_json("again"));
  BOOST_TEST(doc.at("requestsWithId").as_int64() == 2);
  BOOST_TEST(doc.at("request").at("status").as_string() == "refused");
  BOOST_TEST(trace_outcomes(store, "again") == long_trace,
             boost::test_tools::per_element());
  BOOST_TEST(doc.at("trace").at(0).at("seq").as_int64() == 0);
  BOOST_TEST(doc.at("trace").at(9).at("seq").as_int64() == 9);
  auto& calls = doc.at("llmCalls").as_array();
  BOOST_REQUIRE(calls.size() == 1u);
  BOOST_TEST(calls[0].at("outcome").as_string() == "second");
}

BOOST_AUTO_TEST_CASE(a_clash_after_a_gap_in_the_ords_stores_each_step_once) {
  // Rows of an id at ord 3 to 5 only (a gap before them, as a manual fix
  // or a retention delete could leave): a six-step trace for the id
  // inserts ords 0 to 2, then clashes at 3. The clashing statement must
  // leave nothing behind (plain INSERT), or the retry after the existing
  // rows would store steps 0 to 2 twice.
  temp_dir dir;
  auto path = dir.file("ledger.db");
  auto store = open_store(path, true);
  {
    auto raw = open_raw(path);
    for (int ord = 3; ord <= 5; ++ord)
      BOOST_REQUIRE(
        !raw.exec("INSERT INTO trace_steps (request_id, ord, ts_us, seq, node, "
                  "outcome, micros) VALUES ('gap', "
                  + std::to_string(ord) + ", 1, " + std::to_string(ord - 3)
                  + ", 'router', 'old" + std::to_string(ord) + "', 1)"));
  }
  ledger_batch batch;
  batch.traces.push_back(
    trace_of("gap", 2, {"n0", "n1", "n2", "n3", "n4", "n5"}));
  auto err = store.write(batch);
  BOOST_REQUIRE_MESSAGE(!err, err.message);
  std::vector<std::string> want{"old3", "old4", "old5", "n0", "n1",
                                "n2",   "n3",   "n4",   "n5"};
  BOOST_TEST(trace_outcomes(store, "gap") == want,
             boost::test_tools::per_element());
}

// A database written by a version 1 build (users' data directories) opens,
// is migrated in place and keeps every row; writes go on after it.
BOOST_AUTO_TEST_CASE(a_version_1_database_is_migrated_with_its_rows) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  {
    auto raw = open_raw(path);
    BOOST_REQUIRE(!raw.exec("PRAGMA journal_mode = WAL"));
    BOOST_REQUIRE(!raw.exec(ledger_sql::schema_v1));
    // What a v1 writer stored: two runs, "old-1" with a reused id (two
    // traces, interleaved with another run's rows by rowid), and a model
    // call and an SQL statement.
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO requests (request_id, ts_us, method, path, route, "
      "status, blocked_by, http_status, error, latency_us, question, "
      "llm_calls, tokens, cost_usd, warnings) VALUES "
      "('old-1', 100, 'POST', '/ask', 'data', 'answered', '', 200, '', 5000, "
      "'How many orders?', 1, 42, 0.5, '[\"w1\"]'), "
      "('old-2', 200, 'POST', '/ask', 'docs', 'refused', '', 200, '', 7000, "
      "'q2', 0, 0, 0.0, '[]')"));
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO trace_steps (request_id, ts_us, seq, node, outcome, "
      "micros) VALUES "
      "('old-1', 100, 0, 'guard_input', 'pass', 11), "
      "('old-2', 200, 0, 'guard_input', 'pass', 21), "
      "('old-1', 100, 1, 'router', 'data', 12), "
      "('old-1', 150, 0, 'guard_input', 'again', 13), "
      "('old-2', 200, 1, 'router', 'docs', 22)"));
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO llm_calls (request_id, ts_us, prompt, prompt_version, "
      "provider, model, attempts, retries, fallback_used, outcome, "
      "tokens_in, tokens_out, tokens_estimated, cost_usd, latency_us) "
      "VALUES ('old-1', 110, 'router', 'v1', 'fake', 'm', 1, 0, 0, 'ok', 30, "
      "12, 0, 0.5, 900)"));
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO sql_audit (request_id, ts_us, sql, verdict, layer, "
      "reason, rows, latency_us) VALUES ('old-1', 120, 'SELECT 1', 'allow', "
      "'sql_authorizer', '', 1, 80)"));
    auto version = raw.query_int64("PRAGMA user_version");
    BOOST_REQUIRE(version.ok());
    BOOST_REQUIRE(*version == 1);
  }
  {
    auto store = open_store(path, true);
    BOOST_TEST(count(store) == 2);
    auto doc = parse(store.run_json("old-1"));
    auto& r = doc.at("request");
    BOOST_TEST(r.at("question").as_string() == "How many orders?");
    BOOST_TEST(r.at("tokens").as_int64() == 42);
    BOOST_TEST(r.at("warnings").at(0).as_string() == "w1");
    // Every trace row is kept; with one request row for the id, /runs
    // shows them all.
    BOOST_TEST(trace_outcomes(store, "old-1")
                 == (std::vector<std::string>{"pass", "data", "again"}),
               boost::test_tools::per_element());
    BOOST_TEST(doc.at("trace").at(1).at("node").as_string() == "router");
    BOOST_TEST(doc.at("trace").at(1).at("micros").as_int64() == 12);
    BOOST_TEST(doc.at("trace").at(2).at("seq").as_int64() == 0);
    BOOST_TEST(doc.at("llmCalls").as_array().size() == 1u);
    BOOST_TEST(doc.at("sqlAudit").at(0).at("sql").as_string() == "SELECT 1");
    BOOST_TEST(trace_outcomes(store, "old-2")
                 == (std::vector<std::string>{"pass", "docs"}),
               boost::test_tools::per_element());
    auto stats = parse(store.stats_json("1h", 3600, 1000, true));
    BOOST_TEST(stats.at("totals").at("requests").as_int64() == 2);
    BOOST_TEST(stats.at("llm").at("tokensIn").as_int64() == 30);
    // New rows after the migration, one of them on a migrated id.
    ledger_batch batch;
    batch.requests.push_back(request("new-1", 300, "docs", "answered", 200, 1));
    batch.traces.push_back(trace_of("new-1", 300, {"n0", "n1"}));
    batch.traces.push_back(trace_of("old-1", 400, {"late"}));
    auto err = store.write(batch);
    BOOST_REQUIRE_MESSAGE(!err, err.message);
    BOOST_TEST(count(store) == 3);
    BOOST_TEST(trace_outcomes(store, "new-1")
                 == (std::vector<std::string>{"n0", "n1"}),
               boost::test_tools::per_element());
    BOOST_TEST(stored_trace_outcomes(path, "old-1")
                 == (std::vector<std::string>{"pass", "data", "again", "late"}),
               boost::test_tools::per_element());
  }
  auto raw = open_raw(path);
  auto version = raw.query_int64("PRAGMA user_version");
  BOOST_REQUIRE(version.ok());
  BOOST_TEST(*version == ledger_schema_version);
  auto steps = raw.query_int64("SELECT COUNT(*) FROM trace_steps");
  BOOST_REQUIRE(steps.ok());
  BOOST_TEST(*steps == 8);
  auto leftovers = raw.query_int64(
    "SELECT COUNT(*) FROM sqlite_schema WHERE name IN "
    "('trace_steps_v2', 'trace_steps_request_id', 'sql_audit_ts_us')");
  BOOST_REQUIRE(leftovers.ok());
  BOOST_TEST(*leftovers == 0);
  auto check = raw.query_text("PRAGMA integrity_check");
  BOOST_REQUIRE(check.ok());
  BOOST_TEST(*check == "ok");
  // A reader opens the migrated database.
  auto reader = open_store(path, false);
  BOOST_TEST(count(reader) == 3);
}

// A version 2 database (before local fallbacks) gains the local_fallback
// column, 0 on its rows; a local fallback written after it is counted by
// /stats and shown by /runs.
BOOST_AUTO_TEST_CASE(a_version_2_database_gains_the_local_fallback_column) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  {
    auto raw = open_raw(path);
    BOOST_REQUIRE(!raw.exec("PRAGMA journal_mode = WAL"));
    BOOST_REQUIRE(!raw.exec(ledger_sql::schema_v1));
    BOOST_REQUIRE(!raw.exec(ledger_sql::migrate_v1_to_v2));
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO llm_calls (request_id, ts_us, prompt, prompt_version, "
      "provider, model, attempts, retries, fallback_used, outcome, "
      "tokens_in, tokens_out, tokens_estimated, cost_usd, latency_us) "
      "VALUES ('v2-1', 110, 'router', 'v1', 'openai', 'm', 1, 0, 0, 'ok', 30, "
      "12, 0, 0.5, 900)"));
    auto version = raw.query_int64("PRAGMA user_version");
    BOOST_REQUIRE(version.ok());
    BOOST_REQUIRE(*version == 2);
  }
  auto store = open_store(path, true);
  auto stats = parse(store.stats_json("1h", 3600, 1000, false));
  BOOST_TEST(stats.at("llm").at("calls").as_int64() == 1);
  BOOST_TEST(stats.at("llm").at("localFallbacks").as_int64() == 0);
  ledger_batch batch;
  batch.requests.push_back(request("v3-1", 200, "docs", "answered", 200, 50));
  auto call = llm_call("v3-1", 210, "ok", 1, false, 0, 0, 0);
  call.provider = "local";
  call.model = "candor-local";
  call.local_fallback = true;
  batch.llm_calls.push_back(call);
  auto err = store.write(batch);
  BOOST_REQUIRE_MESSAGE(!err, err.message);
  stats = parse(store.stats_json("1h", 3600, 1000, false));
  BOOST_TEST(stats.at("llm").at("calls").as_int64() == 2);
  BOOST_TEST(stats.at("llm").at("localFallbacks").as_int64() == 1);
  BOOST_TEST(stats.at("llm").at("fallbacks").as_int64() == 0);
  auto doc = parse(store.run_json("v3-1"));
  auto& calls = doc.at("llmCalls").as_array();
  BOOST_REQUIRE(calls.size() == 1u);
  BOOST_TEST(calls[0].at("localFallback").as_bool());
  BOOST_TEST(calls[0].at("provider").as_string() == "local");
  auto raw = open_raw(path);
  auto version = raw.query_int64("PRAGMA user_version");
  BOOST_REQUIRE(version.ok());
  BOOST_TEST(*version == ledger_schema_version);
  auto migrated = raw.query_int64(
    "SELECT local_fallback FROM llm_calls WHERE request_id = 'v2-1'");
  BOOST_REQUIRE(migrated.ok());
  BOOST_TEST(*migrated == 0);
}

// Every query the ledger runs reads through an index (or the trace table's
// primary key), so /stats and /runs stay fast as the ledger grows; the
// trace comes back in key order without a sort.
BOOST_AUTO_TEST_CASE(every_ledger_query_uses_an_index) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  { open_store(path, true); }
  auto raw = open_raw(path);
  struct want {
    const char* sql;
    const char* plan;
  };
  const want queries[] = {
    {ledger_sql::stats_requests_sql,
     "SEARCH requests USING INDEX requests_ts_us"},
    {ledger_sql::stats_llm_sql, "SEARCH llm_calls USING INDEX llm_calls_ts_us"},
    {ledger_sql::run_request_sql,
     "SEARCH requests USING INDEX requests_request_id"},
    {ledger_sql::run_request_count_sql,
     "SEARCH requests USING COVERING INDEX requests_request_id"},
    {ledger_sql::run_trace_sql, "SEARCH trace_steps USING PRIMARY KEY"},
    {ledger_sql::run_llm_calls_sql,
     "SEARCH llm_calls USING INDEX llm_calls_request_id"},
    {ledger_sql::run_sql_audit_sql,
     "SEARCH sql_audit USING INDEX sql_audit_request_id"},
    {ledger_sql::next_trace_ord_sql, "SEARCH trace_steps USING PRIMARY KEY"},
    {ledger_sql::stats_keys_sql, "SEARCH requests USING INDEX requests_ts_us"},
    {ledger_sql::key_tokens_since_sql,
     "SEARCH requests USING INDEX requests_ts_us"},
  };
  for (auto& q : queries) {
    auto plan = query_plan(raw, q.sql);
    BOOST_TEST(plan.find(q.plan) != std::string::npos, q.sql << ": " << plan);
  }
  auto trace_plan = query_plan(raw, ledger_sql::run_trace_sql);
  BOOST_TEST(trace_plan.find("TEMP B-TREE") == std::string::npos, trace_plan);
}

BOOST_AUTO_TEST_SUITE_END()
