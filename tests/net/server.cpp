// The HTTP contract of net::server against a fake service: routes,
// request ids, bodies, errors.

#include "net/server.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/api/api_json.hpp"
#include "data/log.hpp"
#include "net/http_util.hpp"
#include "tests/support/fake_server.hpp"
#include "tests/support/http_client.hpp"

using namespace candor;
using namespace candor::test;
using namespace std::chrono_literals;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(net_server)

BOOST_AUTO_TEST_CASE(ask_answers_with_validated_json) {
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(c.connected());
  auto r = c.ask(
    R"({"question":"  What is the refund policy? ","forceRoute":"docs"})",
    {{"X-Request-Id", "client-id-0001"}});
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  check_common(*r);
  BOOST_TEST(r->header("Content-Type") == "application/json");
  BOOST_TEST(r->header("X-Request-Id") == "client-id-0001");
  auto v = json::parse(r->body);
  BOOST_TEST(domain::validate_response(v).empty());
  BOOST_TEST(v.at("requestId").as_string() == "client-id-0001");
  BOOST_TEST(v.at("status").as_string() == "answered");
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 1u);
  BOOST_TEST(asks[0].question == "What is the refund policy?");
  BOOST_TEST((asks[0].force_route == domain::route_kind::docs));
  BOOST_TEST(asks[0].request_id == "client-id-0001");
  BOOST_TEST(asks[0].warnings.empty());
  BOOST_TEST(asks[0].received_us > 1600000000000000);
  BOOST_REQUIRE(s.svc.wait_records(1));
  auto rec = s.svc.records().at(0);
  BOOST_TEST(rec.http_status == 200);
  BOOST_TEST(rec.request_id == "client-id-0001");
  BOOST_TEST(rec.method == "POST");
  BOOST_TEST(rec.path == "/ask");
  BOOST_TEST(rec.route == "docs");
  BOOST_TEST(rec.status == "answered");
  BOOST_TEST(rec.error == "");
  BOOST_TEST(rec.llm_calls == 1);
  BOOST_TEST(rec.tokens == 15);
  BOOST_TEST(rec.question == "What is the refund policy?");
  BOOST_TEST(rec.ts_us == asks[0].received_us);
  BOOST_TEST(rec.latency_us >= 0);
}

BOOST_AUTO_TEST_CASE(request_id_rule) {
  running_server s;
  http_client c{s.port};
  // Invalid: replaced by a UUID, with a warning the service sees.
  auto bad = c.ask(good_body, {{"X-Request-Id", "bad id!"}});
  BOOST_REQUIRE(bad.has_value());
  BOOST_TEST(bad->status == 200);
  auto replaced = bad->header("X-Request-Id");
  BOOST_TEST(replaced.size() == 36u);
  BOOST_TEST(replaced != "bad id!");
  auto v = json::parse(bad->body);
  BOOST_TEST(v.at("requestId").as_string() == replaced);
  BOOST_REQUIRE(v.at("warnings").as_array().size() == 1u);
  BOOST_TEST(v.at("warnings").as_array()[0].as_string()
             == "request_id_replaced");
  // Absent: generated, no warning.
  auto none = c.ask(good_body);
  BOOST_REQUIRE(none.has_value());
  auto generated = none->header("X-Request-Id");
  BOOST_TEST(generated.size() == 36u);
  BOOST_TEST(generated != replaced);
  BOOST_TEST(json::parse(none->body).at("warnings").as_array().empty());
  // Too short: replaced on an error response too.
  auto err = c.request("GET", "/nowhere", {}, {{"X-Request-Id", "short"}});
  check_error(err, 404, "not_found");
  BOOST_TEST(err->header("X-Request-Id").size() == 36u);
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 2u);
  BOOST_TEST(asks[0].request_id == replaced);
  BOOST_REQUIRE(asks[0].warnings.size() == 1u);
  BOOST_TEST(asks[0].warnings[0] == "request_id_replaced");
  BOOST_TEST(asks[1].request_id == generated);
  BOOST_TEST(asks[1].warnings.empty());
}

