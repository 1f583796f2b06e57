// net::server against the parts of HTTP/1.1 (RFC 9110, RFC 9112) that a
// client or a proxy in front relies on: message framing (a body whose
// length is unknown must not be taken for the next request), Host, HEAD,
// the absolute form of the target, Expect: 100-continue, header sizes and
// empty lines between requests. Each case sends raw bytes.

#include "net/server.hpp"

#include <chrono>
#include <string>
#include <thread>

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/fake_server.hpp"
#include "tests/support/http_client.hpp"

using namespace candor;
using namespace candor::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

/// A POST /ask with `extra` header lines (each ending in \r\n) and `body`
/// sent as is, with no Content-Length.
std::string post_ask(std::string_view extra, std::string_view body) {
  return "POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         + std::string{extra} + "\r\n" + std::string{body};
}

std::string smuggled_ask() {
  return "POST /ask HTTP/1.1\r\nHost: x\r\nX-Request-Id: smuggled-0001\r\n"
         "Content-Type: application/json\r\nContent-Length: "
         + std::to_string(good_body.size()) + "\r\n\r\n"
         + std::string{good_body};
}

} // namespace

BOOST_AUTO_TEST_SUITE(net_http_conformance)

BOOST_AUTO_TEST_CASE(unknown_transfer_coding_is_refused_and_the_body_not_run) {
  // RFC 9112 §6.3: with a Transfer-Encoding whose last coding is not
  // chunked the body's length is unknown. Read as "no body", the body
  // would be parsed as a second request on the same connection.
  running_server s;
  for (auto coding : {"gzip", "chunked, gzip", "gzip, chunked", "identity",
                      "chunked, chunked"}) {
    BOOST_TEST_CONTEXT("Transfer-Encoding: " << coding) {
      http_client c{s.port};
      BOOST_REQUIRE(
        c.send_raw(post_ask("X-Request-Id: framing-0001\r\nTransfer-Encoding: "
                              + std::string{coding} + "\r\n",
                            smuggled_ask())));
      auto r = c.read_response();
      check_error(r, 400, "invalid_request");
      BOOST_TEST(r->header("Connection") == "close");
      BOOST_TEST(r->header("X-Request-Id") == "framing-0001");
      BOOST_TEST(r->body.find("Transfer-Encoding") != std::string::npos);
      BOOST_TEST(c.wait_closed(2s));
    }
  }
  // Two fields, the second one chunked: still not a single coding.
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw(post_ask("Transfer-Encoding: gzip\r\n"
                                      "Transfer-Encoding: chunked\r\n",
                                      "0\r\n\r\n")));
    check_error(c.read_response(), 400, "invalid_request");
    BOOST_TEST(c.wait_closed(2s));
  }
  // Transfer-Encoding in HTTP/1.0.
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("POST /ask HTTP/1.0\r\nContent-Type: "
                             "application/json\r\nTransfer-Encoding: "
                             "chunked\r\n\r\n0\r\n\r\n"));
    check_error(c.read_response(), 400, "invalid_request");
  }
  // Nothing of the smuggled requests reached the service.
  BOOST_TEST(s.svc.asks().empty());
  // Chunked alone, in any case, is served.
  http_client ok{s.port};
  std::string chunk = std::string{good_body};
  char size[16];
  std::snprintf(size, sizeof size, "%zx", chunk.size());
  BOOST_REQUIRE(ok.send_raw(
    post_ask("Transfer-Encoding: ChUnKeD\r\n",
             std::string{size} + "\r\n" + chunk + "\r\n0\r\n\r\n")));
  auto r = ok.read_response();
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(s.svc.asks().size() == 1u);
}

BOOST_AUTO_TEST_CASE(an_http_1_1_request_needs_exactly_one_host) {
  running_server s;
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("GET /health HTTP/1.1\r\n\r\n"));
    auto r = c.read_response();
    check_error(r, 400, "invalid_request");
    BOOST_TEST(r->body.find("Host") != std::string::npos);
  }
  {
    http_client c{s.port};
    BOOST_REQUIRE(
      c.send_raw("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"));
    check_error(c.read_response(), 400, "invalid_request");
  }
  {
    // HTTP/1.0 has no such rule.
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("GET /health HTTP/1.0\r\n\r\n"));
    auto r = c.read_response();
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->status == 200);
  }
}

