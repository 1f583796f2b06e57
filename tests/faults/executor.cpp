// The fault suite, executors: a real `candor serve` whose SQL executor is
// stopped while the server answers a data question. The statement is
// read-only, so the sandbox runs it again on a healthy executor and the user
// gets the answer; the fault is counted and logged. (The sandbox-level cases,
// SIGKILL mid-statement and a second loss, are in
// tests/actors/sql_sandbox_limits.cpp.)

#include <chrono>
#include <string>

#include <signal.h>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/children.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"

using namespace candor;
using namespace std::chrono_literals;

namespace {

constexpr const char* data_question
  = R"({"question":"How many orders were placed per channel on 24 December 2025?"})";

int64_t sandbox_number(test::server_process& s, const char* key) {
  test::http_client c{s.port()};
  auto r = c.request("GET", "/health");
  if (!r)
    return -1;
  auto h = boost::json::parse(r->body).as_object();
  auto* sb = h.at("sandbox").if_object();
  return sb != nullptr ? sb->at(key).as_int64() : -1;
}

} // namespace

BOOST_AUTO_TEST_SUITE(faults_executor)

BOOST_AUTO_TEST_CASE(a_stopped_executor_costs_a_retry_not_the_answer) {
  // One executor, so the question must meet the stopped one first.
  test::server_process s{{{"CANDOR_LLM_PROVIDER", "local"},
                          {"CANDOR_SQL_EXECUTOR_POOL", "1"},
                          {"CANDOR_SQL_DEADLINE_MS", "1500"}}};
  BOOST_REQUIRE_MESSAGE(s.start(), s.log());
  BOOST_REQUIRE(
    test::eventually([&] { return sandbox_number(s, "ready") == 1; }));
  auto before = test::executors_of(s.pid());
  BOOST_REQUIRE_EQUAL(before.size(), 1u);
  auto victim = before.begin()->first;
  BOOST_REQUIRE_EQUAL(::kill(victim, SIGSTOP), 0);

  test::http_client c{s.port()};
  auto start = std::chrono::steady_clock::now();
  auto r = c.ask(data_question);
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto body = boost::json::parse(r->body).as_object();
  BOOST_CHECK_EQUAL(body.at("status").as_string(), "answered");
  BOOST_CHECK_EQUAL(body.at("sql").at("rowCount").as_int64(), 3);
  // The deadline passed once (the stopped executor), not twice.
  BOOST_CHECK_GE(took, 1500ms);
  BOOST_CHECK_LT(took, 10s);

  BOOST_CHECK(test::eventually([&] { return test::not_running(victim); }));
  BOOST_CHECK(
    test::eventually([&] { return sandbox_number(s, "ready") == 1; }));
  BOOST_CHECK_EQUAL(sandbox_number(s, "retries"), 1);
  BOOST_CHECK_EQUAL(sandbox_number(s, "kills"), 0);
  auto m = c.request("GET", "/metrics");
  BOOST_REQUIRE(m);
  BOOST_CHECK_NE(
    m->body.find("candor_sql_sandbox_events_total{event=\"retry\"} 1"),
    std::string::npos);
  BOOST_CHECK_EQUAL(s.stop(SIGTERM), 0);
  auto log = s.log();
  BOOST_CHECK_NE(log.find(R"("level":"warn","event":"sql_statement_retried")"),
                 std::string::npos);
  BOOST_CHECK_NE(log.find("was stopped"), std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