BOOST_AUTO_TEST_CASE(invalid_body_is_400_with_issues) {
  running_server s;
  http_client c{s.port};
  auto r = c.ask(R"({"question":"a","extra":1})");
  check_error(r, 400, "invalid_request");
  BOOST_TEST(has_issue(*r, "question"));
  BOOST_TEST(has_issue(*r, "extra"));
  auto broken = c.ask("{not json");
  check_error(broken, 400, "invalid_request");
  BOOST_TEST(has_issue(*broken, ""));
  BOOST_TEST(s.svc.asks().empty());
  BOOST_REQUIRE(s.svc.wait_records(2));
  auto recs = s.svc.records();
  BOOST_TEST(recs[0].http_status == 400);
  BOOST_TEST(recs[0].error == "invalid_request");
  BOOST_TEST(recs[0].path == "/ask");
}

BOOST_AUTO_TEST_CASE(unknown_routes_are_404) {
  running_server s;
  http_client c{s.port};
  check_error(c.request("GET", "/static/nope.js"), 404, "not_found");
  check_error(c.request("GET", "/askx"), 404, "not_found");
  check_error(c.request("GET", "/runs/"), 404, "not_found");
  check_error(c.request("GET", "/runs/short"), 404, "not_found");
  check_error(c.request("GET", "/runs/has%20space1"), 404, "not_found");
  check_error(c.request("GET", "/runs/unknown-run-id"), 404, "not_found");
  auto ok = c.request("GET", "/runs/known-run-id");
  BOOST_REQUIRE(ok.has_value());
  BOOST_TEST(ok->status == 200);
  BOOST_TEST(json::parse(ok->body).at("requestId").as_string()
             == "known-run-id");
}

BOOST_AUTO_TEST_CASE(wrong_method_is_405_with_allow) {
  running_server s;
  http_client c{s.port};
  auto get_ask = c.request("GET", "/ask");
  check_error(get_ask, 405, "method_not_allowed");
  BOOST_TEST(get_ask->header("Allow") == "POST");
  auto post_stats = c.request("POST", "/stats", "{}");
  check_error(post_stats, 405, "method_not_allowed");
  BOOST_TEST(post_stats->header("Allow") == "GET, HEAD");
  auto del = c.request("DELETE", "/runs/abcdefgh");
  check_error(del, 405, "method_not_allowed");
  BOOST_TEST(del->header("Allow") == "GET, HEAD");
  BOOST_REQUIRE(s.svc.wait_records(3));
  for (const auto& rec : s.svc.records())
    BOOST_TEST(rec.http_status == 405);
}

BOOST_AUTO_TEST_CASE(content_type_must_be_json) {
  running_server s;
  http_client c{s.port};
  check_error(
    c.request("POST", "/ask", good_body, {{"Content-Type", "text/plain"}}), 415,
    "unsupported_media_type");
  check_error(c.request("POST", "/ask", good_body), 415,
              "unsupported_media_type");
  auto ok = c.request("POST", "/ask", good_body,
                      {{"Content-Type", "application/json; charset=utf-8"}});
  BOOST_REQUIRE(ok.has_value());
  BOOST_TEST(ok->status == 200);
}

BOOST_AUTO_TEST_CASE(service_errors_map_to_statuses) {
  running_server s;
  http_client c{s.port};
  struct row {
    domain::ec code;
    int status;
  };
  for (auto [code, status] :
       {row{domain::ec::fixture_missing, 422},
        row{domain::ec::llm_unavailable, 503}, row{domain::ec::timeout, 504},
        row{domain::ec::internal, 500}, row{domain::ec::storage_failed, 500}}) {
    s.svc.set_answer([code = code](const domain::ask_request&) {
      return domain::outcome<domain::ask_box>{
        domain::make_error(code, "from the service")};
    });
    auto r = c.ask(good_body);
    check_error(r, status, domain::to_string(code));
    BOOST_TEST(json::parse(r->body).at("message").as_string()
               == "from the service");
  }
  BOOST_REQUIRE(s.svc.wait_records(5));
  auto recs = s.svc.records();
  BOOST_TEST(recs[0].http_status == 422);
  BOOST_TEST(recs[0].error == "fixture_missing");
  BOOST_TEST(recs[0].question == "What is the refund policy?");
  BOOST_TEST(recs[2].http_status == 504);
  BOOST_TEST(recs[2].llm_calls == 0);
}

