// End-to-end: two real `candor serve` processes behind the real HAProxy,
// configured from conf/haproxy.cfg.in (docs/scaleout.md), all on loopback.

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "tests/support/children.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

extern char** environ;

using namespace candor::test;
namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto out_of_scope_q = "What is the weather in Lisbon tomorrow?";

/// HAProxy: CANDOR_TEST_HAPROXY when set, else from PATH, else where
/// Debian puts it (/usr/sbin is not on every user's PATH). Empty when absent.
std::string find_haproxy() {
  if (const char* p = std::getenv("CANDOR_TEST_HAPROXY"); p && *p)
    return ::access(p, X_OK) == 0 ? std::string{p} : std::string{};
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss{path};
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty())
        dirs.push_back(d);
  }
  dirs.insert(dirs.end(), {"/usr/sbin", "/usr/local/sbin", "/sbin"});
  for (auto& d : dirs) {
    auto p = d + "/haproxy";
    if (::access(p.c_str(), X_OK) == 0)
      return p;
  }
  return {};
}

/// A loopback port nobody listens on right now (the kernel's choice).
uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

std::string slurp(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// conf/haproxy.cfg.in with its placeholders replaced the way
/// conf/scaleout.sh replaces them (outside comments; @SERVERS@ is a line).
std::string render_config(uint16_t port,
                          const std::vector<uint16_t>& backends) {
  std::ifstream in{std::string{CANDOR_SOURCE_DIR} + "/conf/haproxy.cfg.in"};
  std::string out;
  auto replace_all
    = [](std::string s, std::string_view from, const std::string& to) {
        for (auto at = s.find(from); at != std::string::npos;
             at = s.find(from, at + to.size()))
          s.replace(at, from.size(), to);
        return s;
      };
  for (std::string line; std::getline(in, line);) {
    auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') {
      out += line + "\n";
    } else if (line == "@SERVERS@") {
      for (size_t i = 0; i < backends.size(); ++i)
        out += "    server candor" + std::to_string(i + 1)
               + " 127.0.0.1:" + std::to_string(backends[i]) + "\n";
    } else {
      line = replace_all(line, "@BIND@", "127.0.0.1");
      out += replace_all(line, "@PORT@", std::to_string(port)) + "\n";
    }
  }
  return out;
}

/// The real HAProxy in the foreground (-db) on a free loopback port; stopped
/// and its files removed when the object goes away, whatever happened.
class balancer {
public:
  balancer(std::string bin, const std::vector<uint16_t>& backends)
      : bin_(std::move(bin)), dir_("candor-lb") {
    port_ = free_port();
    std::ofstream{dir_.file("haproxy.cfg")} << render_config(port_, backends);
  }
  ~balancer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      if (!wait_exit(5s)) {
        ::kill(pid_, SIGKILL);
        wait_exit(5s);
      }
    }
  }
  balancer(const balancer&) = delete;
  balancer& operator=(const balancer&) = delete;

  /// Starts HAProxy; true once a request through it is answered.
  bool start() {
    std::vector<std::string> args{bin_, "-db", "-f", dir_.file("haproxy.cfg")};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    auto log = dir_.file("haproxy.log");
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc
      = posix_spawn(&pid_, bin_.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      return false;
    }
    return eventually(
             [&] {
               if (exited())
                 return true;
               http_client c{port_, 1s};
               auto r
                 = c.connected() ? c.request("GET", "/health") : std::nullopt;
               return r && r->status == 200;
             },
             10s * time_scale())
           && !exited();
  }

  uint16_t port() const noexcept {
    return port_;
  }
  std::string log() const {
    return slurp(dir_.file("haproxy.log"));
  }

private:
  bool exited() {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_)
      pid_ = -1;
    return pid_ <= 0;
  }
  bool wait_exit(std::chrono::milliseconds within) {
    return eventually([&] { return exited(); }, within);
  }

  std::string bin_;
  temp_dir dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

/// GET /health through `c`: the pid of the process that answered, or 0.
int64_t health_pid(http_client& c) {
  auto r = c.request("GET", "/health");
  if (!r || r->status != 200)
    return 0;
  auto o = parse_object(r->body);
  return o.at("ready").as_bool() ? o.at("pid").as_int64() : 0;
}

/// POST /ask on a fresh connection with a request id of ours: true when
/// answered 200 (refused, out of scope) under that same id.
bool ask_ok(uint16_t port, const std::string& id) {
  http_client c{port};
  auto r = c.ask(json::serialize(json::object{{"question", out_of_scope_q}}),
                 {{"X-Request-Id", id}});
  if (!r || r->status != 200)
    return false;
  auto o = parse_object(r->body);
  return r->header("x-request-id") == id && o.at("requestId").as_string() == id
         && o.at("route").as_string() == "out_of_scope";
}

/// The process whose ledger holds `id` (GET /runs/{id} straight to it).
bool has_run(uint16_t port, const std::string& id) {
  http_client c{port};
  auto r = c.request("GET", "/runs/" + id);
  return r && r->status == 200;
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_scaleout)

