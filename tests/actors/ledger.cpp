// The ledger's inbox of request rows: who is told when, and that every
// queued row reaches the database (on the timer, on a full batch, when the
// ledger stops).

#include "actors/ledger.hpp"
#include "data/ledger/writer.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <boost/test/unit_test.hpp>

#include "data/sqlite.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/threads.hpp"

using namespace candor;
using namespace candor::actors;

namespace {

domain::request_record row(int i) {
  domain::request_record rec;
  rec.request_id = "inbox-row-" + std::to_string(i);
  rec.method = "POST";
  rec.path = "/ask";
  rec.http_status = 200;
  rec.steps.push_back({domain::node::guard_input, "blocked", 12});
  rec.steps.push_back({domain::node::finalize, "ok", 3});
  return rec;
}

caf::actor_system_config& make_config(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  return cfg;
}

struct fixture {
  test::temp_dir dir{"candor-ledger"};
  std::string path = (dir.path / "ledger.db").string();
  caf::actor_system_config cfg;
  caf::actor_system sys{make_config(cfg)};
  ledger_inbox_ptr inbox = std::make_shared<ledger_inbox>();
  /// Every ledger spawned, stopped at the end even when a failed check
  /// left the case early (the actor system would wait for them forever).
  std::vector<ledger_actor> spawned;

  ~fixture() {
    for (auto& h : spawned)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }

  ledger_actor spawn(std::chrono::milliseconds interval, size_t max_batch,
                     int write_attempts = 51, int writer_nice = 10,
                     size_t catch_up_rows = 16384,
                     std::shared_ptr<telemetry> metrics = nullptr) {
    // The schema exists before the reader below opens the file.
    BOOST_REQUIRE(data::ledger_store::open(path, true).ok());
    ledger_settings ls;
    ls.where = data::ledger_location::sqlite(path);
    ls.flush_interval = interval;
    ls.max_batch = max_batch;
    ls.inbox = inbox;
    ls.write_attempts = write_attempts;
    ls.retry_delay = std::chrono::milliseconds{1};
    ls.writer_nice = writer_nice;
    ls.catch_up_rows = catch_up_rows;
    auto h = sys.spawn(ledger, ls, std::move(metrics));
    spawned.push_back(h);
    return h;
  }

  /// Queues rows [from, to) as app::completed does, then tells the ledger
  /// as often as the inbox said so (all at the end, so that the ledger sees
  /// every row at its first look); returns how often.
  int push(const ledger_actor& h, int from, int to, size_t max_batch) {
    int told = 0;
    for (int i = from; i < to; ++i)
      if (inbox->push(row(i), max_batch))
        ++told;
    for (int i = 0; i < told; ++i)
      caf::anon_send(h, atom::internal_v, atom::put_v);
    return told;
  }

  /// Request rows in the database, read on a connection of our own.
  int64_t rows() {
    auto store = data::ledger_store::open(path, false);
    BOOST_REQUIRE(store.ok());
    auto n = store->count_requests();
    BOOST_REQUIRE(n.ok());
    return *n;
  }