BOOST_AUTO_TEST_CASE(client_request_id_is_kept_when_the_header_is_refused) {
  // The 413 for a declared length over the limit and the 400 for a bad
  // Content-Length are decided while the header is read; they still carry
  // the client's id, and the ledger row its method and path.
  running_server s;
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw(
      "POST /ask HTTP/1.1\r\nHost: x\r\nX-Request-Id: too-large-0001\r\n"
      "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"));
    auto r = c.read_response();
    check_error(r, 413, "payload_too_large");
    BOOST_TEST(r->header("X-Request-Id") == "too-large-0001");
  }
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw(
      "POST /ask HTTP/1.1\r\nHost: x\r\nX-Request-Id: bad-length-0001\r\n"
      "Content-Length: 12x\r\n\r\n"));
    auto r = c.read_response();
    check_error(r, 400, "invalid_request");
    BOOST_TEST(r->header("X-Request-Id") == "bad-length-0001");
  }
  BOOST_REQUIRE(s.svc.wait_records(2));
  for (const auto& rec : s.svc.records()) {
    BOOST_TEST(rec.method == "POST");
    BOOST_TEST(rec.path == "/ask");
    BOOST_TEST((rec.request_id == "too-large-0001"
                || rec.request_id == "bad-length-0001"));
  }
}

