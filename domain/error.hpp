#pragma once

// Declares candor's error codes, validation issues, the error value and
// the outcome type, and the error -> HTTP status mapping.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace candor::domain {

/// Every failure candor can report. Mapped to HTTP in exactly one place
/// (`http_status` below); registered as a CAF error category in
/// `actors/interfaces.hpp`.
enum class ec : uint8_t {
  none = 0,
  invalid_request,        ///< 400: body or parameters fail validation
  not_found,              ///< 404: unknown route or resource
  method_not_allowed,     ///< 405
  payload_too_large,      ///< 413
  unsupported_media_type, ///< 415
  fixture_missing,        ///< 422: scripted provider has no answer
  llm_unavailable,        ///< 503: every model failed
  overloaded,             ///< 503: too many requests in flight
  shutting_down,          ///< 503: the server is draining
  timeout,                ///< 504: request deadline passed
  internal,               ///< 500
  llm_budget_exceeded,    ///< not an HTTP error: 200 with status error
  step_cap_exceeded,      ///< not an HTTP error: 200 with status error
  llm_truncated,          ///< a model reply was cut at max tokens
  llm_parse_failed,       ///< a model reply did not match its schema
  node_unavailable,       ///< a graph node is not part of this build
  config_invalid,         ///< startup: bad configuration
  storage_failed,         ///< a database operation failed
  sql_timeout,            ///< generated SQL ran past its deadline (killed)
  sql_executor_failed,    ///< the executor process died or misbehaved
  sql_failed,             ///< SQLite refused or aborted a statement at run time
  index_unavailable,      ///< no retrieval snapshot is loaded
  unauthorized,           ///< 401: missing or wrong credentials
  uri_too_long,           ///< 414: the request line exceeds the header limit
  header_too_large,       ///< 431: the header fields exceed the limit
  rate_limited,           ///< 429: an API key's rate or daily budget is spent
  cancelled,              ///< 499: the client hung up; its request was stopped
};

/// Stable snake_case name, used as the `error` field of error bodies.
std::string_view to_string(ec code) noexcept;

/// The single error -> HTTP status mapping, used by the HTTP layer for the
/// response and by the actors for the request's ledger row: 400
/// invalid_request, 401 unauthorized, 404 not_found, 405
/// method_not_allowed, 413 payload_too_large, 414 uri_too_long, 415
/// unsupported_media_type, 422 fixture_missing, 429 rate_limited, 431
/// header_too_large, 499 cancelled (nginx's "client closed request": only
/// ever in the ledger and the metrics, the client is gone), 503
/// llm_unavailable / overloaded / shutting_down, 504 timeout, 500
/// everything else.
int http_status(ec code) noexcept;

std::ostream& operator<<(std::ostream& out, ec code);

/// One validation problem, reported in `issues` of a 400 body.
struct issue {
  std::string path;
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, issue& x) {
  return f(x.path, x.message);
}

/// What a request had spent when it ended in an HTTP error (a 504 after the
/// router answered, say): the route chosen and the model calls answered
/// until then, so that its ledger row agrees with its model-call rows.
struct spent_so_far {
  std::string route; ///< empty: none chosen
  int64_t llm_calls = 0;
  int64_t tokens = 0;
  double cost_usd = 0;
};

/// An error as a value: code, human message, optional validation issues.
struct error {
  ec code = ec::none;
  std::string message;
  std::vector<issue> issues;
  /// Set by the request's supervisor; stays in this process (not inspected).
  std::optional<spent_so_far> spent;

  explicit operator bool() const noexcept {
    return code != ec::none;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, error& x) {
  return f(x.code, x.message, x.issues);
}

inline error make_error(ec code, std::string message) {
  return error{code, std::move(message), {}, std::nullopt};
}

/// Either a value or an error. Small on purpose: no exceptions as API.
template <class T>
class outcome {
public:
  outcome(T value) : v_(std::move(value)) {}
  outcome(error err) : v_(std::move(err)) {}
  bool ok() const noexcept {
    return v_.index() == 0;
  }
  explicit operator bool() const noexcept {
    return ok();
  }
  T& value() {
    return std::get<0>(v_);
  }
  const T& value() const {
    return std::get<0>(v_);
  }
  T& operator*() {
    return value();
  }
  const T& operator*() const {
    return value();
  }
  T* operator->() {
    return &value();
  }
  const T* operator->() const {
    return &value();
  }
  const domain::error& err() const {
    return std::get<1>(v_);
  }

private:
  std::variant<T, domain::error> v_;
};

} // namespace candor::domain
