#pragma once

// Reading one figure of a running server's GET /metrics.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "tests/support/http_client.hpp"

namespace candor::test {

/// The value of one series of GET /metrics on 127.0.0.1:port, e.g.
/// `candor_ledger_writes_failing` or `name{label="x"}`; -1 when absent.
inline double metric_value(uint16_t port, const std::string& series) {
  http_client c{port};
  auto m = c.request("GET", "/metrics");
  if (!m)
    return -1;
  auto at = m->body.find("\n" + series + " ");
  if (at == std::string::npos)
    return -1;
  return std::strtod(m->body.c_str() + at + series.size() + 2, nullptr);
}

} // namespace candor::test
