// End-to-end: the real `candor serve` on a free loopback port.

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <set>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/ledger/store.hpp"
#include "domain/build_info.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/ledger_rows.hpp"
#include "tests/support/process.hpp"
#include "tests/support/questions.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

/// Every response carries the request id and nosniff.
void check_common_headers(const http_response& r) {
  BOOST_CHECK(!r.header("x-request-id").empty());
  BOOST_CHECK_EQUAL(r.header("x-content-type-options"), "nosniff");
}

void check_error(const http_response& r, int status, std::string_view error) {
  BOOST_CHECK_EQUAL(r.status, status);
  check_common_headers(r);
  auto o = parse_object(r.body);
  BOOST_CHECK_EQUAL(o.at("error").as_string(), error);
  BOOST_CHECK(o.at("message").is_string());
  BOOST_CHECK_EQUAL(o.at("requestId").as_string(), r.header("x-request-id"));
  BOOST_CHECK(!o.contains("stack"));
}

struct started_server {
  server_process proc;
  explicit started_server(std::map<std::string, std::string> env = {})
      : proc(std::move(env)) {
    BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n"
                                          << proc.log());
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_serve)

BOOST_AUTO_TEST_CASE(every_status_code_and_the_error_contract) {
  started_server s{{{"CANDOR_LLM_ALLOW_CHAOS", "true"}}};
  http_client c{s.proc.port()};
  BOOST_REQUIRE(c.connected());

  // 200: out of scope, refused through the router; and blocked injection.
  auto r = c.ask(ask_body(out_of_scope_q));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  check_common_headers(*r);
  auto o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "out_of_scope");
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 1);
  BOOST_CHECK(o.at("meta").at("costIsFictional").as_bool());

  r = c.ask(ask_body(injection_q));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "blocked");
  BOOST_CHECK_EQUAL(o.at("blockedBy").as_string(), "input_rules");
  BOOST_CHECK(o.at("route").is_null());
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 0);

  // 400: invalid JSON and invalid fields, with issues.
  r = c.ask("{\"question\": ");
  BOOST_REQUIRE(r);
  check_error(*r, 400, "invalid_request");
  r = c.ask(R"({"question": "hi", "forceRoute": "weather"})");
  BOOST_REQUIRE(r);
  check_error(*r, 400, "invalid_request");
  BOOST_CHECK(parse_object(r->body).at("issues").as_array().size() >= 2);

  // 404, 405, 415, 413.
  r = c.request("GET", "/nowhere");
  BOOST_REQUIRE(r);
  check_error(*r, 404, "not_found");
  r = c.request("GET", "/ask");
  BOOST_REQUIRE(r);
  check_error(*r, 405, "method_not_allowed");
  BOOST_CHECK(r->header("allow").find("POST") != std::string::npos);
  r = c.request("POST", "/ask", ask_body(out_of_scope_q),
                {{"Content-Type", "text/plain"}});
  BOOST_REQUIRE(r);
  check_error(*r, 415, "unsupported_media_type");
  http_client big{s.proc.port()};
  r = big.ask(ask_body(std::string(17000, 'a')));
  BOOST_REQUIRE(r);
  check_error(*r, 413, "payload_too_large");

  // 422: the scripted provider has no fixture for this question.
  http_client c2{s.proc.port()};
  r = c2.ask(ask_body("How many e-bikes did we sell in March?"));
  BOOST_REQUIRE(r);
  check_error(*r, 422, "fixture_missing");
  BOOST_CHECK(r->body.find("router") != std::string::npos);

  // 503: every model down (chaos, enabled for this server).
  r = c2.ask(ask_body(out_of_scope_q), {{"X-Candor-Chaos", "all_down"}});
  BOOST_REQUIRE(r);
  check_error(*r, 503, "llm_unavailable");
  // Like the overloaded 503, it says when to come back.
  BOOST_CHECK(!r->header("retry-after").empty());

  // Fallback: the primary is down, the fallback answers.
  r = c2.ask(ask_body(out_of_scope_q), {{"X-Candor-Chaos", "primary_down"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  o = parse_object(r->body);
  BOOST_CHECK(o.at("meta").at("fallbackUsed").as_bool());
}

BOOST_AUTO_TEST_CASE(deadline_gives_504_and_budget_gives_status_error) {
  // A primary that times out once, a 400 ms backoff and a 150 ms deadline.
  started_server s{{{"CANDOR_LLM_ALLOW_CHAOS", "true"},
                    {"CANDOR_LLM_BACKOFF_BASE_MS", "400"},
                    {"CANDOR_GRAPH_REQUEST_DEADLINE_MS", "150"}}};
  http_client c{s.proc.port()};
  auto r = c.ask(ask_body(out_of_scope_q),
                 {{"X-Candor-Chaos", "primary_timeout_once"}});
  BOOST_REQUIRE(r);
  check_error(*r, 504, "timeout");

  started_server b{{{"CANDOR_GRAPH_LLM_CALL_BUDGET", "0"}}};
  http_client c2{b.proc.port()};
  r = c2.ask(ask_body(out_of_scope_q));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "error");
  BOOST_CHECK(o.at("route").is_null());
  bool warned = false;
  for (auto& w : o.at("warnings").as_array())
    warned = warned || w.as_string() == "llm_budget_exceeded";
  BOOST_CHECK(warned);
}

BOOST_AUTO_TEST_CASE(request_id_rule) {
  started_server s;
  http_client c{s.proc.port()};
  auto r = c.ask(ask_body(injection_q), {{"X-Request-Id", "client-id-0001"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->header("x-request-id"), "client-id-0001");
  BOOST_CHECK_EQUAL(parse_object(r->body).at("requestId").as_string(),
                    "client-id-0001");

  r = c.ask(ask_body(injection_q), {{"X-Request-Id", "bad id!"}});
  BOOST_REQUIRE(r);
  auto id = r->header("x-request-id");
  BOOST_CHECK_NE(id, "bad id!");
  BOOST_CHECK_EQUAL(id.size(), 36u); // a UUID
  auto o = parse_object(r->body);
  bool warned = false;
  for (auto& w : o.at("warnings").as_array())
    warned = warned || w.as_string() == "request_id_replaced";
  BOOST_CHECK(warned);

  // Errors carry the id too, and /runs shows the stored trace.
  r = c.request("GET", "/missing", {}, {{"X-Request-Id", "client-id-0002"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->header("x-request-id"), "client-id-0002");
  r = c.request("GET", "/runs/client-id-0001");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("requestId").as_string(), "client-id-0001");
  auto& trace = o.at("trace").as_array();
  BOOST_REQUIRE_EQUAL(trace.size(), 2u);
  BOOST_CHECK_EQUAL(trace[0].at("node").as_string(), "guard_input");
  BOOST_CHECK_EQUAL(trace[1].at("node").as_string(), "finalize");
  r = c.request("GET", "/runs/never-seen-0000");
  BOOST_REQUIRE(r);
  check_error(*r, 404, "not_found");
}

BOOST_AUTO_TEST_CASE(ops_endpoints) {
  started_server s;
  http_client c{s.proc.port()};
  for (int i = 0; i < 3; ++i)
    BOOST_REQUIRE(c.ask(ask_body(out_of_scope_q)));
  BOOST_REQUIRE(c.ask(ask_body(injection_q)));
  BOOST_REQUIRE(c.request("GET", "/nope"));

  auto r = c.request("GET", "/stats?since=15m");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("totals").at("requests").as_int64(), 5);
  BOOST_CHECK_EQUAL(o.at("totals").at("byRoute").at("out_of_scope").as_int64(),
                    3);
  BOOST_CHECK_EQUAL(o.at("totals").at("byStatus").at("blocked").as_int64(), 1);
  BOOST_CHECK_EQUAL(o.at("totals").at("byStatus").at("http_error").as_int64(),
                    1);
  BOOST_CHECK_EQUAL(o.at("llm").at("calls").as_int64(), 3);
  BOOST_CHECK(o.at("llm").at("costIsFictional").as_bool());
  BOOST_CHECK(o.at("latencyMs").at("p95").is_number());
  r = c.request("GET", "/stats?since=2h");
  BOOST_REQUIRE(r);
  check_error(*r, 400, "invalid_request");

  r = c.request("GET", "/health");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("provider").as_string(), "fake");
  BOOST_CHECK_EQUAL(o.at("guardrailMode").as_string(), "rules");
  BOOST_CHECK(o.at("ready").as_bool());
  BOOST_CHECK(o.at("models").as_array().at(0).is_string());
  // Which process answered (several behind one balancer: e2e_scaleout).
  BOOST_CHECK_EQUAL(o.at("pid").as_int64(), s.proc.pid());

  // The scripted provider's demo questions are its scenarios.
  r = c.request("GET", "/demo/questions");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("provider").as_string(), "fake");
  std::set<std::string> listed;
  for (auto& q : o.at("questions").as_array()) {
    listed.insert(std::string{q.at("question").as_string()});
    BOOST_CHECK(!q.as_object().contains("kind"));
  }
  BOOST_CHECK_EQUAL(listed.size(), 10u);
  BOOST_CHECK(listed.count(injection_q));
  BOOST_CHECK(listed.count(out_of_scope_q));
  BOOST_CHECK(listed.count("What was our revenue by channel in 2024?"));

  r = c.request("GET", "/metrics");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  BOOST_CHECK(r->body.find("candor_http_requests_total") != std::string::npos);
  BOOST_CHECK(r->body.find("candor_http_request_duration_seconds_bucket")
              != std::string::npos);
  BOOST_CHECK(r->body.find("candor_http_in_flight_requests")
              != std::string::npos);
  BOOST_CHECK(r->body.find("candor_model_calls_total") != std::string::npos);
  // promtool (Debian package prometheus) must accept the exposition.
  auto dir = make_temp_dir("candor-metrics");
  auto path = dir + "/metrics.txt";
  {
    auto* f = std::fopen(path.c_str(), "w");
    BOOST_REQUIRE(f);
    std::fwrite(r->body.data(), 1, r->body.size(), f);
    std::fclose(f);
  }
  auto rc = std::system(
    ("promtool check metrics < " + path + " > " + dir + "/promtool.out 2>&1")
      .c_str());
  BOOST_CHECK_MESSAGE(rc == 0, "promtool rejected /metrics");
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(json_logs_mask_secrets_and_cut_questions) {
  started_server s;
  http_client c{s.proc.port()};
  std::string secret = "sk-abcdefghijklmnopqrstuvwxyz0123456789";
  auto r = c.ask(
    ask_body("My key is " + secret
             + " and my token is Bearer "
               "eyJhbGciOiJIUzI1NiJ9.payload.signature, can you help?"));
  BOOST_REQUIRE(r);
  auto long_q = std::string(300, 'x') + " weather?";
  BOOST_REQUIRE(c.ask(ask_body(long_q)));
  BOOST_CHECK_EQUAL(s.proc.stop(SIGTERM), 0);
  auto log = s.proc.log();
  BOOST_CHECK(log.find(secret) == std::string::npos);
  BOOST_CHECK(log.find("eyJhbGciOiJIUzI1NiJ9.payload.signature")
              == std::string::npos);
  // Every line is one JSON object; request lines carry the contract fields.
  std::istringstream lines{log};
  std::string line;
  int requests = 0;
  while (std::getline(lines, line)) {
    auto o = parse_object(line);
    BOOST_CHECK(o.contains("ts"));
    BOOST_CHECK(o.contains("level"));
    if (o.at("event").as_string() != "request")
      continue;
    ++requests;
    for (auto key : {"requestId", "route", "status", "httpStatus", "latencyMs"})
      BOOST_CHECK_MESSAGE(o.contains(key), "missing " << key);
    BOOST_CHECK_LE(o.at("question").as_string().size(), 200u);
  }
  BOOST_CHECK_EQUAL(requests, 2);
}

// With http.operatorToken set, /runs/{id}, /stats and /metrics need it as a
// bearer token; /ask, /health and the page do not.
BOOST_AUTO_TEST_CASE(operator_reads_need_the_operator_token) {
  const std::string token = "op-token-5c1d9e7a";
  started_server s{{{"CANDOR_HTTP_OPERATOR_TOKEN", token}}};
  http_client c{s.proc.port()};
  auto r = c.ask(ask_body(out_of_scope_q));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto id = std::string{parse_object(r->body).at("requestId").as_string()};
  const header_list with{{"Authorization", "Bearer " + token}};
  const header_list wrong{{"Authorization", "Bearer op-token-wrong"}};
  for (std::string path :
       {"/runs/" + id, std::string{"/stats"}, std::string{"/metrics"}}) {
    auto none = c.request("GET", path);
    BOOST_REQUIRE(none);
    BOOST_CHECK_MESSAGE(none->status == 401, path);
    auto bad = c.request("GET", path, {}, wrong);
    BOOST_REQUIRE(bad);
    BOOST_CHECK_MESSAGE(bad->status == 401, path);
    auto ok = c.request("GET", path, {}, with);
    BOOST_REQUIRE(ok);
    BOOST_CHECK_MESSAGE(ok->status == 200, path << " " << ok->body);
  }
  auto health = c.request("GET", "/health");
  BOOST_REQUIRE(health);
  BOOST_CHECK_EQUAL(health->status, 200);
}

// Personal data written in a question (e-mail, IBAN, card, phone) is masked
// in the log, the ledger and /runs like a secret.
BOOST_AUTO_TEST_CASE(personal_data_in_questions_is_masked_everywhere) {
  started_server s;
  http_client c{s.proc.port()};
  const std::vector<std::string> personal{
    "jan.devries@example.org", "NL91ABNA0417164300", "4111 1111 1111 1111",
    "+31 6 12345678"};
  auto r = c.ask(ask_body("I am " + personal[0] + ", refund to " + personal[1]
                          + " not card " + personal[2] + ", call " + personal[3]
                          + ": where is my bike?"));
  BOOST_REQUIRE(r);
  auto id = std::string{parse_object(r->body).at("requestId").as_string()};
  auto run = c.request("GET", "/runs/" + id);
  BOOST_REQUIRE(run);
  BOOST_CHECK_EQUAL(run->status, 200);
  BOOST_CHECK(run->body.find("***@***") != std::string::npos);
  BOOST_CHECK_EQUAL(s.proc.stop(SIGTERM), 0);
  auto log = s.proc.log();
  for (auto& p : personal) {
    BOOST_CHECK_MESSAGE(run->body.find(p) == std::string::npos, p);
    BOOST_CHECK_MESSAGE(log.find(p) == std::string::npos, p);
  }
}

BOOST_AUTO_TEST_CASE(two_hundred_concurrent_requests_all_answered_and_stored) {
  started_server s;
  constexpr int n = 200;
  std::atomic<int> ok{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      http_client c{s.proc.port(), std::chrono::milliseconds{20000}};
      ++ready;
      while (!go)
        std::this_thread::yield();
      auto r = c.ask(ask_body(i % 2 ? out_of_scope_q : injection_q));
      if (r && r->status == 200)
        ++ok;
    });
  while (ready < n)
    std::this_thread::yield();
  go = true;
  for (auto& t : threads)
    t.join();
  BOOST_CHECK_EQUAL(ok.load(), n);
  BOOST_CHECK_EQUAL(s.proc.stop(SIGTERM), 0);
  BOOST_CHECK_EQUAL(test::stored_requests(s.proc.data_dir()), n);
}

BOOST_AUTO_TEST_CASE(sigterm_mid_load_loses_nothing) {
  started_server s;
  constexpr int clients = 16;
  std::atomic<int> answered{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i)
    threads.emplace_back([&, i] {
      while (!stop) {
        http_client c{s.proc.port(), std::chrono::milliseconds{10000}};
        if (!c.connected())
          return; // the listener is gone
        for (int k = 0; k < 50 && !stop; ++k) {
          // Some succeed, some fail with 400: all are requests.
          auto body = (k % 5 == 0)
                        ? std::string{"{oops"}
                        : ask_body(i % 2 ? out_of_scope_q : injection_q);
          auto r = c.ask(body);
          if (!r)
            break; // connection closed by the draining server
          ++answered;
        }
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds{700});
  auto rc = s.proc.stop(SIGTERM);
  stop = true;
  for (auto& t : threads)
    t.join();
  BOOST_CHECK_EQUAL(rc, 0);
  BOOST_CHECK_GT(answered.load(), 50);
  BOOST_CHECK_EQUAL(test::stored_requests(s.proc.data_dir()), answered.load());
}

BOOST_AUTO_TEST_CASE(cli_help_and_configuration_errors) {
  auto r = run_candor({"--help"});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(r.out.find("serve") != std::string::npos);
  r = run_candor({"serve", "--help"});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(r.out.find("--port") != std::string::npos);
  BOOST_CHECK(r.out.find("--data-dir") != std::string::npos);
  r = run_candor({"ask", "--help"});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(r.out.find("--config") != std::string::npos);
  r = run_candor({"serve"}, {{"CANDOR_HTTP_PORT", "eighty"}});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(r.err.find("CANDOR_HTTP_PORT") != std::string::npos);
  auto dir = make_temp_dir("candor-cfg");
  {
    auto* f = std::fopen((dir + "/bad.json").c_str(), "w");
    std::fputs("{\"http\": {\"portt\": 1}}", f);
    std::fclose(f);
  }
  r = run_candor({"serve", "--config", dir + "/bad.json"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(r.err.find("http.portt") != std::string::npos);
  r = run_candor({"frobnicate"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  // ask runs the same graph in-process and creates the data directory.
  r = run_candor({"ask", out_of_scope_q, "--json", "--data-dir", dir + "/var"});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(r.out.find("\"status\":\"refused\"") != std::string::npos);
  // Its request line is buffered and reaches stderr at exit.
  BOOST_CHECK(r.err.find("\"event\":\"request\"") != std::string::npos);
  // A question without a fixture fails with exit 1, and its ledger row
  // carries the status HTTP would give it (422), not a blanket 500.
  r = run_candor({"ask", "Which bikes have the best reviews this spring?",
                  "--data-dir", dir + "/var"});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK(r.err.find("fixture_missing") != std::string::npos);
  BOOST_CHECK(r.err.find("\"httpStatus\":422") != std::string::npos);
  {
    auto store = data::ledger_store::open(dir + "/var/ledger.db", false);
    BOOST_REQUIRE(store.ok());
    auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    auto stats = store->stats_json("1h", 3600, now_us, true);
    BOOST_REQUIRE(stats.ok());
    auto by_status
      = boost::json::parse(*stats).at("totals").at("byHttpStatus").as_object();
    BOOST_CHECK_EQUAL(by_status.at("200").as_int64(), 1);
    BOOST_CHECK_EQUAL(by_status.at("422").as_int64(), 1);
    BOOST_CHECK(!by_status.contains("500"));
  }
  remove_tree(dir);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(e2e_cli_data)

BOOST_AUTO_TEST_CASE(seed_is_deterministic_and_ingest_is_incremental) {
  auto dir = make_temp_dir("candor-cli");
  auto a = run_candor({"seed", "--data-dir", dir + "/a"});
  auto b = run_candor({"seed", "--data-dir", dir + "/b"});
  BOOST_REQUIRE_EQUAL(a.exit_code, 0);
  BOOST_REQUIRE_EQUAL(b.exit_code, 0);
  auto fp = [](const std::string& out) {
    auto at = out.find("fingerprint: ");
    return at == std::string::npos ? std::string{} : out.substr(at + 13, 64);
  };
  BOOST_CHECK_EQUAL(fp(a.out).size(), 64u);
  BOOST_CHECK_EQUAL(fp(a.out), fp(b.out));
  BOOST_CHECK(a.err.find("seed: 100%") != std::string::npos); // progress
  auto c = run_candor({"seed", "--seed", "7", "--data-dir", dir + "/c"});
  BOOST_REQUIRE_EQUAL(c.exit_code, 0);
  BOOST_CHECK_NE(fp(c.out), fp(a.out));

  auto first = run_candor({"ingest", "--data-dir", dir + "/a"});
  BOOST_REQUIRE_EQUAL(first.exit_code, 0);
  BOOST_CHECK(first.out.find("30 created") != std::string::npos);
  auto second = run_candor({"ingest", "--data-dir", dir + "/a"});
  BOOST_REQUIRE_EQUAL(second.exit_code, 0);
  BOOST_CHECK(second.out.find("0 created") != std::string::npos);
  BOOST_CHECK(second.out.find("30 unchanged") != std::string::npos);
  BOOST_CHECK(second.out.find("chunks: 0 created") != std::string::npos);
  remove_tree(dir);
}

// A SQLite database and a catalog of one's own (--db, --catalog): answered
// from as they are, nothing generated in the data directory; a missing
// file and a catalog that does not fit the database stop with the reason.
BOOST_AUTO_TEST_CASE(a_database_and_a_catalog_of_ones_own) {
  namespace fs = std::filesystem;
  auto dir = make_temp_dir("candor-own-db");
  fs::copy_file(shared_sales_db(), dir + "/shop.db");
  fs::copy_file(std::string{CANDOR_SOURCE_DIR} + "/conf/catalog.json",
                dir + "/shop-catalog.json");
  const std::map<std::string, std::string> local{
    {"CANDOR_LLM_PROVIDER", "local"}};
  const std::string q = "How many orders did we have in 2024?";
  auto r = run_candor({"ask", q, "--json", "--data-dir", dir + "/var", "--db",
                       dir + "/shop.db", "--catalog",
                       dir + "/shop-catalog.json"},
                      local);
  BOOST_TEST_CONTEXT(r.out << r.err) {
    BOOST_REQUIRE_EQUAL(r.exit_code, 0);
    auto o = json::parse(r.out).as_object();
    BOOST_TEST(o.at("route").as_string() == "data");
    BOOST_TEST(o.at("status").as_string() == "answered");
    BOOST_TEST(!fs::exists(dir + "/var/sales.db"));
  }
  // The same through the configuration keys.
  r = run_candor({"ask", q, "--json", "--data-dir", dir + "/var"},
                 {{"CANDOR_LLM_PROVIDER", "local"},
                  {"CANDOR_SQL_DATABASE", dir + "/shop.db"}});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(!fs::exists(dir + "/var/sales.db"));
  // No such file: a configuration error naming the flag and the path.
  r = run_candor({"ask", q, "--data-dir", dir + "/var", "--db",
                  dir + "/nowhere.db"},
                 local);
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK_MESSAGE(r.err.find("no SQLite database at") != std::string::npos
                        && r.err.find("nowhere.db") != std::string::npos,
                      r.err);
  // A catalog naming a table the database lacks.
  {
    std::ifstream in{dir + "/shop-catalog.json"};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    auto at = text.find("\"name\": \"orders\"");
    BOOST_REQUIRE(at != std::string::npos);
    text.replace(at, 16, "\"name\": \"ordrs\"");
    std::ofstream{dir + "/wrong-catalog.json"} << text;
  }
  r = run_candor({"ask", q, "--data-dir", dir + "/var", "--db",
                  dir + "/shop.db", "--catalog", dir + "/wrong-catalog.json"},
                 local);
  BOOST_CHECK_NE(r.exit_code, 0);
  BOOST_CHECK_MESSAGE(r.err.find("wrong-catalog.json") != std::string::npos
                        && r.err.find("ordrs") != std::string::npos,
                      r.err);
  remove_tree(dir);
}

BOOST_AUTO_TEST_SUITE_END()
