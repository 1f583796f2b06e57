// End-to-end: two real `candor serve` processes sharing one ledger on a
// throw-away PostgreSQL cluster. Each one's /stats and /runs show both
// processes' requests; one of them stopped with SIGTERM under load loses
// no row of a request that got a response, and neither does the other.

#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/pg/connection.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/pg_cluster.hpp"
#include "tests/support/process.hpp"
#include "tests/support/questions.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

json::value get_json(uint16_t port, const std::string& target) {
  http_client c{port};
  auto r = c.request("GET", target);
  BOOST_REQUIRE_MESSAGE(r, "no response to " << target);
  BOOST_REQUIRE_MESSAGE(r->status == 200,
                        target << ": " << r->status << " " << r->body);
  return json::parse(r->body);
}

/// /stats' request count on `port` once it reaches `want` (the other
/// process commits its rows within its flush interval), or the last seen
/// after about 5 s.
int64_t stats_requests(uint16_t port, int64_t want) {
  int64_t seen = -1;
  for (int i = 0; i < 100 && seen < want; ++i) {
    if (i > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds{50});
    seen = get_json(port, "/stats?since=15m")
             .at("totals")
             .at("requests")
             .as_int64();
  }
  return seen;
}

struct pg_ledger_env {
  pg_cluster cluster;
  std::string dsn;

  pg_ledger_env() {
    auto c = data::pg::connection::open(cluster.dsn());
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
    BOOST_REQUIRE(!c->exec("CREATE DATABASE ledger"));
    dsn = cluster.dsn("ledger");
  }

  std::map<std::string, std::string> env() const {
    return {{"CANDOR_LEDGER_BACKEND", "postgres"},
            {"CANDOR_LEDGER_POSTGRES_DSN", dsn}};
  }

  /// Request rows per request id, read straight from the database.
  std::map<std::string, int64_t> rows_per_id() const {
    auto c = data::pg::connection::open(dsn);
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
    auto r = c->query("SELECT request_id, count(*) FROM "
                      "candor_ledger.requests GROUP BY request_id");
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    std::map<std::string, int64_t> out;
    for (auto& row : r->values)
      out[*row.at(0)] = std::stoll(*row.at(1));
    return out;
  }

  int64_t writers() const {
    auto c = data::pg::connection::open(dsn);
    BOOST_REQUIRE(c.ok());
    auto r = c->query("SELECT count(DISTINCT writer) FROM "
                      "candor_ledger.requests");
    BOOST_REQUIRE(r.ok());
    return std::stoll(*r->values.at(0).at(0));
  }
};

/// Clients sending questions with ids of their own to one server until
/// told to stop or the server is gone; every id that got a response (any
/// status) is recorded.
class load {
public:
  load(uint16_t port, std::string prefix, int clients)
      : port_(port), prefix_(std::move(prefix)) {
    for (int i = 0; i < clients; ++i)
      threads_.emplace_back([this, i] { run(i); });
  }

  ~load() {
    stop();
  }

  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable())
        t.join();
  }

  std::set<std::string> answered() {
    std::lock_guard<std::mutex> g{mtx_};
    return answered_;
  }

private:
  void run(int client) {
    int n = 0;
    while (!stop_) {
      http_client c{port_, std::chrono::milliseconds{10000}};
      if (!c.connected())
        return; // the listener is gone
      while (!stop_) {
        auto id
          = prefix_ + "-" + std::to_string(client) + "-" + std::to_string(n++);
        auto r = c.ask(ask_body(n % 2 ? out_of_scope_q : injection_q),
                       {{"X-Request-Id", id}});
        if (!r)
          break; // closed by a draining server
        std::lock_guard<std::mutex> g{mtx_};
        answered_.insert(id);
      }
    }
  }

  uint16_t port_;
  std::string prefix_;
  std::atomic<bool> stop_{false};
  std::mutex mtx_;
  std::set<std::string> answered_;
  std::vector<std::thread> threads_;
};

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_ledger_postgres)

