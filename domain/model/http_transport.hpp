#pragma once

// Declares the seam between the LLM actor and the HTTP client: one POST of
// a model call, its outcome and the asynchronous transport.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "domain/request_control.hpp"

/// The seam between the LLM actor (actors/) and the HTTP client (net/): the
/// actor describes one POST, the transport performs it on its own threads
/// and calls back once. No Beast or Asio here.
namespace candor::domain {

/// One HTTP POST of a model call.
struct http_call {
  std::string url; ///< absolute http:// or https:// URL
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds timeout{20000}; ///< whole attempt
  /// Raised by the caller to abandon the call (its request was
  /// cancelled): the transport closes the connection and reports
  /// `cancelled`. Null: the call cannot be abandoned.
  std::shared_ptr<cancel_signal> cancel;
};

/// How a transport attempt ended before any HTTP status was seen.
enum class transport_failure : uint8_t {
  none,     ///< a response arrived (see status)
  timeout,  ///< the attempt ran past its timeout
  connect,  ///< resolve, connect or reset: the endpoint is unreachable
  tls,      ///< handshake or certificate verification failed
  protocol, ///< malformed or oversized response
  bad_url,  ///< the URL could not be used
  cancelled, ///< the caller raised the call's cancel signal
};

/// The outcome of one http_call.
struct http_result {
  transport_failure failure = transport_failure::none;
  int status = 0;          ///< HTTP status when failure == none
  std::string body;        ///< response body (bounded by the transport)
  std::string retry_after; ///< raw Retry-After header, if any
  std::string detail;      ///< short description of a failure (no secrets)
  bool reused = false;     ///< the connection came from the keep-alive pool
};

/// Performs HTTP calls asynchronously. post() never blocks; `done` runs
/// exactly once, on one of the transport's own threads.
class http_transport {
public:
  virtual ~http_transport() = default;
  virtual void post(http_call call, std::function<void(http_result)> done) = 0;
};

} // namespace candor::domain
