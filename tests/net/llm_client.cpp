// The model endpoint's HTTP client against a real loopback stub: success,
// keep-alive reuse, deadline, unreachable host, size bound, a hostile
// endpoint (interim 1xx replies; extra or unsolicited bytes keep a
// connection out of the pool), and TLS with a self-signed certificate
// (rejected unless its CA is configured).

#include "net/llm_client.hpp"

#include <future>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "tests/support/openai_stub.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace std::chrono_literals;
using domain::transport_failure;

namespace {

std::shared_ptr<domain::http_transport> client(net::llm_client_options opts
                                               = {}) {
  auto c = net::make_llm_client(opts);
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
  return *c;
}

/// Posts and waits (tests only: never on a server thread).
domain::http_result call(domain::http_transport& t, const std::string& url,
                         std::chrono::milliseconds timeout = 5000ms,
                         std::string body = "{}") {
  std::promise<domain::http_result> p;
  auto f = p.get_future();
  domain::http_call c;
  c.url = url;
  c.body = std::move(body);
  c.timeout = timeout;
  c.headers.emplace_back("Authorization", "Bearer sk-client-test");
  t.post(std::move(c), [&p](domain::http_result r) { p.set_value(r); });
  BOOST_REQUIRE(f.wait_for(20s) == std::future_status::ready);
  return f.get();
}

test::stub_reply say(const std::string& content) {
  test::stub_reply r;
  r.content = content;
  return r;
}

/// Calls `stub` with a 200 ms attempt deadline: the call must time out,
/// and well before `within` (the stub's own pace would take longer).
void check_times_out(const test::openai_stub& stub,
                     std::chrono::milliseconds within) {
  auto t = client();
  auto t0 = std::chrono::steady_clock::now();
  auto r = call(*t, stub.base_url() + "/chat/completions", 200ms);
  auto took = std::chrono::steady_clock::now() - t0;
  BOOST_CHECK(r.failure == transport_failure::timeout);
  BOOST_CHECK(took < within);
}

} // namespace

BOOST_AUTO_TEST_SUITE(llm_client)

BOOST_AUTO_TEST_CASE(urls_are_split_or_refused) {
  net::url_parts u;
  BOOST_REQUIRE(net::parse_url("https://api.example.com/v1/chat", u));
  BOOST_CHECK(u.https);
  BOOST_CHECK_EQUAL(u.host, "api.example.com");
  BOOST_CHECK_EQUAL(u.port, "443");
  BOOST_CHECK_EQUAL(u.target, "/v1/chat");
  BOOST_REQUIRE(net::parse_url("http://[::1]:8080", u));
  BOOST_CHECK_EQUAL(u.host, "::1");
  BOOST_CHECK_EQUAL(u.port, "8080");
  BOOST_CHECK_EQUAL(u.target, "/");
  for (auto bad : {"ftp://h/", "http://", "http://:80/", "http://h:x/",
                   "http://u@h/", "http://[::1/", "h/v1"})
    BOOST_CHECK_MESSAGE(!net::parse_url(bad, u), bad);
}

BOOST_AUTO_TEST_CASE(posts_and_reuses_the_connection) {
  test::openai_stub stub{[](const test::stub_request&) { return say("hi"); }};
  auto t = client();
  auto url = stub.base_url() + "/chat/completions";
  auto r1 = call(*t, url, 5000ms, R"({"model":"m1"})");
  BOOST_CHECK(r1.failure == transport_failure::none);
  BOOST_CHECK_EQUAL(r1.status, 200);
  BOOST_CHECK(r1.body.find("\"hi\"") != std::string::npos);
  BOOST_CHECK(!r1.reused);
  auto r2 = call(*t, url);
  BOOST_CHECK_EQUAL(r2.status, 200);
  BOOST_CHECK(r2.reused);
  BOOST_CHECK_EQUAL(stub.connections(), 1);
  auto seen = stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 2u);
  BOOST_CHECK_EQUAL(seen[0].target, "/v1/chat/completions");
  BOOST_CHECK_EQUAL(seen[0].model, "m1");
  BOOST_CHECK_EQUAL(seen[0].authorization, "Bearer sk-client-test");
}

