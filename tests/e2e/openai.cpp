// End-to-end: `candor serve` and `candor ask` against a scripted
// OpenAI-compatible stub on loopback. Success, all models down (503 with
// llm.localFallback off; answered by the local provider, counted and
// conforming to docs/openapi.yaml with it on), the key kept out of every
// output, startup refusing an inconsistent configuration, and model calls
// overlapping under 100 concurrent /ask.

#include <atomic>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/openai_stub.hpp"
#include "tests/support/openapi.hpp"
#include "tests/support/process.hpp"

using namespace candor;
using namespace candor::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

constexpr auto key = "sk-e2e-3b8d1f0a6c42e9";
constexpr auto oos = "What is the weather in Lisbon tomorrow?";
constexpr auto down_q = "Is the weather service down in Porto today?";
constexpr auto route_oos
  = R"({"route":"out_of_scope","reason":"The question is about weather."})";

std::string ask_body(std::string_view q) {
  return json::serialize(json::object{{"question", q}});
}

/// Answers the router, except for questions about "Porto", where every
/// model is down; the error body echoes the Authorization header so that a
/// leak of upstream bodies would show.
stub_reply script(const stub_request& req) {
  stub_reply r;
  if (req.user.find("Porto") != std::string::npos) {
    r.status = 503;
    r.body = R"({"error":"overloaded","auth":")" + req.authorization + "\"}";
    return r;
  }
  r.content = route_oos;
  return r;
}

std::map<std::string, std::string> env_for(const openai_stub& stub) {
  return {{"CANDOR_LLM_BASE_URL", stub.base_url()},
          {"CANDOR_LLM_API_KEY", key},
          {"CANDOR_LLM_MODEL", "gpt-4o-mini"},
          {"CANDOR_LLM_FALLBACK_MODEL", "m-fallback"},
          {"CANDOR_LLM_MAX_RETRIES", "1"},
          {"CANDOR_LLM_BACKOFF_BASE_MS", "1"}};
}

