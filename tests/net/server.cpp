#include "net/server.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/api_json.hpp"
#include "net/http_util.hpp"
#include "tests/support/http_client.hpp"

using namespace candor;
using namespace std::chrono_literals;
using test::http_client;
using test::http_response;
namespace json = boost::json;

namespace {

/// A finished docs answer for `req`.
domain::ask_state answered(const domain::ask_request& req) {
  domain::ask_state st;
  st.request = req;
  st.route = domain::route_kind::docs;
  st.route_reason = "policy question";
  st.status = domain::status_kind::answered;
  st.answer = "Refunds take 14 days.";
  domain::citation c;
  c.chunk_id = "refunds#policy-1";
  c.doc_title = "Refunds";
  c.heading = "Policy";
  c.score = 0.5;
  c.snippet = "Refunds take 14 days";
  st.citations = {c};
  st.usage.calls = 1;
  st.usage.tokens_in = 10;
  st.usage.tokens_out = 5;
  st.service.provider = "fake";
  st.service.models = {"scripted-primary"};
  st.service.guardrail_mode = "rules";
  st.trace = {{domain::node::guard_input, "pass", 3}};
  return st;
}

/// The service behind the server in these tests: records what it is given,
/// answers at once (on the calling thread) or holds the /ask callbacks until
/// the test releases them (from the test thread).
class fake_service : public domain::service {
public:
  using answer_fn
    = std::function<domain::outcome<domain::ask_box>(
      const domain::ask_request&)>;

  void ask(domain::ask_request req, ask_callback cb) override {
    std::unique_lock<std::mutex> lk{mtx_};
    asks_.push_back(req);
    cv_.notify_all();
    if (hold_) {
      held_.emplace_back(std::move(req), std::move(cb));
      cv_.notify_all();
      return;
    }
    auto fn = answer_;
    lk.unlock();
    cb(fn ? fn(req) : domain::ask_box{answered(req)});
  }

  void stats(std::string window, text_callback cb) override {
    {
      std::lock_guard<std::mutex> lk{mtx_};
      windows_.push_back(window);
    }
    cb(std::string{R"({"window":")"} + window + "\"}");
  }

  void run(std::string request_id, text_callback cb) override {
    if (request_id == "unknown-run-id")
      cb(domain::make_error(domain::ec::not_found, "no such run"));
    else
      cb(std::string{R"({"requestId":")"} + request_id + "\"}");
  }

  void health(text_callback cb) override {
    cb(std::string{R"({"provider":"fake"})"});
  }

  void demo_questions(text_callback cb) override {
    cb(std::string{R"([{"question":"What is the refund policy?"}])"});
  }

  std::string metrics() override {
    return "candor_up 1\n";
  }

  void completed(domain::request_record rec) override {
    std::lock_guard<std::mutex> lk{mtx_};
    records_.push_back(std::move(rec));
    cv_.notify_all();
  }

  void in_flight(int64_t value) override {
    std::lock_guard<std::mutex> lk{mtx_};
    gauge_.push_back(value);
  }

  // -- test controls ----------------------------------------------------------

  void set_answer(answer_fn fn) {
    std::lock_guard<std::mutex> lk{mtx_};
    answer_ = std::move(fn);
  }

  void set_hold(bool hold) {
    std::lock_guard<std::mutex> lk{mtx_};
    hold_ = hold;
  }

  /// Waits until `n` callbacks are held.
  bool wait_held(size_t n, std::chrono::milliseconds within = 3s) {
    std::unique_lock<std::mutex> lk{mtx_};
    return cv_.wait_for(lk, within, [&] { return held_.size() >= n; });
  }

  /// Answers every held callback (from this thread).
  void release_all() {
    std::vector<std::pair<domain::ask_request, ask_callback>> xs;
    {
      std::lock_guard<std::mutex> lk{mtx_};
      xs.swap(held_);
    }
    for (auto& [req, cb] : xs)
      cb(domain::ask_box{answered(req)});
  }