BOOST_AUTO_TEST_CASE(stats_window_parameter) {
  running_server s;
  http_client c{s.port};
  auto def = c.request("GET", "/stats");
  BOOST_REQUIRE(def.has_value());
  BOOST_TEST(def->status == 200);
  check_common(*def);
  BOOST_TEST(def->header("Content-Type") == "application/json");
  auto hour = c.request("GET", "/stats?since=1h");
  BOOST_REQUIRE(hour.has_value());
  BOOST_TEST(hour->status == 200);
  auto enc = c.request("GET", "/stats?since=%37d");
  BOOST_REQUIRE(enc.has_value());
  BOOST_TEST(enc->status == 200);
  auto bad = c.request("GET", "/stats?since=2h");
  check_error(bad, 400, "invalid_request");
  BOOST_TEST(has_issue(*bad, "since"));
  auto twice = c.request("GET", "/stats?since=1h&since=7d");
  check_error(twice, 400, "invalid_request");
  auto unknown = c.request("GET", "/stats?window=1h");
  check_error(unknown, 400, "invalid_request");
  BOOST_TEST(has_issue(*unknown, "window"));
  check_error(c.request("GET", "/stats?since=%zz"), 400, "invalid_request");
  auto windows = s.svc.windows();
  BOOST_REQUIRE(windows.size() == 3u);
  BOOST_TEST(windows[0] == "24h");
  BOOST_TEST(windows[1] == "1h");
  BOOST_TEST(windows[2] == "7d");
}

BOOST_AUTO_TEST_CASE(read_routes) {
  running_server s;
  http_client c{s.port};
  auto m = c.request("GET", "/metrics");
  BOOST_REQUIRE(m.has_value());
  BOOST_TEST(m->status == 200);
  check_common(*m);
  BOOST_TEST(m->header("Content-Type").rfind("text/plain; version=0.0.4", 0)
             == 0u);
  BOOST_TEST(m->body == "candor_up 1\n");
  auto h = c.request("GET", "/health");
  BOOST_REQUIRE(h.has_value());
  BOOST_TEST(h->status == 200);
  check_common(*h);
  BOOST_TEST(json::parse(h->body).at("provider").as_string() == "fake");
  auto d = c.request("GET", "/demo/questions");
  BOOST_REQUIRE(d.has_value());
  BOOST_TEST(d->status == 200);
  BOOST_TEST(json::parse(d->body).at("provider").as_string() == "fake");
}

BOOST_AUTO_TEST_CASE(chaos_header) {
  running_server s;
  http_client c{s.port};
  auto r = c.ask(good_body, {{"X-Candor-Chaos", "primary_down"}});
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  check_error(c.ask(good_body, {{"X-Candor-Chaos", "meteor"}}), 400,
              "invalid_request");
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 1u);
  BOOST_TEST((asks[0].chaos == domain::chaos_mode::primary_down));
}

BOOST_AUTO_TEST_CASE(chaos_header_ignored_when_not_allowed) {
  auto cfg = test_config();
  cfg.llm.allow_chaos = false;
  running_server s{cfg};
  http_client c{s.port};
  auto r = c.ask(good_body, {{"X-Candor-Chaos", "meteor"}});
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  auto r2 = c.ask(good_body, {{"X-Candor-Chaos", "all_down"}});
  BOOST_REQUIRE(r2.has_value());
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 2u);
  BOOST_TEST((asks[1].chaos == domain::chaos_mode::none));
}