BOOST_AUTO_TEST_CASE(statuses_and_retry_after_are_reported) {
  test::openai_stub stub{[](const test::stub_request&) {
    test::stub_reply r;
    r.status = 429;
    r.body = R"({"error":"slow down"})";
    r.retry_after = "3";
    return r;
  }};
  auto t = client();
  auto r = call(*t, stub.base_url() + "/chat/completions");
  BOOST_CHECK(r.failure == transport_failure::none);
  BOOST_CHECK_EQUAL(r.status, 429);
  BOOST_CHECK_EQUAL(r.retry_after, "3");
}

BOOST_AUTO_TEST_CASE(a_slow_endpoint_times_out) {
  test::openai_stub stub{[](const test::stub_request&) {
    auto r = say("late");
    r.delay = 2000ms;
    return r;
  }};
  check_times_out(stub, 1500ms);
}

BOOST_AUTO_TEST_CASE(an_unreachable_endpoint_is_a_connect_failure) {
  uint16_t port;
  {
    test::openai_stub stub{[](const test::stub_request&) { return say(""); }};
    port = stub.port();
  } // closed: nothing listens there now
  auto t = client();
  auto r = call(*t, "http://127.0.0.1:" + std::to_string(port) + "/v1/x");
  BOOST_CHECK(r.failure == transport_failure::connect);
  auto bad = call(*t, "gopher://127.0.0.1/");
  BOOST_CHECK(bad.failure == transport_failure::bad_url);
}

BOOST_AUTO_TEST_CASE(a_hang_up_on_a_pooled_connection_is_retried_fresh) {
  test::openai_stub stub{[](const test::stub_request& req) {
    auto r = say("ok");
    r.hang_up = req.index == 1; // the second request on the reused socket
    return r;
  }};
  auto t = client();
  auto url = stub.base_url() + "/chat/completions";
  BOOST_CHECK_EQUAL(call(*t, url).status, 200);
  auto r = call(*t, url);
  BOOST_CHECK(r.failure == transport_failure::none);
  BOOST_CHECK_EQUAL(r.status, 200);
  BOOST_CHECK_EQUAL(stub.requests(), 3);
  BOOST_CHECK_EQUAL(stub.connections(), 2);
}

BOOST_AUTO_TEST_CASE(responses_are_bounded) {
  test::openai_stub stub{
    [](const test::stub_request&) { return say(std::string(8000, 'x')); }};
  net::llm_client_options opts;
  opts.max_response_bytes = 4096;
  auto t = client(opts);
  auto r = call(*t, stub.base_url() + "/chat/completions");
  BOOST_CHECK(r.failure == transport_failure::protocol);
}

/// The reply's text (the chat completion's content) appears in the body.
bool says(const domain::http_result& r, const std::string& content) {
  return r.failure == transport_failure::none && r.status == 200
         && r.body.find("\"" + content + "\"") != std::string::npos;
}

BOOST_AUTO_TEST_CASE(interim_responses_are_skipped) {
  // 103 (and 100) before the real reply, in one send on a keep-alive
  // connection. Taken as the reply, the 200 stayed unread and answered the
  // next call: every later call read the previous call's reply.
  test::openai_stub stub{[](const test::stub_request& req) {
    test::stub_reply r;
    if (req.index == 0)
      r.raw = {"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n"
               + test::raw_response(200, test::chat_completion("one"))};
    else if (req.index == 1)
      r.raw = {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n"
               + test::raw_response(200, test::chat_completion("two"))};
    else
      r.content = "three";
    return r;
  }};
  auto t = client();
  auto url = stub.base_url() + "/chat/completions";
  auto r1 = call(*t, url);
  BOOST_CHECK_MESSAGE(says(r1, "one"), r1.status << " " << r1.body);
  auto r2 = call(*t, url);
  BOOST_CHECK_MESSAGE(says(r2, "two"), r2.status << " " << r2.body);
  auto r3 = call(*t, url);
  BOOST_CHECK_MESSAGE(says(r3, "three"), r3.status << " " << r3.body);
  BOOST_CHECK(r3.reused);
  BOOST_CHECK_EQUAL(stub.connections(), 1);
}

