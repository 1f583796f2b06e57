#pragma once

// Declares the HTTP server in front of a domain::service, with Beast and
// Asio behind the pimpl.

#include <cstdint>
#include <functional>
#include <memory>

#include "domain/config.hpp"
#include "domain/error.hpp"
#include "domain/service.hpp"
#include "domain/error.hpp"

/// The HTTP listener (DESIGN.md §3). Beast and Asio stay behind the pimpl:
/// this header includes neither.
namespace candor::net {

class key_gate;

/// Keep-alive HTTP/1.1 server in front of a domain::service. One request in
/// flight per connection; requests are handed to the service without
/// blocking and answered when its callback posts back to the connection.
class server {
public:
  /// `svc` must outlive the server; `cfg` is copied.
  server(domain::service& svc, const domain::config& cfg);
  ~server();

  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Binds cfg.http.bind:cfg.http.port (port 0 = ephemeral) and starts
  /// listening. Returns the bound port; the error names the address.
  domain::outcome<uint16_t> listen();

  /// Runs cfg.http.threads Asio threads (the caller is one of them) and
  /// returns after a graceful shutdown, started by SIGTERM/SIGINT or stop():
  /// stop accepting, let in-flight requests finish and be answered with
  /// `Connection: close`, close idle connections, then return. A second
  /// signal (or stop()) forces the loop to end at once.
  void run();

  /// Thread-safe; same effect as a signal.
  void stop();

  /// The API keys the server admits (thread-safe; see net/key_gate.hpp).
  /// Empty until loaded: then every request is served as before.
  key_gate& keys();

  /// `fn` runs on every SIGHUP (after the re-index is asked for); set
  /// before run().
  void on_sighup(std::function<void()> fn);

  struct impl;

private:
  std::unique_ptr<impl> impl_;
};

} // namespace candor::net