  /// Waits until `n` records were completed.
  bool wait_records(size_t n, std::chrono::milliseconds within = 3s) {
    std::unique_lock<std::mutex> lk{mtx_};
    return cv_.wait_for(lk, within, [&] { return records_.size() >= n; });
  }

  std::vector<domain::request_record> records() {
    std::lock_guard<std::mutex> lk{mtx_};
    return records_;
  }

  std::vector<domain::ask_request> asks() {
    std::lock_guard<std::mutex> lk{mtx_};
    return asks_;
  }

  std::vector<std::string> windows() {
    std::lock_guard<std::mutex> lk{mtx_};
    return windows_;
  }

  std::vector<int64_t> gauge() {
    std::lock_guard<std::mutex> lk{mtx_};
    return gauge_;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  answer_fn answer_;
  bool hold_ = false;
  std::vector<std::pair<domain::ask_request, ask_callback>> held_;
  std::vector<domain::ask_request> asks_;
  std::vector<domain::request_record> records_;
  std::vector<std::string> windows_;
  std::vector<int64_t> gauge_;
};

domain::config test_config() {
  domain::config cfg;
  cfg.http.port = 0;
  cfg.http.threads = 2;
  cfg.http.header_timeout_ms = 300;
  cfg.http.body_timeout_ms = 300;
  cfg.http.idle_timeout_ms = 400;
  cfg.http.max_in_flight = 2;
  cfg.http.retry_after_seconds = 7;
  cfg.http.body_limit_bytes = 1024;
  cfg.llm.allow_chaos = true;
  return cfg;
}

/// A server on an ephemeral port, run in a background thread.
struct running_server {
  fake_service svc;
  std::unique_ptr<net::server> srv;
  std::thread thread;
  std::atomic<bool> returned{false};
  uint16_t port = 0;

  explicit running_server(domain::config cfg = test_config()) {
    srv = std::make_unique<net::server>(svc, cfg);
    auto p = srv->listen();
    BOOST_REQUIRE_MESSAGE(p.ok(), "listen failed");
    port = *p;
    thread = std::thread([this] {
      srv->run();
      returned = true;
    });
  }

  ~running_server() {
    if (srv)
      srv->stop();
    thread.join();
  }

  /// Waits for run() to return.
  bool wait_returned(std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (!returned && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    return returned;
  }
};

/// The headers every response carries.
void check_common(const http_response& r) {
  BOOST_TEST(r.header("X-Content-Type-Options") == "nosniff");
  BOOST_TEST(r.header("Cache-Control") == "no-store");
  BOOST_TEST(!r.header("Content-Type").empty());
  BOOST_TEST(net::valid_request_id(r.header("X-Request-Id")));
}

} // namespace

namespace {

/// Checks an error response: status, common headers, body fields.
void check_error(const std::optional<http_response>& r, int status,
                 std::string_view code) {
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == status);
  check_common(*r);
  BOOST_TEST(r->header("Content-Type") == "application/json");
  auto v = json::parse(r->body);
  BOOST_TEST(v.at("error").as_string() == code);
  BOOST_TEST(v.at("requestId").as_string() == r->header("X-Request-Id"));
  BOOST_TEST(!v.at("message").as_string().empty());
}

bool has_issue(const http_response& r, std::string_view path) {
  auto v = json::parse(r.body);
  if (!v.as_object().contains("issues"))
    return false;
  for (const auto& i : v.at("issues").as_array())
    if (i.at("path").as_string() == path)
      return true;
  return false;
}

constexpr std::string_view good_body
  = R"({"question":"What is the refund policy?"})";

} // namespace

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
  check_error(c.request("GET", "/"), 404, "not_found");
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
  BOOST_TEST(post_stats->header("Allow") == "GET");
  auto del = c.request("DELETE", "/runs/abcdefgh");
  check_error(del, 405, "method_not_allowed");
  BOOST_TEST(del->header("Allow") == "GET");
  BOOST_REQUIRE(s.svc.wait_records(3));
  for (const auto& rec : s.svc.records())
    BOOST_TEST(rec.http_status == 405);
}

