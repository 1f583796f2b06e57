// Tests of the ledger store: schema creation and versions, batches of every
// kind read back through /runs and /stats, and failing batches writing nothing.

#include "data/ledger/store.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

#include "data/ledger/sql.hpp"
#include "tests/support/ledger_rows.hpp"
#include "tests/support/temp_dir.hpp"

#include "data/ledger/sql.hpp"
#include "data/sqlite.hpp"

using namespace candor;
using namespace candor::data;
namespace json = boost::json;

using namespace candor::test::ledger_rows;

BOOST_AUTO_TEST_SUITE(data_ledger_store)

BOOST_AUTO_TEST_CASE(nearest_rank_edges) {
  BOOST_TEST(nearest_rank({}, 50) == 0);
  BOOST_TEST(nearest_rank({7}, 50) == 7);
  BOOST_TEST(nearest_rank({7}, 95) == 7);
  BOOST_TEST(nearest_rank({7}, 100) == 7);
  BOOST_TEST(nearest_rank({1, 2}, 50) == 1); // rank ceil(1.0) = 1
  BOOST_TEST(nearest_rank({1, 2}, 51) == 2); // rank ceil(1.02) = 2
  BOOST_TEST(nearest_rank({1, 2}, 95) == 2); // rank ceil(1.9) = 2
  std::vector<double> ten;
  for (int i = 1; i <= 10; ++i)
    ten.push_back(i * 1.5);
  BOOST_TEST(nearest_rank(ten, 50) == 7.5);  // rank 5
  BOOST_TEST(nearest_rank(ten, 95) == 15.0); // rank ceil(9.5) = 10
  BOOST_TEST(nearest_rank(ten, 90) == 13.5); // rank 9, exactly
  BOOST_TEST(nearest_rank(ten, 10) == 1.5);  // rank 1
  BOOST_TEST(nearest_rank(ten, 0) == 1.5);   // clamped to rank 1
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i)
    hundred.push_back(i);
  BOOST_TEST(nearest_rank(hundred, 50) == 50);
  BOOST_TEST(nearest_rank(hundred, 95) == 95);
  BOOST_TEST(nearest_rank(hundred, 99) == 99);
  BOOST_TEST(nearest_rank(hundred, 100) == 100);
  BOOST_TEST(nearest_rank(hundred, 1) == 1);
  BOOST_TEST(nearest_rank(hundred, 150) == 100); // clamped to rank N
}

BOOST_AUTO_TEST_CASE(schema_is_created_once_and_reopened) {
  temp_dir dir;
  auto path = dir.file("sub/dir/ledger.db");
  {
    auto store = open_store(path, true);
    BOOST_TEST(count(store) == 0);
    ledger_batch batch;
    batch.requests.push_back(
      request("req-00000001", 10, "docs", "answered", 200, 5000));
    BOOST_REQUIRE(!store.write(batch));
  }
  {
    auto raw = open_raw(path);
    auto version = raw.query_int64("PRAGMA user_version");
    BOOST_REQUIRE(version.ok());
    BOOST_TEST(*version == ledger_schema_version);
    auto mode = raw.query_text("PRAGMA journal_mode");
    BOOST_REQUIRE(mode.ok());
    BOOST_TEST(*mode == "wal");
    auto tables = raw.query_int64(
      "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
      "('requests', 'llm_calls', 'trace_steps', 'sql_audit')");
    BOOST_REQUIRE(tables.ok());
    BOOST_TEST(*tables == 4);
    auto indexes = raw.query_int64(
      "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND "
      "tbl_name = 'requests'");
    BOOST_REQUIRE(indexes.ok());
    BOOST_TEST(*indexes == 2);
  }
  // Reopening twice keeps the data and creates nothing new.
  for (int i = 0; i < 2; ++i) {
    auto store = open_store(path, true);
    BOOST_TEST(count(store) == 1);
  }
  auto reader = open_store(path, false);
  BOOST_TEST(count(reader) == 1);
}

