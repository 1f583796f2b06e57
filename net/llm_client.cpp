// The model endpoint's HTTP client: Beast over its own threads, TLS, a
// keep-alive pool per host, per-attempt deadlines and response bounds.

#include "net/llm_client.hpp"

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>

namespace candor::net {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using domain::http_result;
using domain::transport_failure;

using tls_stream = beast::ssl_stream<beast::tcp_stream>;

/// Bound on a response header (each interim one too).
constexpr uint32_t max_header_bytes = 16 * 1024;

/// Interim (1xx) responses skipped before the final one; more is a failure.
constexpr int max_interim = 8;

/// One open connection to a host; used by one attempt at a time.
struct connection {
  std::string key; ///< pool key: scheme://host:port
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<tls_stream> tls;
  beast::flat_buffer buffer;

  beast::tcp_stream& tcp() {
    return tls ? beast::get_lowest_layer(*tls) : *plain;
  }
};

/// What the attempts share: the TLS context, the options and the idle pool.
struct shared_state {
  explicit shared_state(asio::io_context& io) : ioc(io) {
    // nop
  }

  asio::io_context& ioc;
  ssl::context tls_ctx{ssl::context::tls_client};
  llm_client_options opts;
  std::mutex mtx;
  std::map<std::string, std::vector<std::unique_ptr<connection>>> idle;

  std::unique_ptr<connection> take(const std::string& key) {
    std::lock_guard<std::mutex> guard{mtx};
    auto it = idle.find(key);
    if (it == idle.end() || it->second.empty())
      return nullptr;
    auto c = std::move(it->second.back());
    it->second.pop_back();
    return c;
  }

  void give(std::unique_ptr<connection> c) {
    c->tcp().expires_never();
    std::lock_guard<std::mutex> guard{mtx};
    auto& slot = idle[c->key];
    if (slot.size() < static_cast<size_t>(std::max(0, opts.max_idle_per_host)))
      slot.push_back(std::move(c));
    // else: dropped, which closes it
  }
};

/// Whether the connection holds bytes no request asked for: left in the read
/// buffer after a response, buffered by TLS, or readable on the socket (data
/// or a close). HTTP/1.1 has no request ids, so a reply read later would be
/// taken for the answer to the next request; such a connection is closed,
/// never reused.
bool has_unread(connection& c) {
  if (c.buffer.size() > 0)
    return true;
  if (c.tls) {
    auto* native = c.tls->native_handle();
    if (SSL_has_pending(native) == 1
        || BIO_ctrl_pending(SSL_get_rbio(native)) > 0)
      return true;
  }
  pollfd p{};
  p.fd = c.tcp().socket().native_handle();
  p.events = POLLIN;
  return ::poll(&p, 1, 0) != 0; // an error (-1) is no better
}

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

/// A peer that closed an idle keep-alive connection shows up as one of
/// these on the first write or read of a reused connection.
bool stale_connection(const beast::error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset
         || ec == asio::error::broken_pipe || ec == http::error::end_of_stream
         || ec == asio::error::connection_aborted;
}

/// One HTTP attempt: a pooled or fresh connection, write, read, callback.
class attempt_op : public std::enable_shared_from_this<attempt_op> {
public:
  attempt_op(std::shared_ptr<shared_state> sh, url_parts url,
             domain::http_call call, std::function<void(http_result)> done)
      : sh_(std::move(sh)), url_(std::move(url)), call_(std::move(call)),
        done_(std::move(done)), strand_(asio::make_strand(sh_->ioc)) {
    key_ = std::string{url_.https ? "https://" : "http://"} + url_.host + ":"
           + url_.port;
    deadline_ = std::chrono::steady_clock::now() + call_.timeout;
  }

