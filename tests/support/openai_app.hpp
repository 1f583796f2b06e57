#pragma once

// Test helper: a candor app whose model provider is the scripted
// OpenAI-compatible stub on loopback, and the stub's replies; shared by the
// llm_openai and llm_openai_guard suites.

#include "data/config_load.hpp"
#include "actors/app.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/local/provider.hpp"
#include "data/sqlite.hpp"
#include "domain/config.hpp"
#include "domain/build_info.hpp"
#include "domain/guard/input_rules.hpp"
#include "domain/guard/input_scorer.hpp"
#include "domain/model/contracts.hpp"
#include "eval/input_guard.hpp"
#include "net/llm_client.hpp"
#include "tests/support/openai_stub.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/sales_db.hpp"


namespace candor::test::openai_app_support {

inline constexpr auto key = "sk-test-7f3a9c1e5b";
inline constexpr auto oos = "What is the weather in Lisbon tomorrow?";
inline constexpr auto docs_q = "How long is the frame warranty on a Volt e-bike?";
inline constexpr auto data_q = "Which product sold the most units last year?";
inline constexpr auto route_oos
  = R"({"route":"out_of_scope","reason":"The question is about weather."})";

inline bool is_guard(const test::stub_request& r) {
  return r.system.find("safety classifier") != std::string::npos;
}

inline test::stub_reply say(const std::string& content) {
  test::stub_reply r;
  r.content = content;
  return r;
}

inline test::stub_reply status(int code) {
  test::stub_reply r;
  r.status = code;
  r.body = R"({"error":{"message":"stub says no"}})";
  return r;
}

/// A candor app whose provider is the stub.
struct openai_app {
  std::string dir = test::make_temp_dir("candor-openai");
  test::openai_stub stub;
  std::unique_ptr<actors::app> a;
  int seq = 0;

  openai_app(test::openai_stub::handler h,
             std::map<std::string, std::string> flags = {},
             domain::env_lookup env = {}, std::string tls_dir = {})
      : stub(std::move(h), std::move(tls_dir)) {
    flags["dataDir"] = dir + "/var";
    flags.try_emplace("llm.backoffBaseMs", "1");
    env.try_emplace("CANDOR_LLM_BASE_URL", stub.base_url());
    env.try_emplace("CANDOR_LLM_API_KEY", key);
    env.try_emplace("CANDOR_LLM_MODEL", "gpt-4o-mini");
    env.try_emplace("CANDOR_LLM_FALLBACK_MODEL", "m-fallback");
    auto cfg = data::load_config(domain::default_config_json(), "", env, flags);
    BOOST_REQUIRE_MESSAGE(cfg.ok(), (cfg.ok() ? "" : cfg.err().message));
    BOOST_REQUIRE_EQUAL(cfg->llm.provider, "openai");
    auto client = net::make_llm_client(net::client_options(*cfg));
    BOOST_REQUIRE(client.ok());
    test::provide_sales_db(cfg->data_dir);
    auto started = actors::app::start(*cfg, *client);
    BOOST_REQUIRE_MESSAGE(started.ok(),
                          (started.ok() ? "" : started.err().message));
    a = std::move(*started);
  }

  ~openai_app() {
    a.reset();
    test::remove_tree(dir);
  }

  domain::outcome<domain::ask_state> ask(const std::string& q = oos) {
    domain::ask_request req;
    req.request_id = "openai-test-" + std::to_string(++seq);
    req.question = q;
    return a->ask_sync(req);
  }

  /// The stored llm calls of the last request (read from the ledger).
  boost::json::array calls() {
    BOOST_REQUIRE(a->flush_sync().ok());
    auto db = data::database::open(dir + "/var/ledger.db");
    BOOST_REQUIRE(db.ok());
    auto q = db->prepare(
      "SELECT provider, model, attempts, retries, fallback_used, outcome, "
      "tokens_in, tokens_estimated, cost_usd, local_fallback FROM llm_calls "
      "WHERE request_id = ?1 ORDER BY id");
    BOOST_REQUIRE(q.ok());
    BOOST_REQUIRE(!q->bind_text(1, "openai-test-" + std::to_string(seq)));
    boost::json::array out;
    for (;;) {
      auto step = q->step();
      BOOST_REQUIRE(step.ok());
      if (*step == data::step_result::done)
        break;
      out.push_back(
        boost::json::object{{"provider", q->column_text(0)},
                            {"model", q->column_text(1)},
                            {"attempts", q->column_int64(2)},
                            {"retries", q->column_int64(3)},
                            {"fallbackUsed", q->column_int64(4) != 0},
                            {"outcome", q->column_text(5)},
                            {"tokensIn", q->column_int64(6)},
                            {"tokensEstimated", q->column_int64(7) != 0},
                            {"costUsd", q->column_double(8)},
                            {"localFallback", q->column_int64(9) != 0}});
    }
    return out;
  }

  /// GET /stats?since=1h, parsed.
  boost::json::object stats() {
    BOOST_REQUIRE(a->flush_sync().ok());
    std::promise<domain::outcome<std::string>> p;
    auto f = p.get_future();
    a->stats("1h", [&p](domain::outcome<std::string> r) {
      p.set_value(std::move(r));
    });
    auto text = f.get();
    BOOST_REQUIRE_MESSAGE(text.ok(), (text.ok() ? "" : text.err().message));
    return boost::json::parse(*text).as_object();
  }
};

inline bool has(const std::vector<std::string>& xs, const std::string& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}


} // namespace candor::test::openai_app_support
