// Ledger write cost: microseconds of the ledger writer per
// request, for records shaped like an out-of-scope request (one request
// row, one model-call row, a trace of four steps and, as every /ask has
// one, the first turn of its conversation), written in batches the way the
// ledger actor writes them. Single-threaded and CPU-bound, so the figure
// is steadier than a wrk run on a shared machine.
//
//   build/candor-bench-ledger [REQUESTS] [BATCH] [TURNS]
//   (defaults 50000, 100, 1; TURNS 0 writes no conversation turns)

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "data/clock.hpp"
#include "data/ledger/store.hpp"
#include "domain/records.hpp"

using namespace candor;

int run(const std::filesystem::path& dir, long requests, long batch_size,
        bool turns);

int main(int argc, char** argv) {
  long requests = argc > 1 ? std::atol(argv[1]) : 50000;
  long batch_size = argc > 2 ? std::atol(argv[2]) : 100;
  long turns = argc > 3 ? std::atol(argv[3]) : 1;
  if (requests <= 0 || batch_size <= 0 || (turns != 0 && turns != 1)) {
    std::fprintf(stderr,
                 "usage: candor-bench-ledger [REQUESTS] [BATCH] [TURNS 0|1]\n");
    return 2;
  }
  auto dir = std::filesystem::temp_directory_path()
             / ("candor-bench-ledger-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int rc = run(dir, requests, batch_size, turns == 1);
  std::filesystem::remove_all(dir);
  return rc;
}

int run(const std::filesystem::path& dir, long requests, long batch_size,
        bool turns) {
  auto store = data::ledger_store::open((dir / "ledger.db").string(), true);
  if (!store) {
    std::fprintf(stderr, "cannot open the ledger: %s\n",
                 store.err().message.c_str());
    return 1;
  }
  int64_t ts = 1796280000000000;
  const char* outcomes[] = {"ok", "route:out_of_scope", "refused", "refused"};
  const domain::node nodes[]
    = {domain::node::guard_input, domain::node::router,
       domain::node::out_of_scope, domain::node::finalize};
  auto t0 = std::chrono::steady_clock::now();
  long written = 0;
  while (written < requests) {
    data::ledger_batch b;
    for (long i = 0; i < batch_size && written < requests; ++i, ++written) {
      ts += 97;
      domain::request_record r;
      r.request_id = data::new_request_id();
      r.ts_us = ts;
      r.method = "POST";
      r.path = "/ask";
      r.route = "out_of_scope";
      r.status = "refused";
      r.http_status = 200;
      r.latency_us = 900;
      r.question = "What is the weather in Lisbon tomorrow?";
      r.llm_calls = 1;
      r.tokens = 281;
      r.cost_usd = 5.385e-05;
      for (int s = 0; s < 4; ++s)
        r.steps.push_back({nodes[s], outcomes[s], 40 + s});
      if (turns) {
        r.conversation_id = data::new_conversation_id();
        r.said = {r.request_id, r.question, "", r.route, r.status,
                  "That is outside what I can answer: I know the company's "
                  "documents and its sales data.",
                  "", r.ts_us};
      }
      domain::llm_call_record c;
      c.request_id = r.request_id;
      c.ts_us = ts;
      c.prompt = "router";
      c.prompt_version = "v1";
      c.provider = "fake";
      c.model = "scripted-primary";
      c.attempts = 1;
      c.outcome = "ok";
      c.tokens_in = 255;
      c.tokens_out = 26;
      c.cost_usd = 5.385e-05;
      c.latency_us = 120;
      b.traces.push_back({r.request_id, r.ts_us, r.steps});
      b.requests.push_back(std::move(r));
      b.llm_calls.push_back(std::move(c));
    }
    if (auto err = store->write(b)) {
      std::fprintf(stderr, "write failed: %s\n", err.message.c_str());
      return 1;
    }
  }
  double us = std::chrono::duration<double, std::micro>(
                std::chrono::steady_clock::now() - t0)
                .count();
  std::printf("ledger writes: %ld requests in batches of %ld (1 request row,"
              " 1 model-call row, 4 trace rows%s each): %.1f us per request,"
              " %.2f us per row\n",
              requests, batch_size, turns ? ", 1 conversation turn" : "",
              us / requests, us / (requests * (turns ? 7.0 : 6.0)));
  return 0;
}