  void start() {
    // A cancel closes the connection on the attempt's strand; the handler
    // of whatever operation was pending then finds the attempt finished.
    if (call_.cancel)
      call_.cancel->on_cancel([w = weak_from_this()] {
        if (auto self = w.lock())
          asio::post(self->strand_, [self] { self->abort(); });
      });
    if (finished_)
      return;
    build_request();
    while (auto c = sh_->take(key_)) {
      if (has_unread(*c))
        continue; // unsolicited bytes while idle: dropped, which closes it
      conn_ = std::move(c);
      reused_ = true;
      write();
      return;
    }
    connect_fresh();
  }

  asio::strand<asio::io_context::executor_type>& strand() {
    return strand_;
  }

private:
  void abort() {
    if (finished_)
      return;
    if (resolver_)
      resolver_->cancel();
    if (timer_)
      timer_->cancel();
    fail(transport_failure::cancelled, "cancelled by the caller");
  }

  void build_request() {
    req_.method(http::verb::post);
    req_.target(url_.target);
    req_.version(11);
    bool default_port = url_.port == (url_.https ? "443" : "80");
    auto host = url_.host.find(':') != std::string::npos ? "[" + url_.host + "]"
                                                         : url_.host;
    req_.set(http::field::host, default_port ? host : host + ":" + url_.port);
    req_.set(http::field::user_agent, "candor");
    for (auto& [name, value] : call_.headers)
      req_.set(name, value);
    req_.keep_alive(true);
    req_.body() = call_.body;
    req_.prepare_payload();
  }

