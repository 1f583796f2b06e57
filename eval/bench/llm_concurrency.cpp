// Concurrency of model calls: N concurrent POST /ask
// against `candor serve` whose provider is a loopback OpenAI-compatible stub
// that answers every call after a fixed delay. Serialised model calls would
// take N x delay; the target is well under 2 s for 100 x 200 ms.
//
//   build/candor-bench-llm [requests=100] [delay_ms=200] [target_ms=2000]
//
// Prints the wall time of the burst, per-request P50/P99/max, the most
// model calls the stub saw at once, and PASS/MISS against the target.
// Exit status 0 on PASS, 1 on MISS or failed requests, 2 on setup errors.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_client.hpp"
#include "tests/support/openai_stub.hpp"
#include "tests/support/process.hpp"

using namespace candor::test;
using clock_type = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 100;
  int delay_ms = argc > 2 ? std::atoi(argv[2]) : 200;
  int target_ms = argc > 3 ? std::atoi(argv[3]) : 2000;
  if (n < 1 || n > 2000 || delay_ms < 0 || target_ms < 1) {
    std::fprintf(stderr, "usage: candor-bench-llm [requests (1..2000)] "
                         "[delay_ms] [target_ms]\n");
    return 2;
  }
  const std::string route
    = R"({"route":"out_of_scope","reason":"The question is about weather."})";
  openai_stub stub{[&](const stub_request&) {
    stub_reply r;
    r.content = route;
    r.delay = std::chrono::milliseconds{delay_ms};
    return r;
  }};
  server_process server{{{"CANDOR_LLM_BASE_URL", stub.base_url()},
                         {"CANDOR_LLM_MODEL", "bench-model"}}};
  if (!server.start()) {
    std::fprintf(stderr, "candor did not start:\n%s\n", server.log().c_str());
    return 2;
  }
  const std::string body
    = R"({"question":"What is the weather in Lisbon tomorrow?"})";
  { // one warm-up request (first connection, first actor spawns)
    http_client c{server.port(), std::chrono::milliseconds{10000}};
    auto r = c.ask(body);
    if (!r || r->status != 200) {
      std::fprintf(stderr, "warm-up request failed\n");
      return 2;
    }
  }
  int before = stub.requests();
  std::mutex mtx;
  std::condition_variable cv;
  bool go = false;
  std::atomic<int> ready{0};
  std::atomic<int> ok{0};
  std::vector<double> latencies(static_cast<size_t>(n), -1);
  std::vector<std::thread> clients;
  clock_type::time_point t0;
  for (int i = 0; i < n; ++i)
    clients.emplace_back([&, i] {
      http_client c{server.port(), std::chrono::milliseconds{30000}};
      {
        std::unique_lock<std::mutex> lock{mtx};
        ++ready;
        cv.notify_all();
        cv.wait(lock, [&] { return go; });
      }
      auto start = clock_type::now();
      auto r = c.ask(body);
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  clock_type::now() - start)
                  .count();
      if (r && r->status == 200) {
        ++ok;
        latencies[static_cast<size_t>(i)] = static_cast<double>(us) / 1000.0;
      }
    });
  {
    std::unique_lock<std::mutex> lock{mtx};
    cv.wait(lock, [&] { return ready.load() == n; });
    go = true;
    t0 = clock_type::now();
  }
  cv.notify_all();
  for (auto& t : clients)
    t.join();
  auto wall_ms = std::chrono::duration_cast<std::chrono::microseconds>(
                   clock_type::now() - t0)
                   .count()
                 / 1000.0;
  std::vector<double> ms;
  for (auto l : latencies)
    if (l >= 0)
      ms.push_back(l);
  std::sort(ms.begin(), ms.end());
  auto rank = [&](double q) {
    if (ms.empty())
      return 0.0;
    auto k = static_cast<size_t>(std::max(1.0, q * ms.size() + 0.999999));
    return ms[std::min(ms.size(), k) - 1];
  };
  bool pass = ok.load() == n && wall_ms < target_ms;
  std::printf("requests %d, stub delay %d ms: ok %d, wall %.1f ms "
              "(serialised would be %d ms)\n",
              n, delay_ms, ok.load(), wall_ms, n * delay_ms);
  std::printf("per request: P50 %.1f ms, P99 %.1f ms, max %.1f ms\n",
              rank(0.50), rank(0.99), ms.empty() ? 0.0 : ms.back());
  std::printf("model calls: %d, at most %d at once\n", stub.requests() - before,
              stub.max_concurrent());
  std::printf("%s: wall %.1f ms < target %d ms\n", pass ? "PASS" : "MISS",
              wall_ms, target_ms);
  server.stop(15);
  return pass ? 0 : 1;
}
