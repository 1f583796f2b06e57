// The HTTP listener: accepting connections, signals, graceful stop, and
// the server's public interface.

#include "net/server.hpp"

#include "net/server_impl.hpp"

#include <pthread.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include "data/log.hpp"

namespace candor::net {

// -- accepting and stopping ---------------------------------------------------

server::impl::~impl() {
  std::vector<std::shared_ptr<session>> live;
  {
    std::lock_guard<std::mutex> guard{shared->mtx};
    shared->open = false;
    for (auto& [id, w] : shared->sessions)
      if (auto s = w.lock())
        live.push_back(std::move(s));
  }
  ioc.stop();
  for (auto& s : live)
    detail::abandon_session(s);
  live.clear();
}

void server::impl::do_accept() {
  acceptor.async_accept(asio::make_strand(ioc),
                        beast::bind_front_handler(&impl::on_accept, this));
}

void server::impl::on_accept(beast::error_code ec, strand_socket socket) {
  if (stopping || !acceptor.is_open())
    return;
  if (ec) {
    data::log_event(data::log_level::warn, "http_accept_failed",
                    {{"error", ec.message()}});
    do_accept();
    return;
  }
  beast::error_code peer_ec;
  auto peer_ep = socket.remote_endpoint(peer_ec);
  std::string peer
    = peer_ec ? std::string{"unknown"} : peer_ep.address().to_string();
  std::shared_ptr<session> s;
  std::shared_ptr<session> victim;
  std::string_view refused;
  {
    std::lock_guard<std::mutex> guard{shared->mtx};
    // 1. No address may hold more than its share: the client that opened
    // them is refused, nobody else.
    auto per = cfg.http.max_connections_per_address;
    auto& held = shared->per_address[peer];
    if (per > 0 && held >= per) {
      refused = "per_address_limit";
    } else {
      // 2. At the global cap, the connection that has waited longest for
      // a whole request makes room; only when every connection is busy
      // with a request is the new one refused.
      auto open
        = static_cast<int64_t>(shared->sessions.size()) - shared->shedding;
      if (open >= cfg.http.max_connections) {
        victim = pick_victim();
        if (victim)
          ++shared->shedding;
        else
          refused = "capacity";
      }
    }
    if (refused.empty()) {
      ++held;
      auto id = shared->next_id++;
      s = detail::make_session(*this, shared, id, std::move(socket), peer);
      shared->sessions.emplace(id, s);
    } else if (held == 0) {
      shared->per_address.erase(peer);
    }
  }
  if (victim)
    detail::shed_session(std::move(victim));
  if (s) {
    detail::start_session(s);
  } else {
    beast::error_code ignored;
    socket.close(ignored);
    dropped(refused, peer);
  }
  do_accept();
}

std::shared_ptr<session> server::impl::pick_victim() {
  std::shared_ptr<session> best;
  int64_t best_since = 0;
  for (auto& [id, w] : shared->sessions) {
    auto s = w.lock();
    if (!s)
      continue;
    auto since = detail::waiting_since(*s);
    if (since == 0 || (best && since >= best_since))
      continue;
    best = std::move(s);
    best_since = since;
  }
  if (best && !detail::mark_shed(*best))
    best.reset(); // marked meanwhile by nobody else: accept runs on one strand
  return best;
}

void server::impl::dropped(std::string_view reason, const std::string& peer) {
  svc.connection_dropped(reason);
  int64_t count = 0;
  {
    std::lock_guard<std::mutex> guard{shared->mtx};
    auto& d = shared->drops[reason];
    ++d.unlogged;
    auto now = std::chrono::steady_clock::now();
    if (now - d.last < std::chrono::seconds{1})
      return; // the next line a second on says how many it stands for
    count = d.unlogged;
    d.unlogged = 0;
    d.last = now;
  }
  data::log_event(data::log_level::warn, "http_connection_dropped",
                  {{"reason", reason}, {"peer", peer}, {"count", count}});
}

void server::impl::on_signal(beast::error_code ec, int sig) {
  if (ec || finished)
    return;
  if (sig == SIGHUP) {
    // Re-index: the service loads the index file and swaps it in while
    // requests keep being served; the outcome goes to the log.
    data::log_event(data::log_level::info, "reindex_requested",
                    {{"via", "SIGHUP"}});
    svc.reindex([](domain::outcome<std::string> r) {
      if (r)
        data::log_event(data::log_level::info, "reindex_done",
                        {{"via", "SIGHUP"}, {"result", *r}});
      else if (r.err().code == domain::ec::shutting_down)
        // A SIGHUP just before a stop: nothing failed.
        data::log_event(data::log_level::info, "reindex_abandoned",
                        {{"via", "SIGHUP"}, {"message", r.err().message}});
      else
        data::log_event(data::log_level::error, "reindex_failed",
                        {{"via", "SIGHUP"}, {"message", r.err().message}});
    });
    if (on_sighup)
      on_sighup();
    signals.async_wait(beast::bind_front_handler(&impl::on_signal, this));
    return;
  }
  request_stop(sig == SIGINT ? "SIGINT" : "SIGTERM");
  if (!finished)
    signals.async_wait(beast::bind_front_handler(&impl::on_signal, this));
}

void server::impl::request_stop(std::string_view why) {
  if (finished)
    return;
  if (stopping) {
    data::log_event(data::log_level::warn, "http_forced_stop",
                    {{"reason", why}});
    finished = true;
    ioc.stop();
    return;
  }
  data::log_event(data::log_level::info, "http_draining", {{"reason", why}});
  stopping = true;
  draining = true;
  beast::error_code ignored;
  acceptor.close(ignored);
  std::vector<std::shared_ptr<session>> live;
  {
    std::lock_guard<std::mutex> guard{shared->mtx};
    shared->stopping = true;
    for (auto& [id, w] : shared->sessions)
      if (auto s = w.lock())
        live.push_back(std::move(s));
  }
  for (auto& s : live)
    detail::shutdown_session(std::move(s));
  maybe_finish();
}

void server::impl::maybe_finish() {
  if (finished || !stopping)
    return;
  {
    std::lock_guard<std::mutex> guard{shared->mtx};
    if (!shared->sessions.empty())
      return;
  }
  finished = true;
  beast::error_code ignored;
  signals.cancel(ignored);
  ioc.stop();
}

// -- public interface ---------------------------------------------------------

server::server(domain::service& svc, const domain::config& cfg)
    : impl_(std::make_unique<impl>(svc, cfg)) {
  // nop
}

server::~server() = default;

domain::outcome<uint16_t> server::listen() {
  auto& d = *impl_;
  auto where = [&] {
    auto addr = d.cfg.http.bind;
    if (addr.find(':') != std::string::npos)
      addr = "[" + addr + "]";
    return addr + ":" + std::to_string(d.cfg.http.port);
  };
  beast::error_code ec;
  auto addr = asio::ip::make_address(d.cfg.http.bind, ec);
  if (ec)
    return domain::make_error(domain::ec::config_invalid,
                              "invalid bind address " + where() + ": "
                                + ec.message());
  tcp::endpoint ep{addr, d.cfg.http.port};
  auto fail = [&](std::string_view what) {
    beast::error_code ignored;
    d.acceptor.close(ignored);
    return domain::make_error(domain::ec::internal,
                              "cannot listen on " + where() + ": "
                                + std::string{what} + ": " + ec.message());
  };
  if (d.acceptor.open(ep.protocol(), ec); ec)
    return fail("open");
  if (d.acceptor.set_option(asio::socket_base::reuse_address(true), ec); ec)
    return fail("set_option");
  if (d.acceptor.bind(ep, ec); ec)
    return fail("bind");
  if (d.acceptor.listen(asio::socket_base::max_listen_connections, ec); ec)
    return fail("listen");
  auto port = d.acceptor.local_endpoint(ec).port();
  if (ec)
    return fail("local_endpoint");
  d.listening = true;
  return port;
}

void server::run() {
  auto& d = *impl_;
  if (!d.listening) {
    auto r = listen();
    if (!r) {
      data::log_event(data::log_level::error, "http_listen_failed",
                      {{"message", r.err().message}});
      return;
    }
  }
  asio::dispatch(d.control, [&d] {
    if (d.stopping)
      return;
    d.do_accept();
    d.signals.add(SIGINT);
    d.signals.add(SIGTERM);
    d.signals.add(SIGHUP);
    d.signals.async_wait(beast::bind_front_handler(&impl::on_signal, &d));
  });
  auto loop = [&d] {
    for (;;) {
      try {
        d.ioc.run();
        return;
      } catch (const std::exception& e) {
        data::log_event(data::log_level::error, "http_handler_threw",
                        {{"what", e.what()}});
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < d.cfg.http.threads; ++i)
    threads.emplace_back([&loop] {
      pthread_setname_np(pthread_self(), "candor.http");
      loop();
    });
  loop();
  for (auto& t : threads)
    t.join();
}

key_gate& server::keys() {
  return impl_->keys;
}

void server::on_sighup(std::function<void()> fn) {
  impl_->on_sighup = std::move(fn);
}

void server::stop() {
  auto* d = impl_.get();
  asio::post(d->control, [d] { d->request_stop("stop()"); });
}

} // namespace candor::net
