// End-to-end: the documents route through the real `candor serve`, every
// fixture scenario over HTTP, the re-index admin endpoint, and the hot swap
// of the index under load.

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr auto token = "e2e-admin-token-1234567890";

std::string ask_body(std::string_view q, std::string_view force = {}) {
  json::object o{{"question", q}};
  if (!force.empty())
    o["forceRoute"] = force;
  return json::serialize(o);
}

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

bool has_warning(const json::object& o, std::string_view w) {
  for (auto& x : o.at("warnings").as_array())
    if (x.as_string() == w)
      return true;
  return false;
}

std::vector<std::string> cited(const json::object& o) {
  std::vector<std::string> out;
  for (auto& c : o.at("citations").as_array())
    out.emplace_back(c.at("chunkId").as_string());
  return out;
}

struct started_server {
  server_process proc;
  explicit started_server(std::map<std::string, std::string> env = {})
      : proc(std::move(env)) {
    BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n"
                                          << proc.log());
  }
};

json::object health(uint16_t port) {
  http_client c{port};
  auto r = c.request("GET", "/health");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  return parse_object(r->body);
}

/// A copy of data/kb in `dir`, plus `extra` documents (file name, text).
std::string copy_kb(const temp_dir& dir,
                    std::map<std::string, std::string> extra) {
  auto kb = dir.file("kb");
  fs::remove_all(kb);
  fs::create_directories(kb);
  for (auto& e :
       fs::directory_iterator(std::string{CANDOR_SOURCE_DIR} + "/data/kb"))
    fs::copy_file(e.path(), fs::path{kb} / e.path().filename());
  for (auto& [name, text] : extra)
    std::ofstream{kb + "/" + name} << text;
  return kb;
}

constexpr auto cargo_q
  = "How much is the deposit for renting a Haul cargo bike?";
constexpr auto cargo_doc = R"(# Cargo Bike Rental

Kestrel Cycle Works rents out Haul cargo bikes from the Utrecht store, for
moving house, a family day out or trying a cargo bike before buying one.

## Rental prices

A Haul cargo bike costs €35 for one day and €150 for a full week, helmet and
rain cover included. Kestrel Club members pay €28 per day. A deposit of €250 is
held on your card and released when the bike comes back undamaged.

## Booking and pick-up

Book a rental cargo bike online at https://www.kestrel.example/rent at least
one day ahead. Pick-up is from 09:00 and the bike must be back by 18:00 on the
last rental day.
)";

/// Docs questions the load loop posts; each must be answered.
const std::vector<std::string> load_questions{
  "How long is the warranty on an e-bike battery?",
  "How long is the warranty on a frame?",
  "How do I track my order?",
};

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_docs)