BOOST_AUTO_TEST_CASE(a_reply_sent_a_byte_at_a_time_is_read_whole) {
  // An endpoint that trickles its reply, every byte in its own TCP send 1 ms
  // apart (about 0.3 s in all), within the attempt's deadline: the reply is
  // read whole, not cut at the first packet.
  test::openai_stub stub{[](const test::stub_request&) {
    auto whole = test::raw_response(200, test::chat_completion("trickled"));
    test::stub_reply r;
    for (char ch : whole)
      r.raw.emplace_back(1, ch);
    r.raw_gap = 1ms;
    return r;
  }};
  auto t = client();
  auto r = call(*t, stub.base_url() + "/chat/completions", 5000ms);
  BOOST_CHECK_MESSAGE(says(r, "trickled"), r.status << " " << r.body);
  // The same pace past a short deadline times out instead of hanging.
  auto late = call(*t, stub.base_url() + "/chat/completions", 100ms);
  BOOST_CHECK(late.failure == transport_failure::timeout);
}

BOOST_AUTO_TEST_CASE(interim_responses_keep_the_attempts_deadline) {
  test::openai_stub stub{[](const test::stub_request&) {
    test::stub_reply r;
    r.raw
      = {"HTTP/1.1 103 Early Hints\r\n\r\n", "HTTP/1.1 103 Early Hints\r\n\r\n",
         test::raw_response(200, test::chat_completion("late"))};
    r.raw_gap = 150ms;
    return r;
  }};
  check_times_out(stub, 1000ms);
}

BOOST_AUTO_TEST_CASE(a_101_or_too_many_interim_responses_fail_the_call) {
  test::openai_stub stub{[](const test::stub_request& req) {
    auto continues = [](int n) {
      std::string out;
      for (int i = 0; i < n; ++i)
        out += "HTTP/1.1 100 Continue\r\n\r\n";
      return out;
    };
    test::stub_reply r;
    if (req.index == 0)
      r.raw = {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n"
               "Connection: upgrade\r\n\r\n"};
    else if (req.index == 1)
      r.raw
        = {continues(9) + test::raw_response(200, test::chat_completion("9"))};
    else
      r.raw
        = {continues(8) + test::raw_response(200, test::chat_completion("8"))};
    return r;
  }};
  auto t = client();
  auto url = stub.base_url() + "/chat/completions";
  auto switched = call(*t, url);
  BOOST_CHECK(switched.failure == transport_failure::protocol);
  BOOST_CHECK(switched.detail.find("101") != std::string::npos);
  auto nine = call(*t, url);
  BOOST_CHECK(nine.failure == transport_failure::protocol);
  BOOST_CHECK(nine.detail.find("interim") != std::string::npos);
  auto eight = call(*t, url);
  BOOST_CHECK_MESSAGE(says(eight, "8"), eight.status << " " << eight.body);
  BOOST_CHECK_EQUAL(stub.connections(), 3); // a failed call closes its own
}

BOOST_AUTO_TEST_CASE(a_connection_with_unread_bytes_is_not_pooled) {
  // A second complete response after the real one, in the same send: the
  // pooled connection would hand it to the next call as its reply.
  test::openai_stub stub{[](const test::stub_request& req) {
    test::stub_reply r;
    if (req.index == 0)
      r.raw = {test::raw_response(200, test::chat_completion("one"))
               + test::raw_response(200, test::chat_completion("extra"))};
    else
      r.content = "two";
    return r;
  }};
  auto t = client();
  auto url = stub.base_url() + "/chat/completions";
  BOOST_CHECK(says(call(*t, url), "one"));
  auto r2 = call(*t, url);
  BOOST_CHECK_MESSAGE(says(r2, "two"), r2.status << " " << r2.body);
  BOOST_CHECK(!r2.reused);
  BOOST_CHECK_EQUAL(stub.connections(), 2);
}

