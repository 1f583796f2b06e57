// The ledger writer and the request-row inbox on their own, without the
// actor system: batches submitted from several threads while the writer
// and the catch-up thread commit them, rows pushed to the inbox from
// several threads while another takes them. Every record must arrive once,
// batches in the order submitted. (Also what a ThreadSanitizer build can
// judge in full: every synchronisation here is a mutex or a condition
// variable it sees.)

#include "data/ledger/writer.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "data/ledger/store.hpp"
#include "data/telemetry.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::actors;

namespace {

domain::request_record row(const std::string& id) {
  domain::request_record rec;
  rec.request_id = id;
  rec.method = "POST";
  rec.path = "/ask";
  rec.http_status = 200;
  rec.steps.push_back({domain::node::guard_input, "ok", 5});
  return rec;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_ledger_writer)

BOOST_AUTO_TEST_CASE(batches_from_four_threads_are_all_written_in_order) {
  test::temp_dir dir{"candor-writer"};
  auto path = (dir.path / "ledger.db").string();
  auto store = data::ledger_store::open(path, true);
  BOOST_REQUIRE(store.ok());
  auto metrics = std::make_shared<telemetry>();
  ledger_settings ls;
  ls.where = data::ledger_location::sqlite(path);
  ls.retry_delay = std::chrono::milliseconds{1};
  // A low catch-up mark, so that both threads commit batches.
  ls.writer_nice = 10;
  ls.catch_up_rows = 40;
  constexpr int threads = 4, batches = 60, per_batch = 5;
  std::atomic<int> done_calls{0};
  std::mutex order_mtx;
  std::vector<int64_t> written_seen; // the running totals, in call order
  {
    ledger_writer writer{std::move(*store), metrics, ls};
    std::vector<std::thread> submitters;
    for (int t = 0; t < threads; ++t)
      submitters.emplace_back([&, t] {
        for (int b = 0; b < batches; ++b) {
          data::ledger_batch batch;
          for (int i = 0; i < per_batch; ++i)
            batch.requests.push_back(row("w" + std::to_string(t) + "-"
                                         + std::to_string(b) + "-"
                                         + std::to_string(i)));
          writer.submit(std::move(batch), [&](int64_t written) {
            std::lock_guard<std::mutex> g{order_mtx};
            written_seen.push_back(written);
            ++done_calls;
          });
        }
      });
    for (auto& s : submitters)
      s.join();
  } // drains and joins
  BOOST_TEST(done_calls.load() == threads * batches);
  // One batch at a time, in order: the running total only grows.
  for (size_t i = 1; i < written_seen.size(); ++i)
    BOOST_TEST(written_seen[i] > written_seen[i - 1]);
  auto reader = data::ledger_store::open(path, false);
  BOOST_REQUIRE(reader.ok());
  auto n = reader->count_requests();
  BOOST_REQUIRE(n.ok());
  BOOST_TEST(*n == threads * batches * per_batch);
  BOOST_TEST(metrics->ledger_backlog_records() == 0);
}

BOOST_AUTO_TEST_CASE(inbox_rows_pushed_from_threads_are_taken_once) {
  ledger_inbox inbox;
  constexpr int threads = 4, rows = 500;
  std::atomic<bool> pushing{true};
  std::set<std::string> taken;
  int twice = 0; // rows taken a second time (checked after the join)
  std::thread taker{[&] {
    while (pushing.load() || inbox.size() > 0)
      for (auto& r : inbox.take())
        twice += taken.insert(r.request_id).second ? 0 : 1;
  }};
  std::vector<std::thread> pushers;
  for (int t = 0; t < threads; ++t)
    pushers.emplace_back([&, t] {
      for (int i = 0; i < rows; ++i)
        inbox.push(row("i" + std::to_string(t) + "-" + std::to_string(i)), 64);
    });
  for (auto& p : pushers)
    p.join();
  pushing = false;
  taker.join();
  BOOST_TEST(twice == 0);
  BOOST_TEST(taken.size() == static_cast<size_t>(threads * rows));
}

BOOST_AUTO_TEST_SUITE_END()