BOOST_AUTO_TEST_CASE(content_type_must_be_json) {
  running_server s;
  http_client c{s.port};
  check_error(c.request("POST", "/ask", good_body,
                        {{"Content-Type", "text/plain"}}),
              415, "unsupported_media_type");
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
  for (auto [code, status] : {row{domain::ec::fixture_missing, 422},
                              row{domain::ec::llm_unavailable, 503},
                              row{domain::ec::timeout, 504},
                              row{domain::ec::internal, 500},
                              row{domain::ec::storage_failed, 500}}) {
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
}

BOOST_AUTO_TEST_CASE(invalid_response_becomes_500) {
  running_server s;
  s.svc.set_answer([](const domain::ask_request& req) {
    auto st = answered(req);
    st.status = domain::status_kind::pending; // never valid on the wire
    return domain::outcome<domain::ask_box>{domain::ask_box{st}};
  });
  http_client c{s.port};
  check_error(c.ask(good_body), 500, "internal");
  BOOST_REQUIRE(s.svc.wait_records(1));
  BOOST_TEST(s.svc.records()[0].http_status == 500);
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
  BOOST_TEST(json::parse(d->body).is_array());
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

BOOST_AUTO_TEST_CASE(completed_once_per_recorded_request) {
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(c.ask(good_body).has_value());                 // 200
  BOOST_REQUIRE(c.ask("{}").has_value());                      // 400
  BOOST_REQUIRE(c.request("GET", "/missing").has_value());     // 404
  BOOST_REQUIRE(c.request("PUT", "/health").has_value());      // 405
  BOOST_REQUIRE(c.request("GET", "/health").has_value());      // not recorded
  BOOST_REQUIRE(c.request("GET", "/stats").has_value());       // not recorded
  BOOST_REQUIRE(c.request("GET", "/metrics").has_value());     // not recorded
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

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(net_server_limits)

BOOST_AUTO_TEST_CASE(body_over_limit_is_413) {
  running_server s;
  {
    http_client c{s.port};
    std::string big = R"({"question":")" + std::string(2000, 'a') + "\"}";
    auto r = c.ask(big);
    check_error(r, 413, "payload_too_large");
    BOOST_TEST(r->header("Connection") == "close");
    BOOST_TEST(c.wait_closed(2s));
  }
  {
    // Declared length over the limit: refused before the body is sent.
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("POST /ask HTTP/1.1\r\nHost: x\r\n"
                             "Content-Type: application/json\r\n"
                             "Content-Length: 100000\r\n\r\n"));
    check_error(c.read_response(), 413, "payload_too_large");
  }
  {
    // Chunked body over the limit.
    http_client c{s.port};
    std::string chunk(800, 'a');
    char size[16];
    std::snprintf(size, sizeof size, "%zx", chunk.size());
    std::string req = "POST /ask HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: application/json\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 2; ++i)
      req += std::string{size} + "\r\n" + chunk + "\r\n";
    req += "0\r\n\r\n";
    BOOST_REQUIRE(c.send_raw(req));
    check_error(c.read_response(), 413, "payload_too_large");
  }
  BOOST_REQUIRE(s.svc.wait_records(3));
  for (const auto& rec : s.svc.records())
    BOOST_TEST(rec.http_status == 413);
  BOOST_TEST(s.svc.asks().empty());
}

BOOST_AUTO_TEST_CASE(malformed_and_oversized_headers_are_400) {
  running_server s;
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("BLAH\x01 / HTTP/1.1\r\n\r\n"));
    check_error(c.read_response(), 400, "invalid_request");
    BOOST_TEST(c.wait_closed(2s));
  }
  {
    http_client c{s.port};
    std::string req = "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: "
                      + std::string(9000, 'b') + "\r\n\r\n";
    BOOST_REQUIRE(c.send_raw(req));
    auto r = c.read_response();
    check_error(r, 400, "invalid_request");
  }
  BOOST_REQUIRE(s.svc.wait_records(2));
}

