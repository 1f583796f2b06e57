#pragma once

// Test helper: declares a small blocking HTTP/1.1 client over POSIX
// sockets, loopback only.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// A small blocking HTTP/1.1 client over POSIX sockets for tests: keep-alive,
/// raw bytes for malformed requests, a timeout on every read. Loopback only.
/// No Beast here, so tests that use it compile fast.
namespace candor::test {

struct http_response {
  int status = 0;
  /// Header names in lower case.
  std::map<std::string, std::string> headers;
  std::string body;

  /// The value of a header (any case), empty when absent.
  std::string header(std::string_view name) const;
  bool has_header(std::string_view name) const;
};

using header_list = std::vector<std::pair<std::string, std::string>>;

class http_client {
public:
  /// Connects to 127.0.0.1:port; check connected().
  explicit http_client(uint16_t port, std::chrono::milliseconds timeout
                                      = std::chrono::milliseconds{5000});

  /// Connects to 127.0.0.1:port from the loopback address `from` (e.g.
  /// "127.0.0.2": every 127.x address is this machine's), so that a test
  /// can be several clients.
  http_client(uint16_t port, const char* from,
              std::chrono::milliseconds timeout
              = std::chrono::milliseconds{5000});
  ~http_client();

  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  bool connected() const noexcept {
    return fd_ >= 0;
  }

  /// Sends one request (Host and Content-Length added) and reads the
  /// response; nullopt on a socket error, a timeout or a closed connection.
  std::optional<http_response> request(std::string_view method,
                                       std::string_view target,
                                       std::string_view body = {},
                                       const header_list& headers = {});

  /// POST /ask with a JSON body and Content-Type application/json.
  std::optional<http_response> ask(std::string_view json_body,
                                   const header_list& headers = {});

  /// Writes raw bytes; false on error (e.g. the peer closed).
  bool send_raw(std::string_view bytes);

  /// Reads one response (Content-Length framed).
  std::optional<http_response> read_response();

  /// Reads the status line and the fields only: the response to HEAD, or
  /// an interim "100 Continue".
  std::optional<http_response> read_response_head();

  /// Reads until `needle` has arrived (true) or the peer closed or the
  /// timeout passed (false); what was read stays in `received()`.
  bool read_until(std::string_view needle);

  /// Reads until the peer closes (or the timeout passes) and returns
  /// everything received: a response framed by the end of the connection
  /// (an event stream).
  std::string read_until_closed();

  /// Bytes received and not yet taken by read_response().
  const std::string& received() const noexcept {
    return buf_;
  }

  /// Waits until the peer closes the connection (EOF or reset); false when
  /// it is still open after `within`. Unread data is discarded.
  bool wait_closed(std::chrono::milliseconds within);

  void close();

  void set_timeout(std::chrono::milliseconds timeout) {
    timeout_ = timeout;
  }

private:
  /// Reads more bytes into buf_; false on timeout, error or EOF.
  bool fill();
  std::optional<http_response> read(bool with_body);

  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::string buf_;
};

} // namespace candor::test