std::string file_bytes(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

/// Checks a response against its declaration in docs/openapi.yaml.
void check_openapi(std::string_view method, std::string_view target,
                   const http_response& r) {
  static const openapi_spec spec{
    load_yaml_as_json(std::string{CANDOR_SOURCE_DIR} + "/docs/openapi.yaml")};
  std::string found;
  for (const auto& p : spec.check(method, target, r))
    found += "\n  " + p;
  BOOST_CHECK_MESSAGE(found.empty(), method << " " << target
                                            << " does not match "
                                               "docs/openapi.yaml:"
                                            << found);
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_openai)

BOOST_AUTO_TEST_CASE(serve_answers_fails_with_503_and_never_shows_the_key) {
  openai_stub stub{script};
  auto env = env_for(stub);
  env["CANDOR_LLM_LOCAL_FALLBACK"] = "false";
  server_process proc{env};
  BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n" << proc.log());
  http_client c{proc.port()};
  BOOST_REQUIRE(c.connected());
  std::vector<std::string> outputs;

  auto r = c.ask(ask_body(oos), {{"X-Request-Id", "openai-e2e-ok-1"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto o = json::parse(r->body).as_object();
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "out_of_scope");
  BOOST_CHECK_EQUAL(o.at("routeReason").as_string(),
                    "The question is about weather.");
  BOOST_CHECK_EQUAL(o.at("meta").at("provider").as_string(), "openai");
  BOOST_CHECK(!o.at("meta").at("costIsFictional").as_bool());
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 1);
  BOOST_CHECK_EQUAL(o.at("meta").at("tokens").at("total").as_int64(), 18);
  outputs.push_back(r->body);

  r = c.ask(ask_body(down_q), {{"X-Request-Id", "openai-e2e-down-1"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 503);
  o = json::parse(r->body).as_object();
  BOOST_CHECK_EQUAL(o.at("error").as_string(), "llm_unavailable");
  outputs.push_back(r->body);
  // (1 + 1 retry) on each of the two models for the failing question.
  BOOST_CHECK_EQUAL(stub.requests(), 1 + 4);

  for (auto target :
       {"/health", "/runs/openai-e2e-ok-1", "/runs/openai-e2e-down-1",
        "/stats?since=1h", "/metrics"}) {
    r = c.request("GET", target);
    BOOST_REQUIRE(r);
    BOOST_CHECK_MESSAGE(r->status == 200, target << ": " << r->status);
    outputs.push_back(r->body);
  }
  auto health = json::parse(outputs[2]).as_object();
  BOOST_CHECK_EQUAL(health.at("provider").as_string(), "openai");
  BOOST_CHECK(contains(outputs[2], "gpt-4o-mini"));
  // The stub did receive the key: the check below is not vacuous.
  BOOST_CHECK_EQUAL(stub.seen().at(0).authorization,
                    std::string{"Bearer "} + key);

  BOOST_CHECK_EQUAL(proc.stop(SIGTERM), 0);
  outputs.push_back(proc.log());
  outputs.push_back(file_bytes(proc.data_dir() + "/ledger.db"));
  outputs.push_back(file_bytes(proc.data_dir() + "/ledger.db-wal"));
  BOOST_CHECK(contains(outputs[outputs.size() - 3], "llm_attempt_failed"));
  for (size_t i = 0; i < outputs.size(); ++i)
    BOOST_CHECK_MESSAGE(!contains(outputs[i], key)
                          && !contains(outputs[i], "sk-e2e"),
                        "the key leaked into output " << i);
}

// Every model down with llm.localFallback on (the default): the local
// provider answers, the answer and the meta say so, and the ledger,
// /stats, /runs and /metrics count it; every response matches the
// OpenAPI document.
BOOST_AUTO_TEST_CASE(every_model_down_the_local_provider_answers) {
  openai_stub stub{[](const stub_request&) {
    stub_reply r;
    r.status = 503;
    r.body = R"({"error":"overloaded"})";
    return r;
  }};
  server_process proc{env_for(stub)};
  BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n" << proc.log());
  http_client c{proc.port()};
  BOOST_REQUIRE(c.connected());
  auto r = c.ask(ask_body("How long is the frame warranty on a Volt e-bike?"),
                 {{"X-Request-Id", "openai-e2e-local-1"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  check_openapi("POST", "/ask", *r);
  auto o = json::parse(r->body).as_object();
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "docs");
  BOOST_CHECK(contains(json::value_to<std::string>(o.at("answer")),
                       "no language model was reachable"));
  auto& meta = o.at("meta").as_object();
  BOOST_CHECK_EQUAL(meta.at("provider").as_string(), "local");
  BOOST_CHECK(meta.at("fallbackUsed").as_bool());
  BOOST_CHECK_EQUAL(meta.at("llmCalls").as_int64(), 2);
  BOOST_CHECK_EQUAL(meta.at("tokens").at("total").as_int64(), 0);
  BOOST_CHECK_EQUAL(meta.at("costUsd").to_number<double>(), 0.0);
  bool warned = false;
  for (auto& w : o.at("warnings").as_array())
    warned = warned || w.as_string() == "llm_local_fallback";
  BOOST_CHECK(warned);
  // (1 + 1 retry) on each of the two models, for the router and rag_answer.
  BOOST_CHECK_EQUAL(stub.requests(), 2 * 4);

  r = c.request("GET", "/stats?since=1h");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  check_openapi("GET", "/stats?since=1h", *r);
  auto llm = json::parse(r->body).at("llm").as_object();
  BOOST_CHECK_EQUAL(llm.at("calls").as_int64(), 2);
  BOOST_CHECK_EQUAL(llm.at("localFallbacks").as_int64(), 2);
  BOOST_CHECK_EQUAL(llm.at("costUsd").to_number<double>(), 0.0);

  r = c.request("GET", "/runs/openai-e2e-local-1");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  check_openapi("GET", "/runs/openai-e2e-local-1", *r);
  auto calls = json::parse(r->body).at("llmCalls").as_array();
  BOOST_CHECK_EQUAL(calls.size(), 2u);
  for (auto& call : calls) {
    BOOST_CHECK(call.at("localFallback").as_bool());
    BOOST_CHECK_EQUAL(call.at("provider").as_string(), "local");
    BOOST_CHECK_EQUAL(call.at("model").as_string(), "candor-local");
  }

  r = c.request("GET", "/metrics");
  BOOST_REQUIRE(r);
  BOOST_CHECK(contains(r->body, "candor_model_local_fallbacks_total 2"));
  BOOST_CHECK_EQUAL(proc.stop(SIGTERM), 0);
  BOOST_CHECK(contains(proc.log(), "llm_local_fallback"));
}

BOOST_AUTO_TEST_CASE(candor_ask_uses_the_endpoint) {
  openai_stub stub{script};
  auto dir = make_temp_dir("candor-openai-ask");
  auto env = env_for(stub);
  env["CANDOR_DATA_DIR"] = dir;
  auto res = run_candor({"ask", oos, "--json"}, env);
  BOOST_CHECK_EQUAL(res.exit_code, 0);
  auto o = json::parse(res.out).as_object();
  BOOST_CHECK_EQUAL(o.at("meta").at("provider").as_string(), "openai");
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "out_of_scope");
  BOOST_CHECK_EQUAL(stub.requests(), 1);
  BOOST_CHECK(!contains(res.out + res.err, key));
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(inconsistent_configuration_stops_startup) {
  auto dir = make_temp_dir("candor-openai-cfg");
  auto res = run_candor({"ask", oos},
                        {{"CANDOR_DATA_DIR", dir},
                         {"CANDOR_LLM_BASE_URL", "http://example.com/v1"},
                         {"CANDOR_LLM_MODEL", "m"},
                         {"CANDOR_LLM_API_KEY", key}});
  BOOST_CHECK_NE(res.exit_code, 0);
  BOOST_CHECK(contains(res.err, "CANDOR_LLM_API_KEY"));
  BOOST_CHECK(!contains(res.out + res.err, key));
  res = run_candor({"ask", oos},
                   {{"CANDOR_DATA_DIR", dir},
                    {"CANDOR_LLM_BASE_URL", "https://127.0.0.1:9/v1"},
                    {"CANDOR_LLM_MODEL", "m"},
                    {"CANDOR_LLM_CA_FILE", dir + "/missing.pem"}});
  BOOST_CHECK_NE(res.exit_code, 0);
  BOOST_CHECK(contains(res.err, "CANDOR_LLM_CA_FILE"));
  res = run_candor({"ask", oos},
                   {{"CANDOR_DATA_DIR", dir}, {"CANDOR_GUARD_MODEL", "g"}});
  BOOST_CHECK_NE(res.exit_code, 0);
  BOOST_CHECK(contains(res.err, "CANDOR_GUARD_MODEL"));
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(model_calls_overlap_under_concurrent_requests) {
  openai_stub stub{[](const stub_request&) {
    stub_reply r;
    r.content = route_oos;
    // Long enough that the calls overlap even on a loaded machine (the
    // timing itself is measured by eval/bench/llm_concurrency.sh).
    r.delay = 1000ms;
    return r;
  }};
  server_process proc{env_for(stub)};
  BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n" << proc.log());
  constexpr int n = 100;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < n; ++i)
    clients.emplace_back([&] {
      http_client c{proc.port(), 20000ms};
      if (!c.connected())
        return;
      auto r = c.ask(ask_body(oos));
      if (r && r->status == 200)
        ++ok;
    });
  for (auto& t : clients)
    t.join();
  BOOST_CHECK_EQUAL(ok.load(), n);
  BOOST_CHECK_EQUAL(stub.requests(), n);
  // Serialised calls would never overlap; here most of them do.
  BOOST_CHECK_MESSAGE(stub.max_concurrent() > 50,
                      "max concurrent model calls: " << stub.max_concurrent());
}

BOOST_AUTO_TEST_SUITE_END()
