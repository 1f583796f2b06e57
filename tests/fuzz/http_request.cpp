// Fuzz target: an HTTP connection's bytes — request line, fields, framing,
// body, routing, the /ask body — sent to a real net::server (with a scripted
// service behind it) over loopback, the write side then closed. The server
// must answer or close, never crash; it runs in this process, so a fault in
// its threads is the fuzzer's finding.

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/server.hpp"
#include "tests/support/fake_service.hpp"

namespace {

struct harness {
  candor::test::fake_service svc;
  std::unique_ptr<candor::net::server> srv;
  std::thread thread;
  uint16_t port = 0;

  harness() {
    auto cfg = candor::test::test_config();
    cfg.http.max_in_flight = 64;
    srv = std::make_unique<candor::net::server>(svc, cfg);
    auto p = srv->listen();
    if (!p)
      std::abort();
    port = *p;
    thread = std::thread([this] { srv->run(); });
  }
};

[[noreturn]] void fail(const char* why) {
  std::fprintf(stderr, "fuzz-http_request: %s (errno %d)\n", why, errno);
  std::abort();
}

harness& served() {
  static auto* h = new harness; // lives as long as the process
  return *h;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& h = served();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    fail("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(h.port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Ports run short after some 10^5 connections a minute (TIME_WAIT):
  // that is the machine, not the server, so wait for one a little.
  int tries = 0;
  while (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if ((errno != EADDRNOTAVAIL && errno != EAGAIN && errno != EINTR)
        || ++tries > 500)
      fail("connect() failed: the server stopped listening");
    ::usleep(10000);
  }
  size_t sent = 0;
  while (sent < size) {
    auto n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; // the server closed early: allowed
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  // Read until the server closes (header and body deadlines are 300 ms).
  char buf[16384];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 5000);
    if (ready < 0 && errno == EINTR)
      continue; // libFuzzer's SIGALRM
    if (ready <= 0)
      fail("no answer and no close within 5 s: the server hangs");
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
  }
  // Reset rather than close: no TIME_WAIT is left behind per input.
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
  return 0;
}