BOOST_FIXTURE_TEST_CASE(two_servers_share_the_ledger_and_sigterm_loses_no_row,
                        pg_ledger_env) {
  server_process a{env()};
  server_process b{env()};
  // Started together: both create the schema at once.
  bool b_started = false;
  std::thread start_b([&] { b_started = b.start(); });
  BOOST_REQUIRE_MESSAGE(a.start(), "a did not start:\n" << a.log());
  start_b.join();
  BOOST_REQUIRE_MESSAGE(b_started, "b did not start:\n" << b.log());
  BOOST_TEST(a.log().find("\"backend\":\"postgres\"") != std::string::npos,
             a.log());

  // Requests to each; either one's /stats and /runs show both.
  {
    http_client ca{a.port()};
    http_client cb{b.port()};
    BOOST_REQUIRE(
      ca.ask(ask_body(out_of_scope_q), {{"X-Request-Id", "from-a-0001"}}));
    BOOST_REQUIRE(
      ca.ask(ask_body(injection_q), {{"X-Request-Id", "from-a-0002"}}));
    BOOST_REQUIRE(
      cb.ask(ask_body(out_of_scope_q), {{"X-Request-Id", "from-b-0001"}}));
  }
  BOOST_TEST(stats_requests(a.port(), 3) == 3);
  BOOST_TEST(stats_requests(b.port(), 3) == 3);
  auto run = get_json(a.port(), "/runs/from-b-0001");
  BOOST_TEST(run.at("request").at("route").as_string() == "out_of_scope");
  BOOST_TEST(run.at("llmCalls").as_array().size() == 1u);
  BOOST_TEST(!run.at("trace").as_array().empty());
  run = get_json(b.port(), "/runs/from-a-0002");
  BOOST_TEST(run.at("request").at("status").as_string() == "blocked");
  BOOST_TEST(writers() == 2);

  // A conversation begun on a goes on on b (its turns are in the shared
  // ledger once a has committed them, within its flush interval).
  {
    http_client ca{a.port()};
    auto first = ca.ask(ask_body(out_of_scope_q));
    BOOST_REQUIRE(first);
    auto id = std::string{
      json::parse(first->body).at("conversationId").as_string()};
    http_client cb{b.port()};
    std::optional<http_response> seen;
    for (int i = 0; i < 100; ++i) {
      seen = cb.request("GET", "/conversations/" + id);
      if (seen && seen->status == 200)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds{50});
    }
    BOOST_REQUIRE(seen);
    BOOST_REQUIRE_MESSAGE(seen->status == 200, seen->body);
    auto next = cb.ask(json::serialize(json::object{
      {"question", injection_q}, {"conversationId", id}}));
    BOOST_REQUIRE(next);
    BOOST_TEST(next->status == 200, next->body); // found: not a 404
    BOOST_TEST(json::parse(next->body).at("conversationId").as_string() == id);
    // b flushes its own ledger before it reads.
    auto turns = get_json(b.port(), "/conversations/" + id).at("turns");
    BOOST_TEST(turns.as_array().size() == 2u);
  }

  // Load on both; a stops with SIGTERM in the middle of it, b goes on.
  load on_a{a.port(), "load-a", 3};
  load on_b{b.port(), "load-b", 3};
  std::this_thread::sleep_for(std::chrono::milliseconds{700});
  BOOST_TEST(a.stop(SIGTERM) == 0);
  on_a.stop();
  std::this_thread::sleep_for(std::chrono::milliseconds{500});
  on_b.stop();
  auto sent_a = on_a.answered();
  auto sent_b = on_b.answered();
  BOOST_TEST_MESSAGE("responses: " << sent_a.size() << " from a (stopped), "
                                    << sent_b.size() << " from b");
  BOOST_TEST(sent_a.size() > 10u);
  BOOST_TEST(sent_b.size() > 10u);
  // b's own rows are committed before its /stats answers.
  auto total = static_cast<int64_t>(3 + sent_a.size() + sent_b.size());
  BOOST_TEST(stats_requests(b.port(), total) >= total);
  auto stored = rows_per_id();
  int64_t missing = 0;
  for (const auto* sent : {&sent_a, &sent_b})
    for (auto& id : *sent) {
      auto it = stored.find(id);
      if (it == stored.end() || it->second != 1) {
        ++missing;
        BOOST_TEST_MESSAGE("no single row for " << id);
      }
    }
  BOOST_TEST(missing == 0);
  // A request the stopped server answered, through the one still running.
  auto last = *sent_a.rbegin();
  BOOST_TEST(get_json(b.port(), "/runs/" + last)
               .at("request")
               .at("requestId")
               .as_string()
             == last);
  BOOST_TEST(b.stop(SIGTERM) == 0);
}