  /// Waits up to 10 s for `n` rows.
  bool wait_rows(int64_t n) {
    for (int i = 0; i < 1000; ++i) {
      if (rows() == n)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    return false;
  }

  /// Asks the ledger to flush; returns what it reports written.
  int64_t flush(const ledger_actor& h) {
    caf::scoped_actor self{sys};
    int64_t written = -1;
    self->request(h, std::chrono::seconds{10}, atom::flush_v)
      .receive([&](int64_t n) { written = n; },
               [&](caf::error& e) { BOOST_FAIL(caf::to_string(e)); });
    return written;
  }
};

/// Nice values of this process's threads with the given name.
std::vector<int> thread_nices(const std::string& name) {
  std::vector<int> out;
  for (const auto& task : test::threads_named(name)) {
    // /proc/<tid>/stat: the nice value is field 19, counted after the
    // parenthesised name (which may hold spaces).
    std::ifstream stat_file{task / "stat"};
    std::string stat;
    std::getline(stat_file, stat);
    if (stat.find(')') == std::string::npos)
      continue; // the thread ended meanwhile
    std::istringstream rest{stat.substr(stat.rfind(')') + 2)};
    std::string field;
    for (int i = 3; i <= 19 && rest >> field; ++i)
      if (i == 19)
        out.push_back(std::stoi(field));
  }
  return out;
}

/// A connection of the test's own to the ledger file. The ledger opens the
/// file at the same time (a connection that finds the WAL to recover holds
/// it briefly), so it waits for locks.
data::database side_connection(const std::string& path) {
  auto db = data::database::open(path);
  BOOST_REQUIRE(db.ok());
  BOOST_REQUIRE(!db->busy_timeout(std::chrono::seconds{5}));
  return std::move(*db);
}

/// Makes the ledger refuse request rows (a trigger) until the table
/// `hold` is emptied.
void hold_request_rows(data::database& db) {
  BOOST_REQUIRE(
    !db.exec("CREATE TABLE hold (x INTEGER); INSERT INTO hold VALUES (1); "
             "CREATE TRIGGER held BEFORE INSERT ON requests "
             "WHEN EXISTS (SELECT 1 FROM hold) BEGIN "
             "SELECT RAISE(ABORT, 'held by the test'); END"));
}

/// The request ids in the order the rows were stored.
std::vector<std::string> stored_order(const std::string& path) {
  auto db = side_connection(path);
  auto st = db.prepare("SELECT request_id FROM requests ORDER BY id");
  BOOST_REQUIRE(st.ok());
  std::vector<std::string> out;
  BOOST_REQUIRE(!data::for_each_row(
    *st, [&](data::statement& row) { out.push_back(row.column_text(0)); }));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(actors_ledger_inbox)

BOOST_AUTO_TEST_CASE(the_ledger_is_told_once_per_collection_and_batch) {
  ledger_inbox box;
  BOOST_CHECK(box.push(row(0), 4));  // first row: arm the timer
  BOOST_CHECK(!box.push(row(1), 4)); // already told
  BOOST_CHECK(!box.push(row(2), 4));
  BOOST_CHECK(box.push(row(3), 4)); // a full batch
  BOOST_CHECK(!box.push(row(4), 4));
  BOOST_CHECK_EQUAL(box.size(), 5u);
  auto taken = box.take();
  BOOST_REQUIRE_EQUAL(taken.size(), 5u);
  BOOST_CHECK_EQUAL(taken.front().request_id, "inbox-row-0");
  BOOST_CHECK_EQUAL(taken.back().request_id, "inbox-row-4");
  BOOST_CHECK_EQUAL(box.size(), 0u);
  BOOST_CHECK(box.push(row(5), 4)); // collected: tell again
}

BOOST_FIXTURE_TEST_CASE(inbox_rows_are_written_on_the_timer, fixture) {
  auto h = spawn(std::chrono::milliseconds{20}, 512);
  BOOST_CHECK_EQUAL(push(h, 0, 50, 512), 1);
  BOOST_CHECK(wait_rows(50));
  // The next rows arm the timer again.
  BOOST_CHECK_EQUAL(push(h, 50, 60, 512), 1);
  BOOST_CHECK(wait_rows(60));
  // Each row's trace travels with it.
  auto store = data::ledger_store::open(path, false);
  BOOST_REQUIRE(store.ok());
  auto run = store->run_json("inbox-row-7");
  BOOST_REQUIRE(run.ok());
  BOOST_CHECK_NE(run->find("guard_input"), std::string::npos);
  caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(a_full_inbox_is_written_without_the_timer, fixture) {
  // A timer this long never fires during the test.
  auto h = spawn(std::chrono::hours{1}, 8);
  // Told at the first row, then at 8 and 16 rows.
  BOOST_CHECK_EQUAL(push(h, 0, 16, 8), 3);
  BOOST_CHECK(wait_rows(16));
  caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(a_flush_collects_the_inbox, fixture) {
  auto h = spawn(std::chrono::hours{1}, 512);
  push(h, 0, 30, 512);
  caf::scoped_actor self{sys};
  int64_t written = -1;
  self->request(h, std::chrono::seconds{10}, atom::flush_v)
    .receive([&](int64_t n) { written = n; },
             [&](caf::error& e) { BOOST_FAIL(caf::to_string(e)); });
  BOOST_CHECK_EQUAL(written, 60); // 30 request rows and their 30 traces
  BOOST_CHECK_EQUAL(rows(), 30);
  caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(a_stopping_ledger_writes_what_its_inbox_holds,
                        fixture) {
  auto h = spawn(std::chrono::hours{1}, 512);
  // Rows the ledger was never told about (the inbox says it was).
  inbox->push(row(0), 512);
  for (int i = 1; i < 25; ++i)
    inbox->push(row(i), 512);
  caf::scoped_actor self{sys};
  self->send_exit(h, caf::exit_reason::user_shutdown);
  self->wait_for(h);
  BOOST_CHECK_EQUAL(rows(), 25);
  BOOST_CHECK_EQUAL(inbox->size(), 0u);
}

BOOST_FIXTURE_TEST_CASE(a_row_refused_for_good_costs_only_itself, fixture) {
  // A trigger refuses one request row whatever happens. Its batch fails
  // every try; the writer then stores the batch row by row: every other
  // row and every trace (the refused row's too) is kept, and the flush
  // counts only what was stored. Later batches are written as usual.
  auto h = spawn(std::chrono::hours{1}, 512, 3);
  {
    auto db = side_connection(path);
    BOOST_REQUIRE(
      !db.exec("CREATE TRIGGER refuse_row BEFORE INSERT ON requests "
               "WHEN NEW.request_id = 'inbox-row-3' BEGIN "
               "SELECT RAISE(ABORT, 'refused for good'); END"));
  }
  caf::scoped_actor self{sys};
  auto flush = [&] {
    int64_t written = -1;
    self->request(h, std::chrono::seconds{10}, atom::flush_v)
      .receive([&](int64_t n) { written = n; },
               [&](caf::error& e) { BOOST_FAIL(caf::to_string(e)); });
    return written;
  };
  push(h, 0, 10, 512);
  BOOST_CHECK_EQUAL(flush(), 19); // 9 request rows and 10 traces
  BOOST_CHECK_EQUAL(rows(), 9);
  push(h, 10, 15, 512);
  BOOST_CHECK_EQUAL(flush(), 29);
  BOOST_CHECK_EQUAL(rows(), 14);
  auto store = data::ledger_store::open(path, false);
  BOOST_REQUIRE(store.ok());
  BOOST_CHECK(store->run_json("inbox-row-2").ok());
  BOOST_CHECK(store->run_json("inbox-row-4").ok());
  caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(
  the_writer_yields_the_cpu_and_a_catch_up_thread_does_not, fixture) {
  int own = ::getpriority(PRIO_PROCESS, 0);
  auto before = thread_nices("candor.ledger").size();
  auto h = spawn(std::chrono::hours{1}, 512, 51, 7);
  push(h, 0, 3, 512);
  BOOST_CHECK_EQUAL(flush(h), 6); // the threads are up
  auto writers = thread_nices("candor.ledger");
  BOOST_REQUIRE_EQUAL(writers.size(), before + 1);
  BOOST_CHECK_EQUAL(*std::max_element(writers.begin(), writers.end()),
                    std::min(own + 7, 19));
  auto helpers = thread_nices("candor.ledger+");
  BOOST_REQUIRE_EQUAL(helpers.size(), 1u);
  BOOST_CHECK_EQUAL(helpers.front(), own);
  caf::scoped_actor self{sys};
  self->send_exit(h, caf::exit_reason::user_shutdown);
  self->wait_for(h);
  BOOST_CHECK(thread_nices("candor.ledger+").empty()); // joined
  // At nice 0 the writer keeps the server's priority and works alone.
  auto plain = spawn(std::chrono::hours{1}, 512, 51, 0);
  BOOST_CHECK_EQUAL(flush(plain), 0);
  BOOST_CHECK(thread_nices("candor.ledger+").empty());
  writers = thread_nices("candor.ledger");
  BOOST_CHECK(std::find(writers.begin(), writers.end(), own) != writers.end());
  caf::anon_send_exit(plain, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(a_catch_up_thread_commits_in_order_through_the_actor,
                        fixture) {
  // A backlog of one record gives every batch to the catch-up thread, and
  // batches of one request make hundreds of them: each is committed once,
  // in the order handed over, and a flush reports every record before it.
  auto h = spawn(std::chrono::hours{1}, 1, 51, 19, 1);
  for (int i = 0; i < 300; ++i)
    caf::anon_send(h, atom::put_v, row(i)); // a batch each
  BOOST_CHECK_EQUAL(flush(h), 600);         // 300 request rows and their traces
  auto order = stored_order(path);
  BOOST_REQUIRE_EQUAL(order.size(), 300u);
  for (int i = 0; i < 300; ++i)
    BOOST_CHECK_EQUAL(order[static_cast<size_t>(i)],
                      "inbox-row-" + std::to_string(i));
  caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

BOOST_FIXTURE_TEST_CASE(behind_the_catch_up_thread_commits_else_the_writer,
                        fixture) {
  // Ten batches of two records wait behind a held one (a trigger refuses
  // request rows while `hold` has a row; the writer retries every
  // millisecond). Once released, the catch-up thread commits while 10 or
  // more records wait and the low-priority writer below that, one batch
  // at a time and in the order submitted.
  BOOST_REQUIRE(data::ledger_store::open(path, true).ok());
  auto db = side_connection(path);
  hold_request_rows(db);
  auto store = data::ledger_store::open(path, true);
  BOOST_REQUIRE(store.ok());
  ledger_settings ls;
  ls.write_attempts = 1000000;
  ls.retry_delay = std::chrono::milliseconds{1};
  ls.writer_nice = 19;
  ls.catch_up_rows = 10;
  std::promise<int64_t> last;
  {
    ledger_writer w{std::move(*store), nullptr, ls};
    for (int i = 0; i < 500 && !w.catching_up(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    BOOST_REQUIRE(w.catching_up());
    for (int i = 0; i < 10; ++i) {
      data::ledger_batch b;
      auto r = row(i);
      b.traces.push_back({r.request_id, r.ts_us, r.steps});
      b.requests.push_back(std::move(r));
      ledger_writer::done_fn done;
      if (i == 9)
        done = [&last](int64_t written) { last.set_value(written); };
      w.submit(std::move(b), std::move(done));
    }
    BOOST_REQUIRE(!db.exec("DELETE FROM hold"));
    auto f = last.get_future();
    BOOST_REQUIRE(f.wait_for(std::chrono::seconds{10})
                  == std::future_status::ready);
    BOOST_CHECK_EQUAL(f.get(), 20);
    // A batch counts as committed once its callback has run.
    for (int i = 0; i < 500 && w.commits(true) + w.commits(false) < 10; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{2});
    BOOST_CHECK_GE(w.commits(true), 1);  // from 18 records down to 8
    BOOST_CHECK_GE(w.commits(false), 1); // the last ones
    BOOST_CHECK_EQUAL(w.commits(true) + w.commits(false), 10);
  }
  auto order = stored_order(path);
  BOOST_REQUIRE_EQUAL(order.size(), 10u);
  for (int i = 0; i < 10; ++i)
    BOOST_CHECK_EQUAL(order[static_cast<size_t>(i)],
                      "inbox-row-" + std::to_string(i));
}

BOOST_FIXTURE_TEST_CASE(metrics_show_the_backlog_until_it_is_committed,
                        fixture) {
  // A trigger refuses request rows while `hold` has a row, so the batch
  // waits in the writer (retried every millisecond) until it is removed.
  auto metrics = std::make_shared<telemetry>();
  auto h
    = spawn(std::chrono::milliseconds{5}, 512, 1000000, 10, 16384, metrics);
  auto db = side_connection(path);
  hold_request_rows(db);
  auto shows = [&](const std::string& line) {
    for (int i = 0; i < 1000; ++i) {
      if (metrics->render().find(line) != std::string::npos)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    return false;
  };
  push(h, 0, 10, 512);
  BOOST_CHECK(shows("\ncandor_ledger_backlog_records 20\n")); // 10 + traces
  BOOST_CHECK_EQUAL(rows(), 0);
  BOOST_REQUIRE(!db.exec("DELETE FROM hold"));
  BOOST_CHECK(wait_rows(10));
  BOOST_CHECK(shows("\ncandor_ledger_backlog_records 0\n"));
  BOOST_CHECK(shows("\ncandor_ledger_rows_total 20\n"));
  caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