BOOST_AUTO_TEST_CASE(unknown_schema_versions_are_refused) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  // A reader never creates the database.
  auto early = ledger_store::open(path, false);
  BOOST_REQUIRE(!early.ok());
  BOOST_TEST((early.err().code == domain::ec::storage_failed));
  BOOST_TEST(!std::filesystem::exists(path));
  { open_store(path, true); }
  {
    auto raw = open_raw(path);
    BOOST_REQUIRE(!raw.exec("PRAGMA user_version = 99"));
  }
  auto writer = ledger_store::open(path, true);
  BOOST_REQUIRE(!writer.ok());
  BOOST_TEST((writer.err().code == domain::ec::storage_failed));
  BOOST_TEST(writer.err().message.find("99") != std::string::npos,
             writer.err().message);
  auto reader = ledger_store::open(path, false);
  BOOST_REQUIRE(!reader.ok());
  BOOST_TEST(reader.err().message.find("99") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_batch_of_every_kind_reads_back_through_run_json) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  const std::string id = "run-abcdef12";
  ledger_batch batch;
  auto req
    = request(id, 1'700'000'000'000'000, "data", "answered", 200, 48'500);
  req.blocked_by = "";
  req.question = "What was revenue in \"March\"?";
  req.llm_calls = 2;
  req.tokens = 321;
  req.cost_usd = 0.000125;
  req.warnings = {"request_id_replaced", "citation_dropped"};
  batch.requests.push_back(req);
  // Another run in the same batch must not leak into this one.
  batch.requests.push_back(
    request("run-other000", 5, "docs", "refused", 200, 1));
  batch.llm_calls.push_back(
    llm_call(id, 1'700'000'000'000'100, "ok", 1, false, 200, 21, 0.0001));
  batch.llm_calls.push_back(
    llm_call(id, 1'700'000'000'000'200, "ok", 0, true, 90, 10, 0.000025));
  batch.llm_calls.push_back(
    llm_call("run-other000", 6, "ok", 0, false, 1, 1, 0));
  domain::trace_record trace;
  trace.request_id = id;
  trace.ts_us = 1'700'000'000'000'000;
  trace.steps = {{domain::node::guard_input, "pass", 12},
                 {domain::node::router, "data", 340},
                 {domain::node::sql_generate, "ok", 20'000},
                 {domain::node::finalize, "answered", 7}};
  batch.traces.push_back(trace);
  domain::sql_audit_record audit;
  audit.request_id = id;
  audit.ts_us = 1'700'000'000'000'300;
  audit.sql = "SELECT SUM(total_cents) FROM orders WHERE status = 'paid'";
  audit.verdict = "allow";
  audit.layer = "sql_authorizer";
  audit.reason = "";
  audit.rows = 1;
  audit.latency_us = 800;
  batch.sql_audits.push_back(audit);
  audit.sql = "DELETE FROM orders";
  audit.verdict = "block";
  audit.layer = "sql_policy";
  audit.reason = "forbidden keyword DELETE";
  audit.rows = 0;
  batch.sql_audits.push_back(audit);
  BOOST_TEST(batch.size() == 8u);
  BOOST_TEST(!batch.empty());
  BOOST_REQUIRE(!store.write(batch));

  auto doc = parse(store.run_json(id));
  auto& o = doc.as_object();
  BOOST_TEST(o.at("requestId").as_string() == id);
  auto& r = o.at("request").as_object();
  BOOST_TEST(r.at("requestId").as_string() == id);
  BOOST_TEST(r.at("tsUs").as_int64() == 1'700'000'000'000'000);
  BOOST_TEST(r.at("method").as_string() == "POST");
  BOOST_TEST(r.at("path").as_string() == "/ask");
  BOOST_TEST(r.at("route").as_string() == "data");
  BOOST_TEST(r.at("status").as_string() == "answered");
  BOOST_TEST(r.at("blockedBy").as_string() == "");
  BOOST_TEST(r.at("httpStatus").as_int64() == 200);
  BOOST_TEST(r.at("error").as_string() == "");
  BOOST_TEST(r.at("latencyUs").as_int64() == 48'500);
  BOOST_TEST(r.at("question").as_string() == req.question);
  BOOST_TEST(r.at("llmCalls").as_int64() == 2);
  BOOST_TEST(r.at("tokens").as_int64() == 321);
  BOOST_TEST(r.at("costUsd").as_double() == 0.000125);
  auto& warnings = r.at("warnings").as_array();
  BOOST_REQUIRE(warnings.size() == 2u);
  BOOST_TEST(warnings[0].as_string() == "request_id_replaced");
  BOOST_TEST(warnings[1].as_string() == "citation_dropped");

  auto& steps = o.at("trace").as_array();
  BOOST_REQUIRE(steps.size() == 4u);
  const char* nodes[] = {"guard_input", "router", "sql_generate", "finalize"};
  const char* outcomes[] = {"pass", "data", "ok", "answered"};
  const int64_t micros[] = {12, 340, 20'000, 7};
  for (size_t i = 0; i < 4; ++i) {
    auto& s = steps[i].as_object();
    BOOST_TEST(s.at("seq").as_int64() == static_cast<int64_t>(i));
    BOOST_TEST(s.at("node").as_string() == nodes[i]);
    BOOST_TEST(s.at("outcome").as_string() == outcomes[i]);
    BOOST_TEST(s.at("micros").as_int64() == micros[i]);
  }

  auto& calls = o.at("llmCalls").as_array();
  BOOST_REQUIRE(calls.size() == 2u);
  auto& c0 = calls[0].as_object();
  BOOST_TEST(c0.at("tsUs").as_int64() == 1'700'000'000'000'100);
  BOOST_TEST(c0.at("prompt").as_string() == "router");
  BOOST_TEST(c0.at("promptVersion").as_string() == "v1");
  BOOST_TEST(c0.at("provider").as_string() == "fake");
  BOOST_TEST(c0.at("model").as_string() == "scripted-small");
  BOOST_TEST(c0.at("attempts").as_int64() == 2);
  BOOST_TEST(c0.at("retries").as_int64() == 1);
  BOOST_TEST(c0.at("fallbackUsed").as_bool() == false);
  BOOST_TEST(c0.at("outcome").as_string() == "ok");
  BOOST_TEST(c0.at("tokensIn").as_int64() == 200);
  BOOST_TEST(c0.at("tokensOut").as_int64() == 21);
  BOOST_TEST(c0.at("tokensEstimated").as_bool() == true);
  BOOST_TEST(c0.at("costUsd").as_double() == 0.0001);
  BOOST_TEST(c0.at("latencyUs").as_int64() == 1234);
  auto& c1 = calls[1].as_object();
  BOOST_TEST(c1.at("fallbackUsed").as_bool() == true);
  BOOST_TEST(c1.at("tokensIn").as_int64() == 90);

  auto& audits = o.at("sqlAudit").as_array();
  BOOST_REQUIRE(audits.size() == 2u);
  auto& a0 = audits[0].as_object();
  BOOST_TEST(a0.at("tsUs").as_int64() == 1'700'000'000'000'300);
  BOOST_TEST(a0.at("sql").as_string()
             == "SELECT SUM(total_cents) FROM orders WHERE status = 'paid'");
  BOOST_TEST(a0.at("verdict").as_string() == "allow");
  BOOST_TEST(a0.at("layer").as_string() == "sql_authorizer");
  BOOST_TEST(a0.at("rows").as_int64() == 1);
  BOOST_TEST(a0.at("latencyUs").as_int64() == 800);
  auto& a1 = audits[1].as_object();
  BOOST_TEST(a1.at("verdict").as_string() == "block");
  BOOST_TEST(a1.at("reason").as_string() == "forbidden keyword DELETE");

  // The other run sees only its own rows.
  auto other = parse(store.run_json("run-other000"));
  BOOST_TEST(other.at("request").at("status").as_string() == "refused");
  BOOST_TEST(other.at("trace").as_array().empty());
  BOOST_TEST(other.at("llmCalls").as_array().size() == 1u);
  BOOST_TEST(other.at("sqlAudit").as_array().empty());
}

BOOST_AUTO_TEST_CASE(unknown_run_is_not_found_and_a_trace_alone_is_found) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  auto missing = store.run_json("does-not-exist");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST((missing.err().code == domain::ec::not_found));
  // Model calls alone do not make a run.
  ledger_batch batch;
  batch.llm_calls.push_back(llm_call("calls-only", 1, "ok", 0, false, 1, 1, 0));
  domain::trace_record trace;
  trace.request_id = "trace-only";
  trace.steps = {{domain::node::guard_input, "block", 3}};
  batch.traces.push_back(trace);
  BOOST_REQUIRE(!store.write(batch));
  auto calls_only = store.run_json("calls-only");
  BOOST_REQUIRE(!calls_only.ok());
  BOOST_TEST((calls_only.err().code == domain::ec::not_found));
  auto doc = parse(store.run_json("trace-only"));
  BOOST_TEST(doc.at("request").is_null());
  BOOST_REQUIRE(doc.at("trace").as_array().size() == 1u);
  BOOST_TEST(doc.at("trace").at(0).at("outcome").as_string() == "block");
}

// Steps are inserted several rows per statement: traces of every length
// around that grouping come back whole and in order.
BOOST_AUTO_TEST_CASE(traces_of_any_length_are_stored_whole_and_in_order) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  ledger_batch batch;
  for (size_t len : {1u, 7u, 8u, 9u, 16u, 19u, 25u}) {
    domain::trace_record trace;
    trace.request_id = "trace-len-" + std::to_string(len);
    trace.ts_us = 1'700'000'000'000'000 + static_cast<int64_t>(len);
    for (size_t i = 0; i < len; ++i)
      trace.steps.push_back(
        {i % 2 ? domain::node::router : domain::node::guard_input,
         "step-" + std::to_string(i), static_cast<int64_t>(100 + i)});
    batch.traces.push_back(trace);
  }
  BOOST_REQUIRE(!store.write(batch));
  for (size_t len : {1u, 7u, 8u, 9u, 16u, 19u, 25u}) {
    auto doc = parse(store.run_json("trace-len-" + std::to_string(len)));
    auto& steps = doc.at("trace").as_array();
    BOOST_REQUIRE_EQUAL(steps.size(), len);
    for (size_t i = 0; i < len; ++i) {
      BOOST_TEST(steps[i].at("seq").as_int64() == static_cast<int64_t>(i));
      BOOST_TEST(steps[i].at("outcome").as_string()
                 == "step-" + std::to_string(i));
      BOOST_TEST(steps[i].at("micros").as_int64()
                 == static_cast<int64_t>(100 + i));
      BOOST_TEST(steps[i].at("node").as_string()
                 == (i % 2 ? "router" : "guard_input"));
    }
  }
}

BOOST_AUTO_TEST_CASE(ten_thousand_requests_in_batches) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  ledger_batch batch;
  BOOST_TEST(batch.empty());
  BOOST_TEST(!store.write(batch)); // an empty batch is fine
  for (int b = 0; b < 20; ++b) {
    batch.clear();
    for (int i = 0; i < 500; ++i) {
      auto n = b * 500 + i;
      batch.requests.push_back(
        request("bulk-" + std::to_string(n), n, "docs", "answered", 200, n));
    }
    BOOST_REQUIRE(batch.size() == 500u);
    auto err = store.write(batch);
    BOOST_REQUIRE_MESSAGE(!err, err.message);
  }
  BOOST_TEST(count(store) == 10'000);
  auto last = parse(store.run_json("bulk-9999"));
  BOOST_TEST(last.at("request").at("tsUs").as_int64() == 9999);
}

// Requests and model calls go in several rows per statement: every row of
// every chunk (full, partial, a lone last row) lands with its own values,
// and a run's model calls keep their order across chunk boundaries.
BOOST_AUTO_TEST_CASE(multi_row_inserts_keep_every_row_and_its_values) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  const auto per = ledger_sql::rows_per_insert;
  for (size_t n : {size_t{1}, per - 1, per, 2 * per + 1}) {
    ledger_batch batch;
    auto prefix = "m" + std::to_string(n) + "-";
    for (size_t i = 0; i < n; ++i) {
      auto id = prefix + std::to_string(i);
      auto ts = static_cast<int64_t>(1000 * n + i);
      // The first run lasts the whole batch: its model calls (below) fall
      // within it.
      auto latency = static_cast<int64_t>(i == 0 ? n : i);
      auto r = request(id, ts, "data", "answered", 200, latency);
      r.question = "question " + std::to_string(i);
      r.warnings = {"w" + std::to_string(i)};
      batch.requests.push_back(std::move(r));
      // Each call on the batch's first run: its calls span every chunk.
      batch.llm_calls.push_back(llm_call(prefix + "0", ts, "ok",
                                         static_cast<int32_t>(i), false,
                                         static_cast<int64_t>(i), 1, 0.25));
    }
    auto err = store.write(batch);
    BOOST_REQUIRE_MESSAGE(!err, err.message);
    for (size_t i = 0; i < n; ++i) {
      auto doc = parse(store.run_json(prefix + std::to_string(i)));
      auto& r = doc.at("request");
      BOOST_TEST(r.at("tsUs").as_int64() == static_cast<int64_t>(1000 * n + i));
      BOOST_TEST(r.at("latencyUs").as_int64()
                 == static_cast<int64_t>(i == 0 ? n : i));
      BOOST_TEST(r.at("question").as_string()
                 == "question " + std::to_string(i));
      BOOST_TEST(r.at("warnings").at(0).as_string() == "w" + std::to_string(i));
    }
    auto calls = parse(store.run_json(prefix + "0")).at("llmCalls").as_array();
    BOOST_REQUIRE(calls.size() == n);
    for (size_t i = 0; i < n; ++i) {
      BOOST_TEST(calls[i].at("retries").as_int64() == static_cast<int64_t>(i));
      BOOST_TEST(calls[i].at("tokensIn").as_int64() == static_cast<int64_t>(i));
      BOOST_TEST(calls[i].at("tsUs").as_int64()
                 == static_cast<int64_t>(1000 * n + i));
    }
  }
  BOOST_TEST(count(store) == static_cast<int64_t>(4 * per + 1));
}

// A missing fixture is 422, but the server's failure, not the client's:
// errorRate counts it, clientErrors does not.
BOOST_AUTO_TEST_CASE(stats_count_a_missing_fixture_as_the_servers_failure) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  const int64_t now = 1'700'000'000'000'000;
  data::ledger_batch batch;
  auto fixture = request("fix-00000001", now - 10, "", "", 422, 1000);
  fixture.error = "fixture_missing";
  auto bad = request("bad-00000001", now - 9, "", "", 400, 1000);
  bad.error = "invalid_request";
  batch.requests.push_back(fixture);
  batch.requests.push_back(bad);
  batch.requests.push_back(
    request("ok-000000001", now - 8, "docs", "answered", 200, 1000));
  batch.requests.push_back(
    request("ok-000000002", now - 7, "docs", "answered", 200, 1000));
  BOOST_REQUIRE(!store.write(batch));
  auto doc = parse(store.stats_json("1h", 3600, now, true));
  BOOST_TEST(doc.at("errorRate").as_double() == 0.25);
  BOOST_TEST(doc.at("clientErrors").as_int64() == 1);
  BOOST_TEST(domain::server_failure("", 422, "fixture_missing"));
  BOOST_TEST(!domain::server_failure("", 400, "invalid_request"));
  BOOST_TEST(domain::server_failure("error", 200, ""));
}

BOOST_AUTO_TEST_CASE(stats_over_a_window) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  const int64_t now = 1'700'000'000'000'000;
  const int64_t window_s = 3600;
  const int64_t from = now - window_s * 1'000'000;
  struct row {
    const char* route;
    const char* status;
    int32_t http;
  };
  // Twenty requests inside the window, latencies 1..20 ms.
  const row rows[20] = {
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"docs", "answered", 200},
    {"data", "answered", 200},
    {"data", "answered", 200},
    {"data", "answered", 200},
    {"data", "answered", 200},
    {"data", "no_results", 200},
    {"data", "no_results", 200},
    {"out_of_scope", "refused", 200},
    {"docs", "blocked", 200},
    {"data", "error", 200},
    {"", "", 400},
    {"", "", 404},
    {"", "", 503},
  };
  ledger_batch batch;
  for (int k = 0; k < 20; ++k) {
    // The first row sits exactly on the lower bound, the last on the upper.
    auto ts = k == 0 ? from : k == 19 ? now : from + k * 1000;
    batch.requests.push_back(request("in-" + std::to_string(k), ts,
                                     rows[k].route, rows[k].status,
                                     rows[k].http, (20 - k) * 1000));
  }
  // Just outside, on both sides: must not count.
  batch.requests.push_back(
    request("before", from - 1, "docs", "error", 500, 900'000'000));
  batch.requests.push_back(
    request("after", now + 1, "data", "", 502, 900'000'000));
  batch.llm_calls.push_back(
    llm_call("in-0", from, "ok", 1, false, 100, 20, 0.001));
  batch.llm_calls.push_back(
    llm_call("in-1", now, "ok", 0, true, 50, 10, 0.002));
  batch.llm_calls.push_back(
    llm_call("in-2", from + 5, "unavailable", 2, true, 0, 0, 0));
  batch.llm_calls.push_back(
    llm_call("before", from - 1, "timeout", 9, true, 7777, 7777, 9.0));
  BOOST_REQUIRE(!store.write(batch));

  auto doc = parse(store.stats_json("1h", window_s, now, true));
  BOOST_TEST(doc.at("since").as_string() == "1h");
  BOOST_TEST(doc.at("fromUs").as_int64() == from);
  BOOST_TEST(doc.at("toUs").as_int64() == now);
  auto& totals = doc.at("totals");
  BOOST_TEST(totals.at("requests").as_int64() == 20);
  auto& route = totals.at("byRoute").as_object();
  BOOST_TEST(route.size() == 4u);
  BOOST_TEST(route.at("docs").as_int64() == 9);
  BOOST_TEST(route.at("data").as_int64() == 7);
  BOOST_TEST(route.at("out_of_scope").as_int64() == 1);
  BOOST_TEST(route.at("none").as_int64() == 3);
  auto& status = totals.at("byStatus").as_object();
  BOOST_TEST(status.size() == 7u);
  BOOST_TEST(status.at("cancelled").as_int64() == 0);
  BOOST_TEST(status.at("answered").as_int64() == 12);
  BOOST_TEST(status.at("refused").as_int64() == 1);
  BOOST_TEST(status.at("no_results").as_int64() == 2);
  BOOST_TEST(status.at("blocked").as_int64() == 1);
  BOOST_TEST(status.at("error").as_int64() == 1);
  BOOST_TEST(status.at("http_error").as_int64() == 3);
  auto& http = totals.at("byHttpStatus").as_object();
  BOOST_TEST(http.size() == 4u);
  BOOST_TEST(http.at("200").as_int64() == 17);
  BOOST_TEST(http.at("400").as_int64() == 1);
  BOOST_TEST(http.at("404").as_int64() == 1);
  BOOST_TEST(http.at("503").as_int64() == 1);
  // status "error" (1) + http >= 500 (1) out of 20.
  BOOST_TEST(doc.at("errorRate").as_double() == 0.1);
  BOOST_TEST(doc.at("clientErrors").as_int64() == 2);
  auto& latency = doc.at("latencyMs");
  BOOST_TEST(latency.at("p50").as_double() == 10.0); // rank 10 of 20
  BOOST_TEST(latency.at("p95").as_double() == 19.0); // rank 19 of 20
  BOOST_TEST(latency.at("max").as_double() == 20.0);
  auto& llm = doc.at("llm");
  BOOST_TEST(llm.at("calls").as_int64() == 3);
  BOOST_TEST(llm.at("failures").as_int64() == 1);
  BOOST_TEST(llm.at("retries").as_int64() == 3);
  BOOST_TEST(llm.at("fallbacks").as_int64() == 2);
  BOOST_TEST(llm.at("tokensIn").as_int64() == 150);
  BOOST_TEST(llm.at("tokensOut").as_int64() == 30);
  BOOST_TEST(llm.at("tokens").as_int64() == 180);
  BOOST_TEST(llm.at("costUsd").as_double() == 0.003,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(llm.at("costIsFictional").as_bool() == true);

  // A window with nothing in it.
  auto empty = parse(store.stats_json("15m", 900, 1000, false));
  BOOST_TEST(empty.at("totals").at("requests").as_int64() == 0);
  BOOST_TEST(empty.at("totals").at("byRoute").at("docs").as_int64() == 0);
  BOOST_TEST(empty.at("totals").at("byHttpStatus").as_object().empty());
  BOOST_TEST(empty.at("errorRate").as_double() == 0.0);
  BOOST_TEST(empty.at("latencyMs").at("p50").is_null());
  BOOST_TEST(empty.at("latencyMs").at("p95").is_null());
  BOOST_TEST(empty.at("latencyMs").at("max").is_null());
  BOOST_TEST(empty.at("llm").at("calls").as_int64() == 0);
  BOOST_TEST(empty.at("llm").at("costUsd").as_double() == 0.0);
  BOOST_TEST(empty.at("llm").at("costIsFictional").as_bool() == false);
}

BOOST_AUTO_TEST_CASE(reader_sees_committed_writes_and_cannot_write) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  auto writer = open_store(path, true);
  auto reader = open_store(path, false);
  BOOST_TEST(count(reader) == 0);
  ledger_batch batch;
  for (int i = 0; i < 5; ++i)
    batch.requests.push_back(
      request("w-" + std::to_string(i), i, "docs", "answered", 200, 1000));
  BOOST_REQUIRE(!writer.write(batch));
  BOOST_TEST(count(reader) == 5);
  // An open write transaction elsewhere neither blocks the reader nor shows
  // it uncommitted rows (WAL).
  auto raw = open_raw(path);
  {
    auto tx = transaction::begin(raw);
    BOOST_REQUIRE(tx.ok());
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO requests (request_id, ts_us, method, path, route, status, "
      "blocked_by, http_status, error, latency_us, question, llm_calls, "
      "tokens, cost_usd, warnings) VALUES ('raw-1', 9, 'GET', '/x', '', '', "
      "'', 404, 'not_found', 10, '', 0, 0, 0.0, '[]')"));
    BOOST_TEST(count(reader) == 5);
    auto during = parse(reader.stats_json("7d", 7 * 86400, 100, true));
    BOOST_TEST(during.at("totals").at("requests").as_int64() == 5);
    BOOST_REQUIRE(!tx->commit());
  }
  BOOST_TEST(count(reader) == 6);
  auto stats = parse(reader.stats_json("7d", 7 * 86400, 100, true));
  BOOST_TEST(stats.at("totals").at("byHttpStatus").at("404").as_int64() == 1);
  BOOST_TEST(stats.at("clientErrors").as_int64() == 1);
  auto run = parse(reader.run_json("raw-1"));
  BOOST_TEST(run.at("request").at("error").as_string() == "not_found");
  // The reader refuses writes, and nothing lands.
  ledger_batch more;
  more.requests.push_back(request("r-0", 1, "docs", "answered", 200, 1));
  auto err = reader.write(more);
  BOOST_TEST((err.code == domain::ec::storage_failed));
  BOOST_TEST(err.message.find("readonly") != std::string::npos, err.message);
  // A storage fault (SQLITE_READONLY): the writer keeps such a batch queued.
  BOOST_TEST(reader.last_write_storage_fault());
  BOOST_TEST(count(writer) == 6);
  BOOST_TEST(count(reader) == 6);
}

/// A new ledger with a trigger added through a connection of its own
/// (fault injection from outside the store).
struct ledger_with_trigger {
  temp_dir dir;
  std::string path = dir.file("ledger.db");
  ledger_store store = open_store(path, true);

  explicit ledger_with_trigger(const char* create_trigger) {
    auto raw = open_raw(path);
    BOOST_REQUIRE(!raw.exec(create_trigger));
  }
};

/// `n` answered data requests with ids `prefix`0 to `prefix`(n - 1).
ledger_batch requests_named(const std::string& prefix, int n) {
  ledger_batch batch;
  for (int i = 0; i < n; ++i)
    batch.requests.push_back(
      request(prefix + std::to_string(i), i, "data", "answered", 200, 10));
  return batch;
}

BOOST_AUTO_TEST_CASE(a_failing_batch_writes_nothing) {
  // The last insert of the batch fails.
  ledger_with_trigger ledger{
    "CREATE TRIGGER fail_boom BEFORE INSERT ON sql_audit "
    "WHEN NEW.sql = 'boom' BEGIN SELECT RAISE(ABORT, 'injected failure'); "
    "END"};
  auto& store = ledger.store;
  auto batch = requests_named("tx-", 3);
  batch.llm_calls.push_back(llm_call("tx-0", 1, "ok", 0, false, 1, 1, 0));
  domain::trace_record trace;
  trace.request_id = "tx-0";
  trace.steps = {{domain::node::guard_input, "pass", 1}};
  batch.traces.push_back(trace);
  domain::sql_audit_record audit;
  audit.request_id = "tx-0";
  audit.sql = "SELECT 1";
  batch.sql_audits.push_back(audit);
  audit.sql = "boom";
  batch.sql_audits.push_back(audit);
  auto err = store.write(batch);
  BOOST_TEST((err.code == domain::ec::storage_failed));
  BOOST_TEST(err.message.find("injected failure") != std::string::npos,
             err.message);
  // A row's fault (SQLITE_CONSTRAINT_TRIGGER), not the storage's: the
  // writer may split the batch to find the row.
  BOOST_TEST(!store.last_write_storage_fault());
  BOOST_TEST(count(store) == 0);
  BOOST_TEST(!store.run_json("tx-0").ok());
  auto raw = open_raw(ledger.path);
  for (auto table : {"llm_calls", "trace_steps", "sql_audit"}) {
    auto n = raw.query_int64(std::string{"SELECT COUNT(*) FROM "} + table);
    BOOST_REQUIRE(n.ok());
    BOOST_TEST(*n == 0, table);
  }
  // The store stays usable: the same batch minus the poison goes through.
  batch.sql_audits.pop_back();
  BOOST_REQUIRE(!store.write(batch));
  BOOST_TEST(count(store) == 3);
  auto doc = parse(store.run_json("tx-0"));
  BOOST_TEST(doc.at("sqlAudit").as_array().size() == 1u);
  BOOST_TEST(doc.at("trace").as_array().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_failure_inside_a_multi_row_insert_writes_nothing) {
  // The inserts are INSERT OR FAIL (no statement journal): a row failing in
  // the middle of a multi-row statement leaves the statement's earlier rows
  // in place, and only the batch's transaction takes them back out. The
  // trigger fails the sixth of eight request rows that way.
  ledger_with_trigger ledger{
    "CREATE TRIGGER fail_mid BEFORE INSERT ON requests "
    "WHEN NEW.request_id = 'mid-5' BEGIN SELECT RAISE(FAIL, 'mid-row'); END"};
  auto& store = ledger.store;
  auto batch = requests_named("mid-", 8);
  auto err = store.write(batch);
  BOOST_TEST((err.code == domain::ec::storage_failed));
  BOOST_TEST(err.message.find("mid-row") != std::string::npos, err.message);
  BOOST_TEST(count(store) == 0);
  batch.requests.erase(batch.requests.begin() + 5);
  BOOST_REQUIRE(!store.write(batch));
  BOOST_TEST(count(store) == 7);
}

BOOST_AUTO_TEST_SUITE_END()