  void connect_fresh() {
    reused_ = false;
    conn_ = std::make_unique<connection>();
    closed_ = false;
    conn_->key = key_;
    if (url_.https) {
      conn_->tls = std::make_unique<tls_stream>(strand_, sh_->tls_ctx);
      auto* native = conn_->tls->native_handle();
      // Verify the peer against the host: SNI and name check for names,
      // an IP check for address literals.
      conn_->tls->set_verify_mode(ssl::verify_peer);
      bool ok = true;
      if (is_ip_literal(url_.host)) {
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native),
                                           url_.host.c_str())
             == 1;
      } else {
        ok = SSL_set_tlsext_host_name(native, url_.host.c_str()) == 1
             && SSL_set1_host(native, url_.host.c_str()) == 1;
      }
      if (!ok) {
        fail(transport_failure::tls, "cannot set up TLS for the host");
        return;
      }
    } else {
      conn_->plain = std::make_unique<beast::tcp_stream>(strand_);
    }
    resolver_.emplace(strand_);
    timer_.emplace(strand_);
    timer_->expires_at(deadline_);
    timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && self->resolver_)
        self->resolver_->cancel(); // resolving took the whole attempt
    });
    resolver_->async_resolve(
      url_.host, url_.port,
      [self = shared_from_this()](beast::error_code ec,
                                  tcp::resolver::results_type results) {
        self->on_resolve(ec, std::move(results));
      });
  }

  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    if (finished_)
      return; // aborted
    timer_->cancel();
    if (ec) {
      if (std::chrono::steady_clock::now() >= deadline_)
        fail(transport_failure::timeout, "timeout while resolving");
      else
        fail(transport_failure::connect, "cannot resolve the host");
      return;
    }
    conn_->tcp().expires_at(deadline_);
    conn_->tcp().async_connect(
      results,
      [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
        self->on_connect(ec);
      });
  }

  void on_connect(beast::error_code ec) {
    if (finished_)
      return; // aborted
    if (ec) {
      io_failure(ec, transport_failure::connect, "connect");
      return;
    }
    if (!conn_->tls) {
      write();
      return;
    }
    conn_->tls->async_handshake(
      ssl::stream_base::client,
      [self = shared_from_this()](beast::error_code ec) {
        if (self->finished_)
          return; // aborted
        if (ec) {
          self->io_failure(ec, transport_failure::tls, "TLS handshake");
          return;
        }
        self->write();
      });
  }

  void write() {
    conn_->tcp().expires_at(deadline_);
    auto handler = [self = shared_from_this()](beast::error_code ec, size_t) {
      self->on_write(ec);
    };
    if (conn_->tls)
      http::async_write(*conn_->tls, req_, std::move(handler));
    else
      http::async_write(*conn_->plain, req_, std::move(handler));
  }

  void on_write(beast::error_code ec) {
    if (finished_)
      return; // aborted
    if (ec) {
      if (reused_ && stale_connection(ec)) {
        connect_fresh();
        return;
      }
      io_failure(ec, transport_failure::connect, "write");
      return;
    }
    read();
  }

  /// Reads one response (interim or final) under the attempt's deadline.
  void read() {
    parser_.emplace();
    parser_->header_limit(max_header_bytes);
    parser_->body_limit(static_cast<uint64_t>(sh_->opts.max_response_bytes));
    auto handler = [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->on_read(ec, n);
    };
    if (conn_->tls)
      http::async_read(*conn_->tls, conn_->buffer, *parser_,
                       std::move(handler));
    else
      http::async_read(*conn_->plain, conn_->buffer, *parser_,
                       std::move(handler));
  }

  void on_read(beast::error_code ec, size_t n) {
    if (finished_)
      return; // aborted
    if (ec) {
      if (reused_ && n == 0 && interim_ == 0 && stale_connection(ec)) {
        connect_fresh();
        return;
      }
      if (ec == http::error::header_limit)
        fail(transport_failure::protocol, "the response header exceeds "
                                            + std::to_string(max_header_bytes)
                                            + " bytes");
      else if (ec == http::error::body_limit)
        fail(transport_failure::protocol,
             "the response exceeds "
               + std::to_string(sh_->opts.max_response_bytes) + " bytes");
      else
        io_failure(ec, transport_failure::connect, "read");
      return;
    }
    auto& res = parser_->get();
    auto status = static_cast<int>(res.result_int());
    if (status / 100 == 1) {
      // An interim response (RFC 9110 15.2): the final one follows on the
      // same connection. Taken as final, it would leave that one unread for
      // the next request. A model call never asks to switch protocols.
      if (status == 101) {
        fail(transport_failure::protocol, "unexpected 101 Switching Protocols");
        return;
      }
      if (++interim_ > max_interim) {
        fail(transport_failure::protocol, "more than "
                                            + std::to_string(max_interim)
                                            + " interim (1xx) responses");
        return;
      }
      read();
      return;
    }
    http_result out;
    out.status = status;
    out.body = std::move(res.body());
    if (auto it = res.find(http::field::retry_after); it != res.end())
      out.retry_after = std::string{it->value().substr(0, 64)};
    out.reused = reused_;
    bool keep = res.keep_alive() && !has_unread(*conn_);
    parser_.reset();
    if (keep)
      sh_->give(std::move(conn_));
    else
      close();
    complete(std::move(out));
  }

  /// An I/O error: a deadline is a timeout, anything else `kind`.
  void io_failure(beast::error_code ec, transport_failure kind,
                  const char* stage) {
    if (ec == beast::error::timeout
        || std::chrono::steady_clock::now() >= deadline_) {
      fail(transport_failure::timeout, std::string{"timeout during "} + stage);
      return;
    }
    if (ec.category() == asio::error::get_ssl_category()
        || ec.category() == ssl::error::get_stream_category())
      kind = transport_failure::tls;
    fail(kind, std::string{stage} + " failed: " + ec.message());
  }

  /// Closes the connection but keeps it: an operation still pending on it
  /// (a cancel arrives mid-read) completes later with an error, and Beast's
  /// read touches the connection's buffer and stream then, so they live as
  /// long as this attempt, whose handlers hold it.
  void close() {
    if (!conn_ || closed_)
      return;
    closed_ = true;
    beast::error_code ignored;
    conn_->tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    conn_->tcp().close();
  }

  void fail(transport_failure kind, std::string detail) {
    close();
    http_result out;
    out.failure = kind;
    out.detail = std::move(detail);
    out.reused = reused_;
    complete(std::move(out));
  }

  void complete(http_result r) {
    if (finished_)
      return;
    finished_ = true;
    auto done = std::move(done_);
    done(std::move(r));
  }

  std::shared_ptr<shared_state> sh_;
  url_parts url_;
  domain::http_call call_;
  std::function<void(http_result)> done_;
  asio::strand<asio::io_context::executor_type> strand_;
  std::string key_;
  std::chrono::steady_clock::time_point deadline_;
  std::unique_ptr<connection> conn_;
  std::optional<tcp::resolver> resolver_;
  std::optional<asio::steady_timer> timer_;
  http::request<http::string_body> req_;
  std::optional<http::response_parser<http::string_body>> parser_;
  int interim_ = 0; ///< 1xx responses skipped
  bool reused_ = false;
  bool closed_ = false; ///< conn_ closed (kept until the attempt ends)
  bool finished_ = false;
};