BOOST_AUTO_TEST_CASE(keep_alive_serves_several_requests) {
  running_server s;
  http_client c{s.port};
  for (int i = 0; i < 3; ++i) {
    auto r = c.ask(good_body);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->status == 200);
    BOOST_TEST(r->header("Connection") != "close");
  }
  check_error(c.ask("[]"), 400, "invalid_request");
  auto h = c.request("GET", "/health");
  BOOST_REQUIRE(h.has_value());
  BOOST_TEST(h->status == 200);
  // HTTP/1.0 without keep-alive: answered, then closed.
  BOOST_REQUIRE(c.send_raw("GET /health HTTP/1.0\r\n\r\n"));
  auto old = c.read_response();
  BOOST_REQUIRE(old.has_value());
  BOOST_TEST(old->status == 200);
  BOOST_TEST(c.wait_closed(1s));
}

BOOST_AUTO_TEST_CASE(pipelined_and_split_requests_are_answered_in_order) {
  // Requests written back to back in one send are parsed out of the
  // buffer one after another (each with its own X-Request-Id), and a
  // request whose header and body arrive in pieces waits for the rest.
  running_server s;
  http_client c{s.port};
  auto ask = [](std::string_view id) {
    return "POST /ask HTTP/1.1\r\nHost: x\r\nX-Request-Id: " + std::string{id}
           + "\r\nContent-Type: application/json\r\nContent-Length: "
           + std::to_string(good_body.size()) + "\r\n\r\n"
           + std::string{good_body};
  };
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  BOOST_REQUIRE(c.send_raw(ask("pipelined-1") + health + ask("pipelined-2")));
  auto first = c.read_response();
  auto second = c.read_response();
  auto third = c.read_response();
  BOOST_REQUIRE(first && second && third);
  BOOST_TEST(first->status == 200);
  BOOST_TEST(first->header("X-Request-Id") == "pipelined-1");
  BOOST_TEST(second->status == 200);
  BOOST_TEST(json::parse(second->body).at("provider").as_string() == "fake");
  BOOST_TEST(third->status == 200);
  BOOST_TEST(third->header("X-Request-Id") == "pipelined-2");
  // One request in three pieces: part of the header, the rest of the
  // header with part of the body, the end of the body.
  auto split = ask("split-0001");
  auto cut = split.size() - 10;
  BOOST_REQUIRE(c.send_raw(split.substr(0, 20)));
  std::this_thread::sleep_for(50ms);
  BOOST_REQUIRE(c.send_raw(split.substr(20, cut - 20)));
  std::this_thread::sleep_for(50ms);
  BOOST_REQUIRE(c.send_raw(split.substr(cut)));
  auto last = c.read_response();
  BOOST_REQUIRE(last.has_value());
  BOOST_TEST(last->status == 200);
  BOOST_TEST(last->header("X-Request-Id") == "split-0001");
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 3u);
  for (const auto& a : asks)
    BOOST_TEST(a.question == "What is the refund policy?");
}

BOOST_AUTO_TEST_CASE(one_row_per_recorded_request) {
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(c.ask(good_body).has_value());             // 200
  BOOST_REQUIRE(c.ask("{}").has_value());                  // 400
  BOOST_REQUIRE(c.request("GET", "/missing").has_value()); // 404
  BOOST_REQUIRE(c.request("PUT", "/health").has_value());  // 405
  BOOST_REQUIRE(c.request("GET", "/health").has_value());  // not recorded
  BOOST_REQUIRE(c.request("GET", "/stats").has_value());   // not recorded
  BOOST_REQUIRE(c.request("GET", "/metrics").has_value()); // not recorded
  BOOST_REQUIRE(c.request("GET", "/demo/questions").has_value());
  BOOST_REQUIRE(c.request("GET", "/runs/unknown-run-id").has_value()); // 404
  BOOST_REQUIRE(s.svc.wait_records(5));
  std::this_thread::sleep_for(100ms);
  auto recs = s.svc.records();
  BOOST_REQUIRE(recs.size() == 5u);
  std::vector<int> statuses;
  for (const auto& r : recs)
    statuses.push_back(r.http_status);
  BOOST_TEST((statuses == std::vector<int>{200, 400, 404, 405, 404}));
  BOOST_TEST(recs[2].path == "/missing");
  BOOST_TEST(recs[3].method == "PUT");
  BOOST_TEST(recs[4].path == "/runs/unknown-run-id");
  BOOST_TEST(recs[4].error == "not_found");
}

