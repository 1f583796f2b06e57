#pragma once

// Internal to net/: the server's state and the connection sessions it
// owns, shared by net/server.cpp (accepting, signals, stopping) and
// net/session.cpp (one HTTP connection). Not for other folders.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>

#include "domain/config.hpp"
#include "domain/service.hpp"
#include "net/key_gate.hpp"
#include "net/mcp_sessions.hpp"
#include "net/server.hpp"

namespace candor::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace detail {

class session;

/// State shared by the server and the service callbacks: callbacks may post
/// back to a connection only while `open` (the server exists), and the
/// session registry lives here so sessions can leave it at any time.
struct hub {
  std::mutex mtx;
  bool open = true;
  bool stopping = false;
  uint64_t next_id = 0;
  std::unordered_map<uint64_t, std::weak_ptr<session>> sessions;
  /// Open connections by peer address (http.maxConnectionsPerAddress);
  /// an address leaves the map with its last connection.
  std::unordered_map<std::string, int64_t> per_address;
  /// Connections picked to be shed that have not closed yet: they no
  /// longer count against http.maxConnections.
  int64_t shedding = 0;
  /// Dropped connections not logged yet, by reason (one line a second
  /// per reason at most; see server::impl::dropped).
  struct drop_log {
    std::chrono::steady_clock::time_point last{};
    int64_t unlogged = 0;
  };
  std::unordered_map<std::string_view, drop_log> drops;
};

} // namespace detail

using strand_t = asio::strand<asio::io_context::executor_type>;
/// A connection's socket, bound to its own strand by concrete type (not
/// through any_io_executor, whose type erasure costs on every operation).
using strand_socket = tcp::socket::rebind_executor<strand_t>::other;
using detail::hub;
using detail::session;

// -- the server's state -------------------------------------------------------

struct server::impl {
  domain::service& svc;
  domain::config cfg;
  asio::io_context ioc;
  strand_t control; ///< serialises the acceptor, the signals and stopping
  tcp::acceptor acceptor;
  asio::signal_set signals;
  std::shared_ptr<hub> shared = std::make_shared<hub>();
  bool listening = false;
  bool stopping = false; ///< on `control`
  bool finished = false; ///< on `control`
  std::atomic<bool> draining{false};
  std::mutex flight_mtx;
  int64_t in_flight = 0;
  /// When the server started (Unix seconds): the `created` of /v1/models.
  int64_t started_s = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  /// The API keys (empty: the open behaviour).
  key_gate keys;
  /// The sessions of POST /mcp (net/mcp_routes.cpp).
  mcp_sessions mcp;
  /// Called on SIGHUP (on `control`), besides the re-index.
  std::function<void()> on_sighup;

  impl(domain::service& s, const domain::config& c)
      : svc(s), cfg(c), ioc(std::max(1, c.http.threads)),
        control(asio::make_strand(ioc)), acceptor(control), signals(control) {
    // nop
  }

  ~impl();

  void do_accept();
  void on_accept(beast::error_code ec, strand_socket socket);
  void on_signal(beast::error_code ec, int sig);
  void request_stop(std::string_view why);
  void maybe_finish();

  /// A connection refused or closed before it sent a whole request
  /// (`reason` as in domain::service::connection_dropped): counted in
  /// /metrics, and logged at warn with the peer address, at most once a
  /// second per reason (the line says how many it stands for).
  void dropped(std::string_view reason, const std::string& peer);

  /// Under `shared->mtx`, at http.maxConnections: the connection that has
  /// waited longest for a whole request (idle keep-alive, or a header or
  /// body arriving slowly) and is not being shed yet; null when every
  /// connection is busy with a request.
  std::shared_ptr<session> pick_victim();

  /// Takes one in-flight slot; false when max_in_flight are taken.
  bool acquire_slot() {
    std::lock_guard<std::mutex> guard{flight_mtx};
    if (in_flight >= cfg.http.max_in_flight)
      return false;
    svc.in_flight(++in_flight);
    return true;
  }

  void release_slot() {
    std::lock_guard<std::mutex> guard{flight_mtx};
    svc.in_flight(--in_flight);
  }
};

namespace detail {

/// A new connection session (not started yet).
std::shared_ptr<session> make_session(server::impl& srv, std::shared_ptr<hub> h,
                                      uint64_t id, strand_socket&& socket,
                                      std::string peer);

/// Closes `s` if it is still waiting for a whole request (posted to its
/// strand); a connection that became busy meanwhile is left alone.
void shed_session(std::shared_ptr<session> s);

/// When `s` waits for a whole request: since when (steady clock, ms);
/// else 0. Thread-safe.
int64_t waiting_since(const session& s);

/// Marks `s` as being shed; false when it already was. Thread-safe.
bool mark_shed(session& s);

/// Starts reading the first request.
void start_session(const std::shared_ptr<session>& s);

/// Graceful stop, posted to the session's strand: an idle connection
/// closes now, a request in progress is answered with Connection: close.
void shutdown_session(std::shared_ptr<session> s);

/// Server destruction (no Asio thread runs): closes the socket and breaks
/// the self-reference of a request still waiting for the service.
void abandon_session(const std::shared_ptr<session>& s);

} // namespace detail

} // namespace candor::net