class llm_client : public domain::http_transport {
public:
  explicit llm_client(const llm_client_options& opts)
      : work_(asio::make_work_guard(ioc_)),
        sh_(std::make_shared<shared_state>(ioc_)) {
    sh_->opts = opts;
  }

  domain::error init() {
    auto& ctx = sh_->tls_ctx;
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.set_verify_mode(ssl::verify_peer);
    beast::error_code ec;
    ctx.set_default_verify_paths(ec);
    if (!sh_->opts.ca_file.empty()) {
      ctx.load_verify_file(sh_->opts.ca_file, ec);
      if (ec)
        return domain::make_error(domain::ec::config_invalid,
                                  "CANDOR_LLM_CA_FILE: cannot load '"
                                    + sh_->opts.ca_file + "' (" + ec.message()
                                    + ")");
    }
    auto n = std::max(1, sh_->opts.threads);
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] { ioc_.run(); });
    return {};
  }

  ~llm_client() override {
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_)
      t.join();
    std::lock_guard<std::mutex> guard{sh_->mtx};
    sh_->idle.clear();
  }

  void post(domain::http_call call,
            std::function<void(http_result)> done) override {
    url_parts url;
    if (!parse_url(call.url, url)) {
      http_result r;
      r.failure = transport_failure::bad_url;
      r.detail = "not an http(s) URL";
      done(std::move(r));
      return;
    }
    auto op = std::make_shared<attempt_op>(sh_, std::move(url), std::move(call),
                                           std::move(done));
    asio::post(op->strand(), [op] { op->start(); });
  }

private:
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::shared_ptr<shared_state> sh_;
  std::vector<std::thread> threads_;
};

} // namespace

bool parse_url(const std::string& url, url_parts& out) {
  std::string_view rest{url};
  if (rest.substr(0, 7) == "http://") {
    out.https = false;
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    out.https = true;
    rest.remove_prefix(8);
  } else {
    return false;
  }
  auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  out.target
    = slash == std::string_view::npos ? "/" : std::string{rest.substr(slash)};
  if (authority.empty() || authority.find('@') != std::string_view::npos)
    return false;
  std::string_view port;
  if (authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return false;
    out.host = std::string{authority.substr(1, close - 1)};
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return false;
      port = after.substr(1);
    }
  } else {
    auto colon = authority.find(':');
    out.host = std::string{authority.substr(0, colon)};
    if (colon != std::string_view::npos)
      port = authority.substr(colon + 1);
  }
  if (out.host.empty())
    return false;
  if (port.empty()) {
    out.port = out.https ? "443" : "80";
  } else {
    if (port.size() > 5
        || port.find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    out.port = std::string{port};
  }
  return true;
}

llm_client_options client_options(const domain::config& cfg) {
  llm_client_options o;
  o.ca_file = cfg.llm.ca_file;
  o.max_response_bytes = cfg.llm.max_response_bytes;
  o.max_idle_per_host = cfg.llm.max_idle_connections;
  o.threads = cfg.llm.client_threads;
  return o;
}

domain::outcome<std::shared_ptr<domain::http_transport>>
make_llm_client(const llm_client_options& opts) {
  auto client = std::make_shared<llm_client>(opts);
  if (auto err = client->init())
    return err;
  return std::shared_ptr<domain::http_transport>{std::move(client)};
}

} // namespace candor::net
