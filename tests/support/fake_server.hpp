#pragma once

// The HTTP server under test (tests/net/server*.cpp): a fake service behind
// a real net::server on an ephemeral loopback port, and checks every
// response must pass.

#include <atomic>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/config.hpp"
#include "domain/records.hpp"
#include "domain/service.hpp"
#include "domain/types.hpp"
#include "net/http_util.hpp"
#include "net/server.hpp"
#include "tests/support/ask_states.hpp"
#include "tests/support/fake_service.hpp"
#include "tests/support/http_client.hpp"

namespace candor::test {

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
inline void check_common(const http_response& r) {
  BOOST_TEST(r.header("X-Content-Type-Options") == "nosniff");
  BOOST_TEST(r.header("Cache-Control") == "no-store");
  BOOST_TEST(!r.header("Content-Type").empty());
  BOOST_TEST(net::valid_request_id(r.header("X-Request-Id")));
}

/// Checks an error response: status, common headers, body fields.
inline void check_error(const std::optional<http_response>& r, int status,
                        std::string_view code) {
  BOOST_REQUIRE(r.has_value());
  BOOST_TEST(r->status == status);
  check_common(*r);
  BOOST_TEST(r->header("Content-Type") == "application/json");
  auto v = boost::json::parse(r->body);
  BOOST_TEST(v.at("error").as_string() == code);
  BOOST_TEST(v.at("requestId").as_string() == r->header("X-Request-Id"));
  BOOST_TEST(!v.at("message").as_string().empty());
}

inline bool has_issue(const http_response& r, std::string_view path) {
  auto v = boost::json::parse(r.body);
  if (!v.as_object().contains("issues"))
    return false;
  for (const auto& i : v.at("issues").as_array())
    if (i.at("path").as_string() == path)
      return true;
  return false;
}

inline constexpr std::string_view good_body
  = R"({"question":"What is the refund policy?"})";

} // namespace candor::test