BOOST_FIXTURE_TEST_CASE(api_keys_on_the_postgres_ledger_and_a_shared_budget,
                        pg_ledger_env) {
  // The key is made in the PostgreSQL ledger (no data directory needed).
  auto added = run_candor({"keys", "add", "pg-bot", "--daily-tokens", "1"},
                          env());
  BOOST_REQUIRE_MESSAGE(added.exit_code == 0, added.err);
  auto key = added.out.substr(0, added.out.find('\n'));
  header_list with_key{{"Authorization", "Bearer " + key}};
  server_process a{env()};
  BOOST_REQUIRE_MESSAGE(a.start(), a.log());
  {
    http_client c{a.port()};
    auto r = c.ask(ask_body(out_of_scope_q));
    BOOST_REQUIRE(r);
    BOOST_TEST(r->status == 401);
    r = c.ask(ask_body(out_of_scope_q), with_key);
    BOOST_REQUIRE(r);
    BOOST_TEST(r->status == 200);
    r = c.ask(ask_body(out_of_scope_q), with_key);
    BOOST_REQUIRE(r);
    BOOST_TEST(r->status == 429);
  }
  BOOST_TEST(stats_requests(a.port(), 3) == 3);
  auto by_key = get_json(a.port(), "/stats").at("byKey");
  BOOST_TEST(by_key.at("pg-bot").at("requests").as_int64() == 2);
  BOOST_TEST(by_key.at("pg-bot").at("rateLimited").as_int64() == 1);
  // Another process sharing the ledger reads the day's tokens from it:
  // the budget is spent there too.
  server_process b{env()};
  BOOST_REQUIRE_MESSAGE(b.start(), b.log());
  http_client cb{b.port()};
  auto r = cb.ask(ask_body(out_of_scope_q), with_key);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 429);
  BOOST_TEST(!r->header("retry-after").empty());
  BOOST_TEST(stats_requests(b.port(), 4) == 4); // b's row committed
  // Stored: the hash and the name, never the key.
  auto c = data::pg::connection::open(dsn);
  BOOST_REQUIRE(c.ok());
  auto rows = c->query("SELECT count(*) FROM candor_ledger.requests "
                       "WHERE key_name = 'pg-bot'");
  BOOST_REQUIRE(rows.ok());
  BOOST_TEST(*rows->values.at(0).at(0) == "3"); // 200, 429, 429 (not 401)
  auto leaks = c->query("SELECT count(*) FROM candor_ledger.api_keys k, "
                        "candor_ledger.requests q WHERE k.hash = $1 OR "
                        "k.prefix = $1 OR q.question LIKE '%' || $1 || '%'",
                        {key});
  BOOST_REQUIRE(leaks.ok());
  BOOST_TEST(*leaks->values.at(0).at(0) == "0");
  BOOST_TEST(a.log().find(key) == std::string::npos);
  BOOST_TEST(b.log().find(key) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(postgres_without_a_connection_string_is_a_config_error) {
  auto dir = make_temp_dir("candor-ledger-conf");
  auto r = run_candor({"ask", out_of_scope_q, "--data-dir", dir + "/data"},
                      {{"CANDOR_LEDGER_BACKEND", "postgres"}});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("CANDOR_LEDGER_POSTGRES_DSN") != std::string::npos,
             r.err);
  // A connection string with the default backend.
  r = run_candor({"ask", out_of_scope_q, "--data-dir", dir + "/data"},
                 {{"CANDOR_LEDGER_POSTGRES_DSN", "host=/nonexistent"}});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("ledger.backend") != std::string::npos, r.err);
  // A database that is not there: a startup failure naming the ledger.
  r = run_candor({"ask", out_of_scope_q, "--data-dir", dir + "/data"},
                 {{"CANDOR_LEDGER_BACKEND", "postgres"},
                  {"CANDOR_LEDGER_POSTGRES_DSN",
                   "host=" + dir + "/nosocket connect_timeout=2"}});
  BOOST_TEST(r.exit_code != 0);
  BOOST_TEST(r.err.find("ledger") != std::string::npos, r.err);
  remove_tree(dir);
}

BOOST_AUTO_TEST_SUITE_END()