BOOST_AUTO_TEST_CASE(head_gets_the_head_of_a_get) {
  running_server s;
  http_client c{s.port};
  auto get = c.request("GET", "/health");
  BOOST_REQUIRE(get.has_value());
  BOOST_REQUIRE(get->status == 200);
  // HEAD: same status and Content-Length, no body; the connection stays
  // usable (a body sent after the head would break the next response).
  BOOST_REQUIRE(c.send_raw("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"
                           "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto head = c.read_response_head();
  BOOST_REQUIRE(head.has_value());
  BOOST_TEST(head->status == 200);
  BOOST_TEST(head->header("Content-Length")
             == std::to_string(get->body.size()));
  BOOST_TEST(head->header("X-Content-Type-Options") == "nosniff");
  auto next = c.read_response();
  BOOST_REQUIRE(next.has_value());
  BOOST_TEST(next->status == 200);
  BOOST_TEST(!next->body.empty());
  // HEAD is not served where GET is not (and its 405 has no body either).
  BOOST_REQUIRE(c.send_raw("HEAD /ask HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto head_ask = c.read_response_head();
  BOOST_REQUIRE(head_ask.has_value());
  BOOST_TEST(head_ask->status == 405);
  BOOST_TEST(head_ask->header("Allow") == "POST");
}

BOOST_AUTO_TEST_CASE(absolute_form_targets_are_accepted) {
  // RFC 9112 §3.2.2: a server must accept the absolute form.
  running_server s;
  http_client c{s.port};
  auto health = c.request("GET", "http://127.0.0.1/health");
  BOOST_REQUIRE(health.has_value());
  BOOST_TEST(health->status == 200);
  auto stats = c.request("GET", "HTTP://example.test:8080/stats?since=1h");
  BOOST_REQUIRE(stats.has_value());
  BOOST_TEST(stats->status == 200);
  // An empty path is "/": the page.
  auto page = c.request("GET", "http://example.test");
  BOOST_REQUIRE(page.has_value());
  BOOST_TEST(page->status == 200);
  BOOST_TEST(page->header("Content-Type") == "text/html; charset=utf-8");
  check_error(c.request("GET", "http://example.test/nope"), 404, "not_found");
  check_error(c.request("GET", "ftp://example.test/health"), 400,
              "invalid_request");
  check_error(c.request("GET", "http:///health"), 400, "invalid_request");
}

BOOST_AUTO_TEST_CASE(expect_continue_is_refused_early_when_the_header_decides) {
  running_server s;
  // The wrong media type: 415 at once, without "100 Continue", and the
  // connection closed (the body may follow anyway).
  {
    http_client c{s.port};
    BOOST_REQUIRE(
      c.send_raw("POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                 "Expect: 100-continue\r\nContent-Length: 20\r\n\r\n"));
    auto r = c.read_response();
    check_error(r, 415, "unsupported_media_type");
    BOOST_TEST(r->header("Connection") == "close");
  }
  {
    http_client c{s.port};
    BOOST_REQUIRE(
      c.send_raw("POST /nowhere HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 "Content-Length: 20\r\n\r\n"));
    check_error(c.read_response(), 404, "not_found");
  }
  {
    http_client c{s.port};
    BOOST_REQUIRE(
      c.send_raw("POST /ask?x=1 HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 "application/json\r\nExpect: 100-continue\r\n"
                 "Content-Length: 20\r\n\r\n"));
    check_error(c.read_response(), 400, "invalid_request");
  }
  // An acceptable request gets "100 Continue", then its answer.
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw(
      "POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Expect: 100-continue\r\nContent-Length: "
      + std::to_string(good_body.size()) + "\r\n\r\n"));
    auto cont = c.read_response_head();
    BOOST_REQUIRE(cont.has_value());
    BOOST_TEST(cont->status == 100);
    BOOST_REQUIRE(c.send_raw(good_body));
    auto r = c.read_response();
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->status == 200);
  }
  BOOST_TEST(s.svc.asks().size() == 1u);
}

BOOST_AUTO_TEST_CASE(oversized_request_line_is_414_and_header_431) {
  running_server s;
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("GET /" + std::string(10000, 'a')
                             + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto r = c.read_response();
    check_error(r, 414, "uri_too_long");
    BOOST_TEST(r->header("Connection") == "close");
  }
  {
    http_client c{s.port};
    BOOST_REQUIRE(c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n"
                             "X-Request-Id: big-header-01\r\nX-Big: "
                             + std::string(9000, 'b') + "\r\n\r\n"));
    auto r = c.read_response();
    check_error(r, 431, "header_too_large");
  }
  BOOST_REQUIRE(s.svc.wait_records(2));
}

BOOST_AUTO_TEST_CASE(empty_lines_before_a_request_are_ignored) {
  // RFC 9112 §2.2 (a client that ends a body with an extra CRLF), up to a
  // bound: a stream of line ends is not a request.
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(c.send_raw("\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto r = c.read_response();
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  // Sent in their own packet, then the request.
  BOOST_REQUIRE(c.send_raw("\r\n"));
  std::this_thread::sleep_for(50ms);
  BOOST_REQUIRE(c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto again = c.read_response();
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(again->status == 200);
  http_client flood{s.port};
  BOOST_REQUIRE(flood.send_raw(std::string(200, '\n')
                               + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  check_error(flood.read_response(), 400, "invalid_request");
}

BOOST_AUTO_TEST_CASE(close_in_any_connection_field_closes) {
  running_server s;
  for (auto fields : {"Connection: keep-alive, close\r\n",
                      "Connection: keep-alive\r\nConnection: close\r\n"}) {
    for (auto version : {"1.0", "1.1"}) {
      BOOST_TEST_CONTEXT(version << " " << fields) {
        http_client c{s.port};
        BOOST_REQUIRE(c.send_raw("GET /health HTTP/" + std::string{version}
                                 + "\r\nHost: x\r\n" + fields + "\r\n"));
        auto r = c.read_response();
        BOOST_REQUIRE(r.has_value());
        BOOST_TEST(r->header("Connection") == "close");
        BOOST_TEST(c.wait_closed(2s));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(http_1_0_gets_no_100_continue) {
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(c.send_raw(
    "POST /ask HTTP/1.0\r\nContent-Type: application/json\r\n"
    "Expect: 100-continue\r\nContent-Length: "
    + std::to_string(good_body.size()) + "\r\n\r\n" + std::string{good_body}));
  auto r = c.read_response();
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
}

BOOST_AUTO_TEST_CASE(http_1_0_keep_alive_is_confirmed) {
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(
    c.send_raw("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto r = c.read_response();
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->header("Connection") == "keep-alive");
  BOOST_REQUIRE(
    c.send_raw("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto second = c.read_response();
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(second->status == 200);
}

BOOST_AUTO_TEST_CASE(replaced_request_id_is_recorded_on_every_route) {
  running_server s;
  http_client c{s.port};
  check_error(c.request("GET", "/nowhere", {}, {{"X-Request-Id", "bad"}}), 404,
              "not_found");
  check_error(c.request("POST", "/stats", "{}", {{"X-Request-Id", "bad"}}), 405,
              "method_not_allowed");
  BOOST_REQUIRE(s.svc.wait_records(2));
  for (const auto& rec : s.svc.records()) {
    BOOST_REQUIRE(rec.warnings.size() == 1u);
    BOOST_TEST(rec.warnings[0] == "request_id_replaced");
  }
}

BOOST_AUTO_TEST_SUITE_END()
