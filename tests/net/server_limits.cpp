// net::server's limits (body and header sizes, in-flight bound,
// connection cap, read deadlines, idle keep-alive) and its lifecycle
// (listen, stop, graceful drain).

#include "net/server.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "net/http_util.hpp"
#include "tests/support/fake_server.hpp"
#include "tests/support/http_client.hpp"

using namespace candor;
using namespace candor::test;
using namespace std::chrono_literals;

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

BOOST_AUTO_TEST_CASE(malformed_request_is_400_oversized_header_431) {
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
    check_error(r, 431, "header_too_large");
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

BOOST_AUTO_TEST_CASE(at_the_cap_the_longest_waiting_connection_makes_room) {
  // Two connections allowed: a new one is let in by closing the one that
  // has waited longest for a request (idle keep-alive or a slow header),
  // not refused while the others hold the server.
  auto cfg = test_config();
  cfg.http.max_connections = 2;
  cfg.http.idle_timeout_ms = 10000;
  cfg.http.header_timeout_ms = 10000;
  running_server s{cfg};
  http_client oldest{s.port};
  BOOST_REQUIRE(oldest.request("GET", "/health").has_value()); // now idle
  std::this_thread::sleep_for(50ms);
  http_client slow{s.port}; // a header that never ends
  BOOST_REQUIRE(slow.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n"));
  std::this_thread::sleep_for(50ms);
  http_client newcomer{s.port};
  auto r = newcomer.request("GET", "/health");
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(oldest.wait_closed(2s));
  BOOST_TEST(s.svc.wait_dropped("shed", 1) == 1u);
  // The slow one is next in line.
  http_client another{s.port};
  BOOST_REQUIRE(another.request("GET", "/health").has_value());
  BOOST_TEST(slow.wait_closed(2s));
  BOOST_TEST(s.svc.wait_dropped("shed", 2) == 2u);
}

BOOST_AUTO_TEST_CASE(
  at_the_cap_with_every_connection_busy_new_ones_are_refused) {
  auto cfg = test_config();
  cfg.http.max_connections = 1;
  running_server s{cfg};
  s.svc.set_hold(true);
  http_client busy{s.port};
  const std::string body = R"({"question":"How long is the warranty?"})";
  BOOST_REQUIRE(busy.send_raw(
    "POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    "Content-Length: "
    + std::to_string(body.size()) + "\r\n\r\n" + body));
  BOOST_REQUIRE(s.svc.wait_held(1));
  http_client second{s.port};
  BOOST_TEST(second.wait_closed(2s));
  BOOST_TEST(s.svc.wait_dropped("capacity", 1) == 1u);
  s.svc.release_all();
  auto r = busy.read_response();
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  // Idle once its session waits for the next request (a moment after the
  // client has the answer): then a newcomer sheds it and is served.
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    http_client third{s.port};
    auto again = third.request("GET", "/health");
    served = again.has_value() && again->status == 200;
    if (!served)
      std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(served);
  BOOST_TEST(s.svc.wait_dropped("shed", 1) == 1u);
}

BOOST_AUTO_TEST_CASE(one_address_cannot_take_every_connection) {
  auto cfg = test_config();
  cfg.http.max_connections_per_address = 3;
  cfg.http.idle_timeout_ms = 10000;
  running_server s{cfg};
  std::vector<std::unique_ptr<http_client>> hog;
  for (int i = 0; i < 3; ++i) {
    hog.push_back(std::make_unique<http_client>(s.port, "127.0.0.2"));
    BOOST_REQUIRE(hog.back()->connected());
  }
  std::this_thread::sleep_for(100ms);
  http_client fourth{s.port, "127.0.0.2"};
  BOOST_TEST(fourth.wait_closed(2s));
  BOOST_TEST(s.svc.wait_dropped("per_address_limit", 1) == 1u);
  // Another address is served; the first three are still open.
  http_client other{s.port, "127.0.0.3"};
  auto r = other.request("GET", "/health");
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  auto mine = hog[0]->request("GET", "/health");
  BOOST_REQUIRE(mine.has_value());
  // A connection closed frees its address's place.
  hog[1]->close();
  bool admitted = false;
  for (int i = 0; i < 50 && !admitted; ++i) {
    http_client again{s.port, "127.0.0.2"};
    auto a = again.request("GET", "/health");
    admitted = a.has_value() && a->status == 200;
    if (!admitted)
      std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(admitted);
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
