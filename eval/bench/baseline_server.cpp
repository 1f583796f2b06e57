// candor-baseline: the floor candor's HTTP benchmark is compared against.
//
// A minimal Beast keep-alive HTTP/1.1 server with the same number of Asio
// threads as candor (2). It reads each request (body limit 16 KiB, like
// candor) and answers POST /ask with a fixed small JSON body; anything else
// gets 404. No routing, no validation, no actors: whatever candor costs on
// top of this is candor's own overhead. Used by eval/bench/http.sh.
//
//   candor-baseline --port N [--threads T]

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::string_view answer_body
  = R"({"requestId":"baseline","status":"answered","answer":"ok"})";

class session : public std::enable_shared_from_this<session> {
public:
  explicit session(tcp::socket&& socket) : stream_(std::move(socket)) {
    // nop
  }

  void run() {
    asio::dispatch(
      stream_.get_executor(),
      beast::bind_front_handler(&session::do_read, shared_from_this()));
  }

private:
  void do_read() {
    parser_.emplace();
    parser_->body_limit(16384);
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(
      stream_, buffer_, *parser_,
      beast::bind_front_handler(&session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, size_t) {
    if (ec) {
      close();
      return;
    }
    const auto& req = parser_->get();
    res_ = {};
    res_.version(req.version());
    res_.keep_alive(req.keep_alive());
    if (req.method() == http::verb::post && req.target() == "/ask") {
      res_.result(http::status::ok);
      res_.body() = std::string{answer_body};
    } else {
      res_.result(http::status::not_found);
      res_.body() = R"({"error":"not_found"})";
    }
    res_.set(http::field::content_type, "application/json");
    res_.prepare_payload();
    http::async_write(
      stream_, res_,
      beast::bind_front_handler(&session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, size_t) {
    if (ec || !res_.keep_alive()) {
      close();
      return;
    }
    do_read();
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
};

class listener : public std::enable_shared_from_this<listener> {
public:
  listener(asio::io_context& ioc, tcp::acceptor&& acceptor)
      : ioc_(ioc), acceptor_(std::move(acceptor)) {
    // nop
  }

  void run() {
    acceptor_.async_accept(
      asio::make_strand(ioc_),
      beast::bind_front_handler(&listener::on_accept, shared_from_this()));
  }

private:
  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (!ec)
      std::make_shared<session>(std::move(socket))->run();
    if (acceptor_.is_open())
      run();
  }

  asio::io_context& ioc_;
  tcp::acceptor acceptor_;
};

int usage() {
  std::cerr << "usage: candor-baseline --port N [--threads T]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  int port = -1;
  int threads = 2;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if ((arg == "--port" || arg == "--threads") && i + 1 < argc) {
      int value = std::atoi(argv[++i]);
      (arg == "--port" ? port : threads) = value;
    } else if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    } else {
      return usage();
    }
  }
  if (port < 0 || port > 65535 || threads < 1)
    return usage();
  asio::io_context ioc{threads};
  beast::error_code ec;
  tcp::acceptor acceptor{ioc};
  tcp::endpoint ep{asio::ip::make_address("127.0.0.1"),
                   static_cast<uint16_t>(port)};
  acceptor.open(ep.protocol(), ec);
  if (!ec)
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    acceptor.bind(ep, ec);
  if (!ec)
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::cerr << "candor-baseline: cannot listen on 127.0.0.1:" << port << ": "
              << ec.message() << "\n";
    return 1;
  }
  std::cerr << "candor-baseline: listening on 127.0.0.1:"
            << acceptor.local_endpoint().port() << "\n";
  std::make_shared<listener>(ioc, std::move(acceptor))->run();
  asio::signal_set signals{ioc, SIGINT, SIGTERM};
  signals.async_wait([&](beast::error_code, int) { ioc.stop(); });
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i)
    pool.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : pool)
    t.join();
  return 0;
}
