// Test helper: a scripted OpenAI-compatible endpoint on loopback (HTTP or
// HTTPS over Beast) whose handler decides every reply.

#include "tests/support/openai_stub.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json.hpp>

namespace candor::test {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace json = boost::json;
using tcp = asio::ip::tcp;

} // namespace

std::string chat_completion(const std::string& content,
                            const std::string& finish_reason,
                            int64_t prompt_tokens, int64_t completion_tokens) {
  json::object msg{{"role", "assistant"}, {"content", content}};
  json::object choice{{"index", 0},
                      {"message", std::move(msg)},
                      {"finish_reason", finish_reason}};
  json::object out{{"id", "chatcmpl-stub"},
                   {"object", "chat.completion"},
                   {"model", "stub"},
                   {"choices", json::array{std::move(choice)}}};
  if (prompt_tokens >= 0)
    out["usage"]
      = json::object{{"prompt_tokens", prompt_tokens},
                     {"completion_tokens", completion_tokens},
                     {"total_tokens", prompt_tokens + completion_tokens}};
  return json::serialize(out);
}

std::string raw_response(int status, const std::string& body,
                         const std::string& headers) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\n" + headers
         + "Content-Type: application/json\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + body;
}

bool make_self_signed_cert(const std::string& dir) {
  auto cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "
             "/CN=localhost -addext "
             "subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout '"
             + dir + "/key.pem' -out '" + dir + "/cert.pem' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

struct openai_stub::impl {
  handler h;
  std::optional<ssl::context> tls; // outlives the sessions in ioc
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  mutable std::mutex mtx;
  std::vector<stub_request> seen;
  std::atomic<int> in_progress{0};
  std::atomic<int> max_seen{0};
  std::atomic<int> conns{0};
  std::atomic<int> abandoned{0};
  uint16_t port = 0;

  stub_reply handle(http::request<http::string_body>& req) {
    stub_request r;
    r.target = std::string{req.target()};
    r.body = req.body();
    if (auto it = req.find(http::field::authorization); it != req.end())
      r.authorization = std::string{it->value()};
    boost::system::error_code ec;
    auto doc = json::parse(r.body, ec);
    if (!ec && doc.is_object()) {
      auto& o = doc.as_object();
      if (auto* m = o.if_contains("model"); m && m->is_string())
        r.model = std::string{m->as_string()};
      if (auto* ms = o.if_contains("messages"); ms && ms->is_array()) {
        auto& a = ms->as_array();
        auto text = [&](size_t i) -> std::string {
          if (i < a.size() && a[i].is_object())
            if (auto* c = a[i].as_object().if_contains("content");
                c && c->is_string())
              return std::string{c->as_string()};
          return {};
        };
        r.system = text(0);
        r.user = text(1);
      }
    }
    std::lock_guard<std::mutex> guard{mtx};
    r.index = static_cast<int>(seen.size());
    seen.push_back(r);
    return h(r);
  }
};

namespace {

template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
public:
  session(openai_stub::impl& stub, Stream stream)
      : stub_(stub), stream_(std::move(stream)),
        timer_(stream_.get_executor()) {
    // nop
  }

  void start() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      read();
    } else {
      stream_.async_handshake(
        ssl::stream_base::server,
        [self = this->shared_from_this()](beast::error_code ec) {
          if (!ec)
            self->read();
        });
    }
  }