BOOST_AUTO_TEST_CASE(unread_tls_records_keep_a_connection_out_of_the_pool) {
  // The same over TLS, the extra response in a TLS record of its own that
  // arrives with the first: it waits in OpenSSL's buffers, neither in the
  // read buffer nor on the socket.
  test::temp_dir dir{"candor-tls"};
  BOOST_REQUIRE(test::make_self_signed_cert(dir.path.string()));
  test::openai_stub stub{
    [](const test::stub_request& req) {
      test::stub_reply r;
      if (req.index == 0)
        r.raw = {test::raw_response(200, test::chat_completion("one")),
                 test::raw_response(200, test::chat_completion("extra"))};
      else
        r.content = "two";
      return r;
    },
    dir.path.string()};
  net::llm_client_options opts;
  opts.ca_file = dir.file("cert.pem");
  auto t = client(opts);
  auto url = stub.base_url() + "/chat/completions";
  BOOST_CHECK(says(call(*t, url), "one"));
  auto r2 = call(*t, url);
  BOOST_CHECK_MESSAGE(says(r2, "two"), r2.status << " " << r2.body);
  BOOST_CHECK_EQUAL(stub.connections(), 2);
}

BOOST_AUTO_TEST_CASE(unsolicited_bytes_on_an_idle_connection_discard_it) {
  // The extra response arrives after the connection went back to the pool.
  test::openai_stub stub{[](const test::stub_request& req) {
    test::stub_reply r;
    if (req.index == 0) {
      r.raw = {test::raw_response(200, test::chat_completion("one")),
               test::raw_response(200, test::chat_completion("extra"))};
      r.raw_gap = 100ms;
    } else {
      r.content = "two";
    }
    return r;
  }};
  auto t = client();
  auto url = stub.base_url() + "/chat/completions";
  BOOST_CHECK(says(call(*t, url), "one"));
  std::this_thread::sleep_for(400ms); // "extra" is now on the idle socket
  auto r2 = call(*t, url);
  BOOST_CHECK_MESSAGE(says(r2, "two"), r2.status << " " << r2.body);
  BOOST_CHECK(!r2.reused);
  BOOST_CHECK_EQUAL(stub.connections(), 2);
}

BOOST_AUTO_TEST_CASE(an_oversized_header_names_the_header_limit) {
  test::openai_stub stub{[](const test::stub_request&) {
    test::stub_reply r;
    r.raw = {test::raw_response(200, test::chat_completion("x"),
                                "X-Pad: " + std::string(20000, 'p') + "\r\n")};
    return r;
  }};
  auto t = client();
  auto r = call(*t, stub.base_url() + "/chat/completions");
  BOOST_CHECK(r.failure == transport_failure::protocol);
  BOOST_CHECK_MESSAGE(r.detail == "the response header exceeds 16384 bytes",
                      r.detail);
}

BOOST_AUTO_TEST_CASE(tls_needs_a_trusted_certificate) {
  test::temp_dir dir{"candor-tls"};
  BOOST_REQUIRE(test::make_self_signed_cert(dir.path.string()));
  test::openai_stub stub{[](const test::stub_request&) { return say("tls"); },
                         dir.path.string()};
  BOOST_CHECK(stub.base_url().rfind("https://", 0) == 0);
  auto url = stub.base_url() + "/chat/completions";
  // The system store does not know the stub's certificate.
  auto untrusted = call(*client(), url);
  BOOST_CHECK(untrusted.failure == transport_failure::tls);
  BOOST_CHECK_EQUAL(stub.requests(), 0);
  // With its CA configured the same endpoint works.
  net::llm_client_options opts;
  opts.ca_file = dir.file("cert.pem");
  auto trusted = call(*client(opts), url);
  BOOST_CHECK(trusted.failure == transport_failure::none);
  BOOST_CHECK_EQUAL(trusted.status, 200);
  BOOST_CHECK_EQUAL(stub.requests(), 1);
  // By name (SNI and the host name check) as well as by address.
  auto by_name
    = call(*client(opts), "https://localhost:" + std::to_string(stub.port())
                            + "/v1/chat/completions");
  BOOST_CHECK(by_name.failure == transport_failure::none);
  BOOST_CHECK_EQUAL(stub.requests(), 2);
  // A CA file that cannot be read stops startup, naming the variable.
  net::llm_client_options missing;
  missing.ca_file = dir.file("nope.pem");
  auto failed = net::make_llm_client(missing);
  BOOST_REQUIRE(!failed.ok());
  BOOST_CHECK(failed.err().message.find("CANDOR_LLM_CA_FILE")
              != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