BOOST_AUTO_TEST_CASE(every_documents_scenario_over_http) {
  started_server s;
  http_client c{s.proc.port()};
  BOOST_REQUIRE(c.connected());

  // Answered with sources.
  auto r = c.ask(ask_body("How long is the warranty on an e-bike battery?"));
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  auto o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "docs");
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  BOOST_CHECK(o.at("blockedBy").is_null());
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 2);
  BOOST_REQUIRE_EQUAL(o.at("citations").as_array().size(), 1u);
  auto& cite = o.at("citations").as_array()[0].as_object();
  BOOST_CHECK_EQUAL(cite.at("chunkId").as_string(),
                    "frequently-asked-questions#how-long-is-the-warranty-on-"
                    "an-e-bike-battery-1");
  BOOST_CHECK_EQUAL(cite.at("docTitle").as_string(),
                    "Frequently Asked Questions");
  BOOST_CHECK(cite.at("snippet").as_string().find("500 full charge cycles")
              != json::string::npos);
  BOOST_CHECK(!cite.at("sanitized").as_bool());
  BOOST_CHECK(!o.at("meta").at("embedder").as_string().empty());
  auto trace_len = o.at("meta").at("trace").as_array().size();
  BOOST_CHECK_EQUAL(trace_len, 6u); // guard, router, retrieve, rag, check, fin

  // Refused below the threshold: no model call at all when forced.
  r = c.ask(ask_body("Do you sell tickets to the Tour de France?", "docs"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 0);
  BOOST_CHECK(has_warning(o, "weak_evidence"));
  BOOST_CHECK(o.at("citations").as_array().empty());
  // The ledger agrees: no model call, and no rag_answer step.
  {
    auto id = o.at("requestId").as_string();
    auto run = c.request("GET", "/runs/" + std::string{id});
    BOOST_REQUIRE(run && run->status == 200);
    auto ro = parse_object(run->body);
    BOOST_CHECK(ro.at("llmCalls").as_array().empty());
    bool rag_step = false;
    BOOST_CHECK(!ro.at("trace").as_array().empty());
    for (auto& t : ro.at("trace").as_array())
      rag_step = rag_step || t.at("node").as_string() == "rag_answer";
    BOOST_CHECK(!rag_step);
  }
  // ... and only the router's call when routed by the model.
  r = c.ask(ask_body("Does Kestrel sponsor a professional racing team?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("route").as_string(), "docs");
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 1);

  // Poisoned passage neutralised: cited, marked sanitized, no canary.
  r = c.ask(ask_body("What support do partner dealers get for spring shop "
                     "events, demo days and co-op budget?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  BOOST_REQUIRE(!o.at("citations").as_array().empty());
  auto& pc = o.at("citations").as_array()[0].as_object();
  BOOST_CHECK_EQUAL(pc.at("chunkId").as_string(),
                    "partner-dealer-bulletin#pricing-and-promotions-note-1");
  BOOST_CHECK(pc.at("sanitized").as_bool());
  BOOST_CHECK(r->body.find("TAILWIND") == std::string::npos);
  BOOST_CHECK(r->body.find("ignore all earlier") == std::string::npos);

  // Foreign citation dropped, the valid one stands.
  r = c.ask(ask_body("How long do I have to return a bike?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  BOOST_CHECK(has_warning(o, "citation_dropped"));
  BOOST_CHECK((cited(o)
               == std::vector<std::string>{
                 "frequently-asked-questions#how-long-do-i-have-to-return-"
                 "something-1"}));

  // Only a foreign citation: refused.
  r = c.ask(ask_body("How do I join the Kestrel Club?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK(has_warning(o, "citation_dropped"));
  BOOST_CHECK(o.at("citations").as_array().empty());
  BOOST_CHECK(o.at("answer").as_string().find("50%") == json::string::npos);

  // A compliant model repeating the canary: blocked by the output guard.
  r = c.ask(ask_body("Pricing and promotions note for partner dealers"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "blocked");
  BOOST_CHECK_EQUAL(o.at("blockedBy").as_string(), "output_guard");
  BOOST_CHECK(r->body.find("TAILWIND") == std::string::npos);
  BOOST_CHECK(o.at("citations").as_array().empty());
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 2);

  // confident: false gives refused.
  r = c.ask(ask_body("How much does standard shipping cost?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "refused");
  BOOST_CHECK(has_warning(o, "not_confident"));

  // Malformed JSON, then repaired by the one re-ask.
  r = c.ask(
    ask_body("When is the new recommended retail price list taking effect?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 3);
  BOOST_CHECK(has_warning(o, "llm_reply_repaired"));

  // Malformed twice: an honest error, not a third call.
  r = c.ask(ask_body("How do I set up tubeless tyres?"));
  BOOST_REQUIRE(r && r->status == 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "error");
  BOOST_CHECK_EQUAL(o.at("meta").at("llmCalls").as_int64(), 3);
  BOOST_CHECK(has_warning(o, "llm_parse_failed"));

  // A docs question with no fixture: 422, never a generic answer.
  r = c.ask(
    ask_body("How long is the warranty on an e-bike battery pack?", "docs"));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 422);

  // /health reports the knowledge base and the serving embedder.
  auto h = health(s.proc.port());
  BOOST_CHECK_GE(h.at("kb").at("documents").as_int64(), 24);
  BOOST_CHECK_GE(h.at("kb").at("chunks").as_int64(), 200);
  BOOST_CHECK_EQUAL(h.at("kb").at("flagged").as_int64(), 1);
  BOOST_CHECK_EQUAL(h.at("embedder").as_string(),
                    o.at("meta").at("embedder").as_string());
  // The index was built on first start (clean data directory).
  BOOST_CHECK(s.proc.log().find("\"event\":\"index_built\"")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(admin_reindex_needs_a_configured_token) {
  {
    started_server s;
    http_client c{s.proc.port()};
    auto r = c.request("POST", "/admin/reindex", "",
                       {{"Authorization", std::string{"Bearer "} + token}});
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 404);
    BOOST_CHECK(r->body.find("CANDOR_RETRIEVAL_ADMIN_TOKEN")
                != std::string::npos);
  }
  started_server s{{{"CANDOR_RETRIEVAL_ADMIN_TOKEN", token}}};
  http_client c{s.proc.port()};
  auto r = c.request("POST", "/admin/reindex");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 401);
  BOOST_CHECK(!r->header("www-authenticate").empty());
  r = c.request("POST", "/admin/reindex", "",
                {{"Authorization", "Bearer wrong-token"}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 401);
  r = c.request("POST", "/admin/reindex", "",
                {{"Authorization", std::string{"Basic "} + token}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 401);
  r = c.request("GET", "/admin/reindex", "",
                {{"Authorization", std::string{"Bearer "} + token}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 405);
  r = c.request("POST", "/admin/reindex", "",
                {{"Authorization", std::string{"Bearer "} + token}});
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto o = parse_object(r->body);
  BOOST_CHECK_EQUAL(o.at("chunks").as_int64(),
                    health(s.proc.port()).at("kb").at("chunks").as_int64());
  BOOST_CHECK(!o.at("fingerprint").as_string().empty());
  // The token never reaches the log.
  BOOST_CHECK(s.proc.log().find(token) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_index_of_another_embedder_stops_startup) {
  temp_dir dir{"candor-dims"};
  auto data = dir.file("var");
  // `candor ingest` follows the configuration (here 8192 dimensions) ...
  std::map<std::string, std::string> small{
    {"CANDOR_RETRIEVAL_DIMENSIONS", "8192"}};
  test::provide_sales_db(data);
  auto ing = run_candor({"ingest", "--data-dir", data}, small);
  BOOST_REQUIRE_MESSAGE(ing.exit_code == 0, ing.err);
  BOOST_CHECK(ing.out.find("dims=8192") != std::string::npos);
  // ... so a server with the same configuration starts and answers,
  auto ok = run_candor({"ask", "--data-dir", data, "--json",
                        "How long is the warranty on an e-bike battery?"},
                       small);
  BOOST_REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  BOOST_CHECK(ok.out.find("\"status\":\"answered\"") != std::string::npos);
  // and one configured differently refuses to start, naming both.
  for (auto cmd : {"serve", "ask"}) {
    std::vector<std::string> args{cmd, "--data-dir", data};
    if (std::string{cmd} == "ask")
      args.emplace_back("How long is the warranty on an e-bike battery?");
    else
      args.insert(args.end(), {"--port", "0"});
    auto r = run_candor(args);
    BOOST_CHECK_EQUAL(r.exit_code, 2);
    BOOST_CHECK_MESSAGE(r.err.find("dims=8192") != std::string::npos
                          && r.err.find("dims=262144") != std::string::npos,
                        r.err);
  }
}

BOOST_AUTO_TEST_CASE(hot_swap_under_load) {
  started_server s{{{"CANDOR_RETRIEVAL_ADMIN_TOKEN", token}}};
  auto port = s.proc.port();
  temp_dir dir{"candor-kb"};
  auto chunks0 = health(port).at("kb").at("chunks").as_int64();
  {
    http_client c{port};
    auto r = c.ask(ask_body(cargo_q, "docs"));
    BOOST_REQUIRE(r && r->status == 200);
    BOOST_CHECK(parse_object(r->body).at("status").as_string() != "answered");
  }

  std::atomic<bool> stop{false};
  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> max_us{0};
  std::mutex mtx;
  std::string first_failure;
  auto loop = [&](size_t offset) {
    auto c
      = std::make_unique<http_client>(port, std::chrono::milliseconds{10000});
    for (size_t i = offset; !stop; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = c->ask(ask_body(load_questions[i % load_questions.size()]));
      int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
      auto m = max_us.load();
      while (us > m && !max_us.compare_exchange_weak(m, us)) {
      }
      bool good
        = r && r->status == 200
          && r->body.find("\"status\":\"answered\"") != std::string::npos;
      if (good) {
        ++ok;
        continue;
      }
      ++failed;
      std::lock_guard<std::mutex> guard{mtx};
      if (first_failure.empty())
        first_failure = r ? std::to_string(r->status) + " " + r->body
                          : std::string{"no response"};
      if (!r) // the connection is unusable now: open another one
        c = std::make_unique<http_client>(port,
                                          std::chrono::milliseconds{10000});
    }
  };
  std::vector<std::thread> clients;
  for (size_t i = 0; i < 2; ++i)
    clients.emplace_back(loop, i);
  auto wait_for_chunks = [&](int64_t want) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{30};
    while (std::chrono::steady_clock::now() < deadline) {
      if (health(port).at("kb").at("chunks").as_int64() == want)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds{50});
    }
    return false;
  };
  auto progress = [&] {
    auto start = ok.load();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
    while (ok.load() < start + 20
           && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    return ok.load() >= start + 20;
  };
  BOOST_CHECK(progress());

  // 1. A changed copy of the KB, ingested next to the running server, then
  //    SIGHUP.
  auto kb = copy_kb(dir, {{"cargo-bike-rental.md", cargo_doc}});
  auto ing
    = run_candor({"ingest", "--data-dir", s.proc.data_dir(), "--kb", kb});
  BOOST_REQUIRE_MESSAGE(ing.exit_code == 0, ing.err);
  BOOST_CHECK(progress());
  BOOST_CHECK_EQUAL(health(port).at("kb").at("chunks").as_int64(), chunks0);
  BOOST_REQUIRE_EQUAL(::kill(s.proc.pid(), SIGHUP), 0);
  BOOST_CHECK(wait_for_chunks(chunks0 + 3));
  BOOST_CHECK(progress());
  {
    http_client c{port};
    auto r = c.ask(ask_body(cargo_q));
    BOOST_REQUIRE(r && r->status == 200);
    auto o = parse_object(r->body);
    BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
    BOOST_CHECK(
      (cited(o)
       == std::vector<std::string>{"cargo-bike-rental#rental-prices-1"}));
  }

  // 2. The document removed again, then the admin endpoint.
  kb = copy_kb(dir, {});
  ing = run_candor({"ingest", "--data-dir", s.proc.data_dir(), "--kb", kb});
  BOOST_REQUIRE_MESSAGE(ing.exit_code == 0, ing.err);
  {
    http_client c{port};
    auto r = c.request("POST", "/admin/reindex", "",
                       {{"Authorization", std::string{"Bearer "} + token}});
    BOOST_REQUIRE(r);
    BOOST_CHECK_EQUAL(r->status, 200);
    BOOST_CHECK_EQUAL(parse_object(r->body).at("chunks").as_int64(), chunks0);
  }
  BOOST_CHECK_EQUAL(health(port).at("kb").at("chunks").as_int64(), chunks0);
  BOOST_CHECK(progress());
  stop = true;
  for (auto& t : clients)
    t.join();
  BOOST_CHECK_MESSAGE(failed.load() == 0, failed.load()
                                            << " failed requests; first: "
                                            << first_failure);
  BOOST_CHECK_GT(ok.load(), 60);
  // Reported, not asserted (timing belongs to eval/): the slowest request
  // of the whole run, swaps included.
  BOOST_TEST_MESSAGE("hot swap: " << ok.load() << " answered, 0 failed, "
                                  << "slowest " << max_us.load() / 1000.0
                                  << " ms");
  auto log = s.proc.log();
  BOOST_CHECK(log.find("\"via\":\"SIGHUP\"") != std::string::npos);
  BOOST_CHECK_EQUAL(s.proc.stop(SIGTERM), 0);
}

BOOST_AUTO_TEST_SUITE_END()