private:
  void read() {
    req_ = {};
    http::async_read(
      stream_, buffer_, req_,
      [self = this->shared_from_this()](beast::error_code ec, size_t) {
        if (!ec)
          self->on_request();
      });
  }

  void on_request() {
    int now = ++stub_.in_progress;
    int prev = stub_.max_seen.load();
    while (now > prev && !stub_.max_seen.compare_exchange_weak(prev, now)) {
    }
    reply_ = stub_.handle(req_);
    if (reply_.delay.count() > 0) {
      timer_.expires_after(reply_.delay);
      timer_.async_wait(
        [self = this->shared_from_this()](beast::error_code ec) {
          if (ec) {
            --self->stub_.in_progress; // the client went away
          } else if (self->probing_) {
            // The probe's read ends first; it responds then.
            self->respond_after_probe_ = true;
            beast::error_code ignored;
            beast::get_lowest_layer(self->stream_).socket().cancel(ignored);
          } else {
            self->respond();
          }
        });
      probe();
      return;
    }
    respond();
  }

  /// During a delay over plain TCP: a read that sees the client close the
  /// connection (it gave up on the call), counted in abandoned().
  void probe() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      probing_ = true;
      stream_.socket().async_read_some(
        asio::buffer(&probe_byte_, 1),
        [self = this->shared_from_this()](beast::error_code ec, size_t) {
          self->probing_ = false;
          if (std::exchange(self->respond_after_probe_, false)) {
            self->respond();
          } else if (ec) {
            ++self->stub_.abandoned;
            self->timer_.cancel();
          }
        });
    }
  }

  void respond() {
    if (reply_.hang_up) {
      --stub_.in_progress;
      beast::error_code ignored;
      beast::get_lowest_layer(stream_).socket().shutdown(
        tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(stream_).close();
      return;
    }
    if (!reply_.raw.empty()) {
      cork(reply_.raw_gap.count() == 0);
      write_raw(0);
      return;
    }
    res_ = {};
    res_.version(11);
    res_.result(static_cast<unsigned>(reply_.status));
    res_.set(http::field::content_type, "application/json");
    if (!reply_.retry_after.empty())
      res_.set(http::field::retry_after, reply_.retry_after);
    res_.body()
      = !reply_.body.empty() || reply_.status != 200
          ? reply_.body
          : chat_completion(reply_.content, reply_.finish_reason,
                            reply_.prompt_tokens, reply_.completion_tokens);
    res_.keep_alive(req_.keep_alive());
    res_.prepare_payload();
    http::async_write(
      stream_, res_,
      [self = this->shared_from_this()](beast::error_code ec, size_t) {
        --self->stub_.in_progress;
        if (!ec && self->res_.keep_alive())
          self->read();
      });
  }

  /// Writes reply_.raw from piece `i` on, then reads the next request.
  void write_raw(size_t i) {
    if (i == reply_.raw.size()) {
      cork(false);
      --stub_.in_progress;
      read();
      return;
    }
    if (i > 0 && reply_.raw_gap.count() > 0) {
      timer_.expires_after(reply_.raw_gap);
      timer_.async_wait(
        [self = this->shared_from_this(), i](beast::error_code ec) {
          if (!ec)
            self->write_piece(i);
          else
            --self->stub_.in_progress;
        });
      return;
    }
    write_piece(i);
  }

  void write_piece(size_t i) {
    asio::async_write(
      stream_, asio::buffer(reply_.raw[i]),
      [self = this->shared_from_this(), i](beast::error_code ec, size_t) {
        if (!ec)
          self->write_raw(i + 1);
        else
          --self->stub_.in_progress;
      });
  }

  /// Holds back (or sends) partial segments: pieces written back to back
  /// leave in one TCP send, so a TLS client reads their records at once.
  void cork(bool on) {
    int v = on ? 1 : 0;
    ::setsockopt(beast::get_lowest_layer(stream_).socket().native_handle(),
                 IPPROTO_TCP, TCP_CORK, &v, sizeof(v));
  }

  openai_stub::impl& stub_;
  Stream stream_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
  stub_reply reply_;
  bool probing_ = false;
  bool respond_after_probe_ = false;
  char probe_byte_ = 0;
};

void accept(openai_stub::impl& stub) {
  stub.acceptor.async_accept(
    asio::make_strand(stub.ioc),
    [&stub](beast::error_code ec, tcp::socket socket) {
      if (ec)
        return; // closed
      ++stub.conns;
      if (stub.tls) {
        using tls_stream = beast::ssl_stream<beast::tcp_stream>;
        std::make_shared<session<tls_stream>>(
          stub, tls_stream{beast::tcp_stream{std::move(socket)}, *stub.tls})
          ->start();
      } else {
        std::make_shared<session<beast::tcp_stream>>(
          stub, beast::tcp_stream{std::move(socket)})
          ->start();
      }
      accept(stub);
    });
}

} // namespace

openai_stub::openai_stub(handler h, std::string tls_dir, int threads)
    : impl_(std::make_unique<impl>()) {
  impl_->h = std::move(h);
  if (!tls_dir.empty()) {
    impl_->tls.emplace(ssl::context::tls_server);
    impl_->tls->use_certificate_chain_file(tls_dir + "/cert.pem");
    impl_->tls->use_private_key_file(tls_dir + "/key.pem", ssl::context::pem);
  }
  tcp::endpoint ep{asio::ip::make_address("127.0.0.1"), 0};
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
  impl_->port = impl_->acceptor.local_endpoint().port();
  accept(*impl_);
  for (int i = 0; i < std::max(1, threads); ++i)
    impl_->threads.emplace_back([p = impl_.get()] { p->ioc.run(); });
}

openai_stub::~openai_stub() {
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    t.join();
}

uint16_t openai_stub::port() const {
  return impl_->port;
}

std::string openai_stub::base_url() const {
  return std::string{impl_->tls ? "https" : "http"}
         + "://127.0.0.1:" + std::to_string(impl_->port) + "/v1";
}

int openai_stub::requests() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return static_cast<int>(impl_->seen.size());
}

int openai_stub::max_concurrent() const {
  return impl_->max_seen.load();
}

int openai_stub::abandoned() const {
  return impl_->abandoned.load();
}

int openai_stub::connections() const {
  return impl_->conns.load();
}

std::vector<stub_request> openai_stub::seen() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->seen;
}

} // namespace candor::test
