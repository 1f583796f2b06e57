// JSON log lines on stderr: lines logged by many threads at once share
// write(2) calls but stay whole, one JSON object per line, none lost.

#include "domain/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

using namespace candor;

BOOST_AUTO_TEST_SUITE(domain_log)

BOOST_AUTO_TEST_CASE(concurrent_lines_stay_whole_and_complete) {
  test::temp_dir dir{"candor-log"};
  auto path = (dir.path / "stderr.log").string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  BOOST_REQUIRE(fd >= 0);
  std::fflush(stderr);
  int saved = ::dup(STDERR_FILENO);
  BOOST_REQUIRE(saved >= 0);
  ::dup2(fd, STDERR_FILENO);
  constexpr int threads = 8;
  constexpr int per_thread = 400;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([t] {
      for (int i = 0; i < per_thread; ++i)
        domain::log_event(i % 50 == 0 ? domain::log_level::warn
                                      : domain::log_level::info,
                          "test_line",
                          {{"thread", t},
                           {"seq", i},
                           {"text", std::string(static_cast<size_t>(i % 300),
                                                'x')}});
    });
  for (auto& th : ts)
    th.join();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
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
  BOOST_CHECK_EQUAL(lines, threads * per_thread);
}

BOOST_AUTO_TEST_SUITE_END()
