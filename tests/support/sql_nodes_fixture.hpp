#pragma once

// Shared by the data-branch node tests (tests/actors/sql_nodes*.cpp): the
// sales database, a fake ledger that keeps SQL audit rows, the node fixture
// and a stand-in model that records its calls.

#include "data/config_load.hpp"
#include "actors/nodes/nodes.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <signal.h>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <boost/test/unit_test.hpp>

#include "data/sql/executor.hpp"
#include "actors/llm.hpp"
#include "actors/supervisor.hpp"
#include "data/fixtures.hpp"
#include "data/prompts.hpp"
#include "data/sales/setup.hpp"
#include "domain/api/api_json.hpp"
#include "domain/config.hpp"
#include "domain/guard/output_guard.hpp"
#include "domain/routing.hpp"
#include "domain/sql/contracts.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_sandbox.hpp"

namespace candor::test::sql_nodes_support {

using namespace candor::actors;
using domain::ask_state;
using domain::status_kind;

/// One sales database for every test that uses it (generating takes a second).
inline const data::sales_setup& sales() {
  static test::temp_dir dir{"candor-sqlnodes"};
  static data::sales_setup setup = [] {
    auto cat = data::catalog::load_default();
    BOOST_REQUIRE(cat.ok());
    auto s = data::prepare_sales(
      dir.path.string(), data::default_sales_seed,
      std::make_shared<const data::catalog>(std::move(*cat)), {});
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.err().message));
    return std::move(*s);
  }();
  return setup;
}

/// The audit rows a node sent to the ledger.
struct audit_log {
  std::mutex mtx;
  std::vector<domain::sql_audit_record> rows;

  std::vector<domain::sql_audit_record> snapshot() {
    std::lock_guard<std::mutex> guard{mtx};
    return rows;
  }
};

inline ledger_actor spawn_fake_ledger(caf::actor_system& sys,
                                      std::shared_ptr<audit_log> log) {
  return sys.spawn([log](ledger_actor::pointer) -> ledger_actor::behavior_type {
    return {
      [](atom::put, domain::request_record&) {},
      [](atom::put, domain::llm_call_record&) {},
      [](atom::put, domain::trace_record&) {},
      [log](atom::put, domain::sql_audit_record& rec) {
        std::lock_guard<std::mutex> guard{log->mtx};
        log->rows.push_back(std::move(rec));
      },
      [](atom::flush) { return int64_t{0}; },
      [](atom::internal, atom::tick) {},
      [](atom::internal, atom::put) {},
      [](atom::internal, atom::flush, uint64_t, int64_t) {},
    };
  });
}

inline caf::actor_system_config& make_config(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  return cfg;
}

inline std::string prompt(const std::string& name) {
  auto all = data::load_prompts(data::default_prompts_dir());
  BOOST_REQUIRE(all.ok());
  auto it = all->find(name);
  BOOST_REQUIRE(it != all->end());
  return it->second.text;
}

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{make_config(cfg)};
  std::shared_ptr<audit_log> audits = std::make_shared<audit_log>();
  ledger_actor ledger = spawn_fake_ledger(sys, audits);
  llm_actor llm;

  fixture() {
    auto conf = data::load_config(domain::default_config_json(), "", {},
                                  {{"llm.backoffBaseMs", "1"},
                                   {"llm.provider", "fake"}});
    BOOST_REQUIRE(conf.ok());
    auto fx = data::fixture_store::load(conf->fixtures_path());
    BOOST_REQUIRE(fx.ok());
    llm = sys.spawn(actors::llm, llm_settings::from(*conf),
                    std::make_shared<const data::fixture_store>(std::move(*fx)),
                    std::shared_ptr<telemetry>{}, ledger,
                    std::shared_ptr<domain::http_transport>{},
                    std::shared_ptr<const data::local_provider>{});
  }

  ~fixture() {
    caf::anon_send_exit(llm, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
  }

  static ask_state state(std::string question, std::string sql = {}) {
    ask_state st;
    st.request.request_id = "sqlnodes-test";
    st.request.question = std::move(question);
    st.route = domain::route_kind::data;
    st.llm_budget = 8;
    if (!sql.empty()) {
      st.has_sql = true;
      st.sql.query = std::move(sql);
    }
    return st;
  }

  /// Runs one step; an error fails the test unless `expect_error`.
  domain::outcome<ask_state> step(const node_actor& n, ask_state st) {
    caf::scoped_actor self{sys};
    domain::outcome<ask_state> out
      = domain::make_error(domain::ec::internal, "no reply");
    domain::ask_box box{std::move(st)};
    self->request(n, std::chrono::seconds{30}, atom::step_v, std::move(box))
      .receive([&](domain::ask_box& r) { out = std::move(*r); },
               [&](caf::error& e) { out = to_domain(e); });
    return out;
  }

  node_actor validator() {
    return sys.spawn(sql_validate, sales().path, sales().cat, ledger,
                std::string{"sqlite"});
  }

  /// Waits until the fake ledger holds `n` rows (sends are asynchronous).
  std::vector<domain::sql_audit_record> audit_rows(size_t n) {
    for (int i = 0; i < 200; ++i) {
      auto rows = audits->snapshot();
      if (rows.size() >= n)
        return rows;
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    return audits->snapshot();
  }
};

/// A stand-in model that records what it was asked and replies `text`.
struct recorded_calls {
  std::mutex mtx;
  std::vector<llm_request> calls;
};

inline llm_actor spawn_recording_llm(caf::actor_system& sys,
                                     std::shared_ptr<recorded_calls> log,
                                     std::string text) {
  // Dynamically typed: only `call` is ever sent to it here.
  auto h = sys.spawn([log, text](caf::event_based_actor*) -> caf::behavior {
    return {
      [log, text](atom::call, llm_request& req) {
        {
          std::lock_guard<std::mutex> guard{log->mtx};
          log->calls.push_back(req);
        }
        llm_reply r;
        r.text = text;
        r.model = "recorder";
        r.finish_reason = "stop";
        r.usage.calls = 1;
        return r;
      },
    };
  });
  return caf::actor_cast<llm_actor>(std::move(h));
}

inline const char* revenue_q = "What was our revenue by channel in 2024?";

} // namespace candor::test::sql_nodes_support