BOOST_AUTO_TEST_CASE(ask_takes_no_query_parameters) {
  running_server s;
  http_client c{s.port};
  auto r = c.request("POST", "/ask?debug=1", good_body,
                     {{"Content-Type", "application/json"}});
  check_error(r, 400, "invalid_request");
  auto v = json::parse(r->body);
  BOOST_TEST(v.at("issues").at(0).at("path").as_string() == "debug");
  BOOST_TEST(s.svc.asks().empty());
}

BOOST_AUTO_TEST_CASE(ledger_question_is_masked_like_the_log) {
  // /runs serves the ledger's copy of the question: a key pasted into a
  // question must not come back from it.
  running_server s;
  http_client c{s.port};
  auto r
    = c.ask(R"({"question":"is sk-proj-abcdefghijklmnopqrstuvwx valid?"})");
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  BOOST_REQUIRE(s.svc.wait_records(1));
  auto rec = s.svc.records().at(0);
  BOOST_TEST(rec.question == "is sk-proj-*** valid?");
}

namespace {
std::mutex sunk_mtx;
std::vector<std::string> sunk_lines;
void sink_line(std::string_view line) {
  std::lock_guard<std::mutex> guard{sunk_mtx};
  sunk_lines.emplace_back(line);
}
} // namespace

BOOST_AUTO_TEST_CASE(every_request_gets_a_log_line_reads_no_ledger_row) {
  // One JSON line per request, successful reads included; the ledger (and
  // /stats) keeps /ask and every error.
  running_server s;
  sunk_lines.clear();
  data::set_log_sink(&sink_line);
  http_client c{s.port};
  auto health
    = c.request("GET", "/health", {}, {{"X-Request-Id", "health-read-1"}});
  BOOST_REQUIRE(health.has_value());
  BOOST_TEST(health->status == 200);
  auto metrics = c.request("GET", "/metrics");
  BOOST_REQUIRE(metrics.has_value());
  BOOST_TEST(metrics->status == 200);
  check_error(c.request("GET", "/nowhere"), 404, "not_found");
  BOOST_REQUIRE(s.svc.wait_records(1));
  data::flush_log();
  data::set_log_sink(nullptr);
  std::vector<std::string> paths;
  {
    std::lock_guard<std::mutex> guard{sunk_mtx};
    for (const auto& line : sunk_lines) {
      auto v = json::parse(line).as_object();
      if (v.at("event").as_string() != "request")
        continue;
      paths.emplace_back(v.at("path").as_string());
      if (v.at("path").as_string() == "/health") {
        BOOST_TEST(v.at("requestId").as_string() == "health-read-1");
        BOOST_TEST(v.at("method").as_string() == "GET");
        BOOST_TEST(v.at("httpStatus").as_int64() == 200);
        BOOST_TEST(v.at("latencyMs").is_double());
      }
    }
  }
  // The fake service logs nothing itself: the error's line is the real
  // service's (record_error); here only the two reads are logged by the
  // session.
  BOOST_TEST((paths == std::vector<std::string>{"/health", "/metrics"}),
             boost::test_tools::per_element());
  auto records = s.svc.records();
  BOOST_REQUIRE(records.size() == 1u);
  BOOST_TEST(records[0].path == "/nowhere");
}

BOOST_AUTO_TEST_SUITE_END()