BOOST_AUTO_TEST_CASE(two_processes_behind_haproxy_and_one_killed) {
  auto bin = find_haproxy();
  BOOST_REQUIRE_MESSAGE(!bin.empty(),
                        "haproxy is not installed: this test needs the real "
                        "balancer (apt-get install haproxy; it is in "
                        "conf/packages.txt, which conf/setup.sh installs)");

  // Both processes start at once (each builds its own data directory).
  server_process a, b;
  auto b_started = std::async(std::launch::async, [&] { return b.start(); });
  bool a_ok = a.start();
  bool b_ok = b_started.get();
  BOOST_REQUIRE_MESSAGE(a_ok, "first server did not start:\n" << a.log());
  BOOST_REQUIRE_MESSAGE(b_ok, "second server did not start:\n" << b.log());

  balancer lb{bin, {a.port(), b.port()}};
  BOOST_REQUIRE_MESSAGE(lb.port() != 0, "no free loopback port");
  BOOST_REQUIRE_MESSAGE(lb.start(), "haproxy did not start:\n" << lb.log());

  // 1. Over one keep-alive connection to the balancer, requests are
  // balanced one by one: both processes answer.
  std::set<int64_t> seen;
  {
    http_client c{lb.port()};
    BOOST_REQUIRE(c.connected());
    for (int i = 0; i < 12; ++i) {
      auto pid = health_pid(c);
      BOOST_REQUIRE_MESSAGE(pid != 0, "a /health through the balancer failed:\n"
                                        << lb.log());
      seen.insert(pid);
    }
  }
  BOOST_CHECK(seen == (std::set<int64_t>{a.pid(), b.pid()}));

  // POST /ask through the balancer: every request answered under the
  // X-Request-Id it was sent with, and each stored by exactly one process
  // (its own ledger), some by each.
  int on_a = 0, on_b = 0;
  for (int i = 0; i < 8; ++i) {
    auto id
      = "scaleout-test-" + std::to_string(i) + "-" + std::to_string(::getpid());
    BOOST_CHECK(ask_ok(lb.port(), id));
    bool in_a = has_run(a.port(), id), in_b = has_run(b.port(), id);
    BOOST_CHECK_MESSAGE(in_a != in_b,
                        id << " stored by " << in_a + in_b << " processes");
    on_a += in_a;
    on_b += in_b;
  }
  BOOST_CHECK_GT(on_a, 0);
  BOOST_CHECK_GT(on_b, 0);

  // An MCP session lives in the process that opened it: the balancer
  // sends its later requests there (a stick table on Mcp-Session-Id).
  {
    http_client c{lb.port()};
    const header_list mcp{{"Accept", "application/json, text/event-stream"},
                          {"Content-Type", "application/json"}};
    auto init = c.request(
      "POST", "/mcp",
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
      R"("protocolVersion":"2025-06-18","capabilities":{},)"
      R"("clientInfo":{"name":"scaleout-test","version":"1"}}})",
      mcp);
    BOOST_REQUIRE(init);
    BOOST_REQUIRE_MESSAGE(init->status == 200, init->body);
    auto session = init->header("mcp-session-id");
    BOOST_REQUIRE(!session.empty());
    auto with = mcp;
    with.emplace_back("Mcp-Session-Id", session);
    with.emplace_back("MCP-Protocol-Version", "2025-06-18");
    for (int i = 0; i < 8; ++i) {
      auto r = c.request("POST", "/mcp",
                         R"({"jsonrpc":"2.0","id":2,"method":"ping"})", with);
      BOOST_REQUIRE(r);
      BOOST_CHECK_MESSAGE(r->status == 200, "ping " << i << ": " << r->status
                                                    << " " << r->body);
    }
  }

  // 2. The second process dies without a word.
  auto killed = b.pid();
  BOOST_REQUIRE_EQUAL(b.stop(SIGKILL), 128 + SIGKILL);
  // Before the check notices, a refused connection is retried on the
  // other process (retry-on conn-failure, redispatch): still answered.
  for (int i = 0; i < 4; ++i) {
    http_client c{lb.port()};
    BOOST_CHECK_EQUAL(health_pid(c), a.pid());
  }
  // The active check marks it down (inter 1s, fall 2).
  BOOST_REQUIRE_MESSAGE(
    eventually(
      [&] { return lb.log().find("candor2 is DOWN") != std::string::npos; },
      15s * time_scale()),
    "haproxy did not mark the killed process down:\n"
      << lb.log());
  // From then on every request is answered by the survivor.
  for (int i = 0; i < 10; ++i) {
    http_client c{lb.port()};
    auto pid = health_pid(c);
    BOOST_CHECK_EQUAL(pid, a.pid());
    BOOST_CHECK_NE(pid, killed);
  }
  for (int i = 0; i < 6; ++i) {
    auto id = "scaleout-after-" + std::to_string(i) + "-"
              + std::to_string(::getpid());
    BOOST_CHECK(ask_ok(lb.port(), id));
    BOOST_CHECK(has_run(a.port(), id));
  }
  // The balancer, the survivor and every temporary directory go with the
  // objects above, on success and on a failed REQUIRE alike.
}

BOOST_AUTO_TEST_SUITE_END()
