// JSON log lines on stderr: lines logged by many threads at once share
// write(2) calls but stay whole, one JSON object per line, none lost.

#include "data/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>

#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

using namespace candor;

BOOST_AUTO_TEST_SUITE(domain_log)

namespace {

/// Points stderr at a file for the lifetime of the object.
struct stderr_to_file {
  explicit stderr_to_file(const std::string& path) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    BOOST_REQUIRE(fd >= 0);
    std::fflush(stderr);
    saved = ::dup(STDERR_FILENO);
    BOOST_REQUIRE(saved >= 0);
    ::dup2(fd, STDERR_FILENO);
  }
  ~stderr_to_file() {
    data::flush_log();
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    ::close(fd);
  }
  int fd = -1;
  int saved = -1;
};

/// 8 threads log 400 lines each, a warning every 50th; `buffered` picks
/// the delivery of the info lines.
void log_from_threads(bool buffered) {
  constexpr int threads = 8;
  constexpr int per_thread = 400;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([t, buffered] {
      for (int i = 0; i < per_thread; ++i)
        data::log_event(
          i % 50 == 0 ? data::log_level::warn : data::log_level::info,
          "test_line",
          {{"thread", t},
           {"seq", i},
           {"text", std::string(static_cast<size_t>(i % 300), 'x')}},
          buffered ? data::log_delivery::buffered
                   : data::log_delivery::immediate);
    });
  for (auto& th : ts)
    th.join();
}

/// Every line whole, each thread's lines in order, none lost.
void check_lines(const std::string& path, int expected) {
  std::ifstream in{path};
  std::string line;
  std::map<int64_t, int64_t> next; // per thread: the next expected seq
  int lines = 0;
  while (std::getline(in, line)) {
    auto v = boost::json::parse(line).as_object(); // throws when cut
    BOOST_REQUIRE_EQUAL(v.at("event").as_string(), "test_line");
    auto t = v.at("thread").as_int64();
    auto seq = v.at("seq").as_int64();
    // One thread's lines keep their order.
    BOOST_REQUIRE_EQUAL(seq, next[t]);
    next[t] = seq + 1;
    ++lines;
  }
  BOOST_CHECK_EQUAL(lines, expected);
}

} // namespace

BOOST_AUTO_TEST_CASE(concurrent_lines_stay_whole_and_complete) {
  test::temp_dir dir{"candor-log"};
  auto path = (dir.path / "stderr.log").string();
  {
    stderr_to_file redirect{path};
    log_from_threads(false);
  }
  check_lines(path, 8 * 400);
}

// Buffered lines (the per-request line) interleaved with immediate
// warnings keep their order and all reach stderr by flush_log().
BOOST_AUTO_TEST_CASE(buffered_lines_keep_order_and_are_all_flushed) {
  test::temp_dir dir{"candor-log"};
  auto path = (dir.path / "stderr.log").string();
  {
    stderr_to_file redirect{path};
    log_from_threads(true);
  }
  check_lines(path, 8 * 400);
}

// The flusher writes a buffered line without anyone calling flush_log.
BOOST_AUTO_TEST_CASE(the_flusher_writes_buffered_lines_on_its_own) {
  test::temp_dir dir{"candor-log"};
  auto path = (dir.path / "stderr.log").string();
  stderr_to_file redirect{path};
  data::log_event(data::log_level::info, "test_line",
                  {{"thread", 0}, {"seq", 0}}, data::log_delivery::buffered);
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) { // up to 5 s on a loaded machine
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
    std::ifstream in{path};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    seen = text.find("\"test_line\"") != std::string::npos;
  }
  BOOST_CHECK(seen);
}

namespace {
std::vector<std::string> sunk;
void sink_line(std::string_view line) {
  sunk.emplace_back(line);
}
} // namespace

BOOST_AUTO_TEST_CASE(log_line_writes_what_log_event_writes) {
  // The same fields through both entry points: equal lines apart from the
  // timestamp, secrets masked in plain and list fields, empty text as null.
  sunk.clear();
  data::set_log_sink(&sink_line);
  const std::string secret = "key sk-proj-abcdefghijklmnopqrstuvwx please";
  data::log_line(data::log_level::info, "request", [&](data::log_fields& f) {
    f.text("question", secret);
    f.text_or_null("route", "");
    f.integer("httpStatus", 200);
    f.real("latencyMs", 1.5);
    f.texts("warnings", {"plain", secret});
  });
  boost::json::array warnings{"plain", secret};
  data::log_event(data::log_level::info, "request",
                  {{"question", secret},
                   {"route", nullptr},
                   {"httpStatus", 200},
                   {"latencyMs", 1.5},
                   {"warnings", warnings}});
  // Below the level: nothing.
  data::log_line(data::log_level::debug, "hidden",
                 [](data::log_fields& f) { f.integer("x", 1); });
  data::set_log_sink(nullptr);
  BOOST_REQUIRE_EQUAL(sunk.size(), 2u);
  auto a = boost::json::parse(sunk[0]).as_object();
  auto b = boost::json::parse(sunk[1]).as_object();
  // ISO 8601 UTC with milliseconds: 2026-12-03T12:33:51.498Z.
  for (const auto* line : {&a, &b}) {
    std::string ts{line->at("ts").as_string()};
    BOOST_TEST_REQUIRE(ts.size() == 24u, ts);
    for (size_t i = 0; i < ts.size(); ++i) {
      auto expect = std::string_view{"dddd-dd-ddTdd:dd:dd.dddZ"}[i];
      BOOST_TEST((expect == 'd'
                    ? std::isdigit(static_cast<unsigned char>(ts[i])) != 0
                    : ts[i] == expect),
                 ts << " at " << i);
    }
  }
  a.erase("ts");
  b.erase("ts");
  BOOST_TEST(a == b);
  BOOST_TEST(sunk[0].find("abcdefghijklmnop") == std::string::npos);
  BOOST_TEST(a.at("question").as_string() == "key sk-proj-*** please");
  BOOST_TEST(a.at("warnings").as_array()[1].as_string()
             == "key sk-proj-*** please");
  BOOST_TEST(a.at("route").is_null());
  BOOST_TEST(sunk[0].back() == '\n');
}

BOOST_AUTO_TEST_SUITE_END()