BOOST_AUTO_TEST_CASE(overloaded_is_503_with_retry_after) {
  running_server s; // max_in_flight = 2
  s.svc.set_hold(true);
  http_client a{s.port};
  http_client b{s.port};
  http_client c{s.port};
  std::string req = "POST /ask HTTP/1.1\r\nHost: x\r\n"
                    "Content-Type: application/json\r\nContent-Length: "
                    + std::to_string(good_body.size()) + "\r\n\r\n"
                    + std::string{good_body};
  BOOST_REQUIRE(a.send_raw(req));
  BOOST_REQUIRE(b.send_raw(req));
  BOOST_REQUIRE(s.svc.wait_held(2));
  auto r = c.ask(good_body);
  check_error(r, 503, "overloaded");
  BOOST_TEST(r->header("Retry-After") == "7");
  // Other routes that reach the service are bounded too.
  check_error(c.request("GET", "/stats"), 503, "overloaded");
  s.svc.release_all();
  auto ra = a.read_response();
  auto rb = b.read_response();
  BOOST_REQUIRE(ra.has_value());
  BOOST_REQUIRE(rb.has_value());
  BOOST_TEST(ra->status == 200);
  BOOST_TEST(rb->status == 200);
  // Slots are free again.
  s.svc.set_hold(false);
  auto again = c.ask(good_body);
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(again->status == 200);
  auto gauge = s.svc.gauge();
  BOOST_REQUIRE(gauge.size() >= 6u);
  BOOST_TEST(gauge[0] == 1);
  BOOST_TEST(gauge[1] == 2);
  BOOST_TEST(gauge.back() == 0);
  for (auto g : gauge)
    BOOST_TEST(g <= 2);
}

BOOST_AUTO_TEST_CASE(max_connections_closes_extra_ones) {
  auto cfg = test_config();
  cfg.http.max_connections = 1;
  running_server s{cfg};
  http_client first{s.port};
  auto r = first.request("GET", "/health");
  BOOST_REQUIRE(r.has_value());
  http_client second{s.port};
  BOOST_TEST(second.wait_closed(2s));
  auto again = first.request("GET", "/health");
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(again->status == 200);
}

