// Test helper: a small blocking HTTP/1.1 client over POSIX sockets.

#include "tests/support/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace candor::test {

namespace {

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty()
         && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

} // namespace

std::string http_response::header(std::string_view name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string{} : it->second;
}

bool http_response::has_header(std::string_view name) const {
  return headers.count(lower(name)) > 0;
}

http_client::http_client(uint16_t port, std::chrono::milliseconds timeout)
    : http_client(port, nullptr, timeout) {
  // nop
}

http_client::http_client(uint16_t port, const char* from,
                         std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0)
    return;
  if (from != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (::inet_pton(AF_INET, from, &local.sin_addr) != 1
        || ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local)
             != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

http_client::~http_client() {
  close();
}

void http_client::close() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  buf_.clear();
}

bool http_client::send_raw(std::string_view bytes) {
  if (fd_ < 0)
    return false;
  while (!bytes.empty()) {
    auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool http_client::fill() {
  if (fd_ < 0)
    return false;
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(timeout_.count()));
  if (r <= 0)
    return false;
  char tmp[8192];
  auto n = ::recv(fd_, tmp, sizeof tmp, 0);
  if (n <= 0)
    return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

std::optional<http_response> http_client::read_response() {
  return read(true);
}

std::optional<http_response> http_client::read_response_head() {
  return read(false);
}

std::optional<http_response> http_client::read(bool with_body) {
  size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos)
    if (!fill())
      return std::nullopt;
  http_response res;
  std::string_view head{buf_.data(), end};
  auto line_end = head.find("\r\n");
  auto status_line = head.substr(0, line_end);
  // "HTTP/1.1 200 OK"
  auto sp = status_line.find(' ');
  if (sp == std::string_view::npos)
    return std::nullopt;
  res.status = std::atoi(std::string{status_line.substr(sp + 1, 3)}.c_str());
  auto rest = line_end == std::string_view::npos ? std::string_view{}
                                                 : head.substr(line_end + 2);
  while (!rest.empty()) {
    auto nl = rest.find("\r\n");
    auto line = rest.substr(0, nl);
    rest
      = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 2);
    auto colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    res.headers[lower(trim(line.substr(0, colon)))]
      = std::string{trim(line.substr(colon + 1))};
  }
  size_t length = 0;
  if (!with_body) {
    buf_.erase(0, end + 4);
    return res;
  }
  if (auto cl = res.header("content-length"); !cl.empty())
    length = std::stoul(cl);
  size_t body_start = end + 4;
  while (buf_.size() < body_start + length)
    if (!fill())
      return std::nullopt;
  res.body = buf_.substr(body_start, length);
  buf_.erase(0, body_start + length);
  return res;
}

std::optional<http_response> http_client::request(std::string_view method,
                                                  std::string_view target,
                                                  std::string_view body,
                                                  const header_list& headers) {
  std::string req;
  req.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  req.append("Host: 127.0.0.1\r\n");
  bool has_length = false;
  for (const auto& [k, v] : headers) {
    if (lower(k) == "content-length")
      has_length = true;
    req.append(k).append(": ").append(v).append("\r\n");
  }
  if (!has_length && (!body.empty() || method == "POST"))
    req.append("Content-Length: ")
      .append(std::to_string(body.size()))
      .append("\r\n");
  req.append("\r\n").append(body);
  if (!send_raw(req))
    return std::nullopt;
  return read_response();
}

std::optional<http_response> http_client::ask(std::string_view json_body,
                                              const header_list& headers) {
  header_list all = headers;
  all.emplace_back("Content-Type", "application/json");
  return request("POST", "/ask", json_body, all);
}

bool http_client::read_until(std::string_view needle) {
  while (buf_.find(needle) == std::string::npos)
    if (!fill())
      return false;
  return true;
}

std::string http_client::read_until_closed() {
  while (fill()) {
    // nop
  }
  return buf_;
}

bool http_client::wait_closed(std::chrono::milliseconds within) {
  if (fd_ < 0)
    return true;
  auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    char tmp[4096];
    auto n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0)
      return true;
  }
}

} // namespace candor::test