BOOST_AUTO_TEST_CASE(trickling_client_is_cut_off) {
  running_server s; // header_timeout_ms = 300
  http_client c{s.port};
  c.set_timeout(100ms);
  std::string req = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "
                    + std::string(200, 'z') + "\r\n\r\n";
  auto start = std::chrono::steady_clock::now();
  bool closed = false;
  for (char ch : req) {
    if (!c.send_raw(std::string_view{&ch, 1}) || c.wait_closed(50ms)) {
      closed = true;
      break;
    }
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST(closed);
  BOOST_TEST((elapsed < 1500ms));
  BOOST_TEST((elapsed >= 250ms));
}

BOOST_AUTO_TEST_CASE(trickling_body_is_cut_off) {
  running_server s; // body_timeout_ms = 300
  http_client c{s.port};
  BOOST_REQUIRE(c.send_raw("POST /ask HTTP/1.1\r\nHost: x\r\n"
                           "Content-Type: application/json\r\n"
                           "Content-Length: 100\r\n\r\n{"));
  auto start = std::chrono::steady_clock::now();
  BOOST_TEST(c.wait_closed(2s));
  BOOST_TEST((std::chrono::steady_clock::now() - start < 1500ms));
  BOOST_TEST(s.svc.asks().empty());
}

BOOST_AUTO_TEST_CASE(idle_connection_is_closed) {
  running_server s; // idle_timeout_ms = 400
  http_client c{s.port};
  auto r = c.request("GET", "/health");
  BOOST_REQUIRE(r.has_value());
  auto start = std::chrono::steady_clock::now();
  BOOST_TEST(c.wait_closed(2s));
  auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST((elapsed >= 300ms));
  BOOST_TEST((elapsed < 1500ms));
  // A connection that never sends anything is closed as well.
  http_client silent{s.port};
  BOOST_TEST(silent.wait_closed(2s));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(net_server_lifecycle)

BOOST_AUTO_TEST_CASE(listen_reports_the_address) {
  fake_service svc;
  auto cfg = test_config();
  cfg.http.bind = "not-an-address";
  net::server bad{svc, cfg};
  auto r = bad.listen();
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().message.find("not-an-address") != std::string::npos);
  // A taken port names the address.
  running_server s;
  auto taken = test_config();
  taken.http.port = s.port;
  net::server second{svc, taken};
  auto r2 = second.listen();
  BOOST_REQUIRE(!r2.ok());
  BOOST_TEST(r2.err().message.find("127.0.0.1:" + std::to_string(s.port))
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(stop_without_connections_returns) {
  running_server s;
  s.srv->stop();
  BOOST_TEST(s.wait_returned(2s));
}

BOOST_AUTO_TEST_CASE(graceful_stop_finishes_in_flight_request) {
  running_server s;
  s.svc.set_hold(true);
  http_client busy{s.port};
  http_client idle{s.port};
  auto warm = idle.request("GET", "/health");
  BOOST_REQUIRE(warm.has_value());
  std::string req = "POST /ask HTTP/1.1\r\nHost: x\r\n"
                    "Content-Type: application/json\r\nContent-Length: "
                    + std::to_string(good_body.size()) + "\r\n\r\n"
                    + std::string{good_body};
  BOOST_REQUIRE(busy.send_raw(req));
  BOOST_REQUIRE(s.svc.wait_held(1));
  s.srv->stop();
  // The idle keep-alive connection is closed; run() waits for the request.
  BOOST_TEST(idle.wait_closed(1s));
  std::this_thread::sleep_for(200ms);
  BOOST_TEST(!s.returned.load());
  // New connections are refused once draining.
  http_client late{s.port};
  BOOST_TEST((!late.connected() || late.wait_closed(1s)));
  s.svc.release_all();
  auto r = busy.read_response();
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->header("Connection") == "close");
  BOOST_TEST(busy.wait_closed(1s));
  BOOST_TEST(s.wait_returned(2s));
  BOOST_REQUIRE(s.svc.wait_records(1));
  BOOST_TEST(s.svc.records()[0].http_status == 200);
}

BOOST_AUTO_TEST_CASE(second_stop_forces_exit) {
  auto cfg = test_config();
  cfg.http.idle_timeout_ms = 5000;
  cfg.http.header_timeout_ms = 5000;
  running_server s{cfg};
  s.svc.set_hold(true);
  // A connection in the middle of a header keeps the drain from finishing.
  http_client slow{s.port};
  BOOST_REQUIRE(slow.send_raw("GET /health HTTP/1.1\r\n"));
  http_client busy{s.port};
  BOOST_REQUIRE(busy.send_raw(
    "POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    "Content-Length: "
    + std::to_string(good_body.size()) + "\r\n\r\n" + std::string{good_body}));
  BOOST_REQUIRE(s.svc.wait_held(1));
  s.srv->stop();
  std::this_thread::sleep_for(100ms);
  BOOST_TEST(!s.returned.load());
  s.srv->stop();
  BOOST_TEST(s.wait_returned(2s));
  s.srv.reset(); // destroys sessions that still have pending operations
  // A late answer after the forced stop is dropped without harm.
  s.svc.release_all();
}

BOOST_AUTO_TEST_SUITE_END()
