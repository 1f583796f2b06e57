#pragma once

// Helpers shared by the ledger store's test files: opening stores and raw
// connections, and building the rows the tests write.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

#include "data/ledger/store.hpp"
#include "data/sqlite.hpp"
#include "tests/support/temp_dir.hpp"

namespace candor::test::ledger_rows {

using namespace candor::data;
namespace json = boost::json;
using candor::test::temp_dir;

inline ledger_store open_store(const std::string& path, bool writer) {
  auto store = ledger_store::open(path, writer);
  BOOST_REQUIRE_MESSAGE(store.ok(), (store.ok() ? "" : store.err().message));
  return std::move(*store);
}

inline database open_raw(const std::string& path) {
  auto db = database::open(path);
  BOOST_REQUIRE_MESSAGE(db.ok(), (db.ok() ? "" : db.err().message));
  BOOST_REQUIRE(!db->busy_timeout(std::chrono::seconds{5}));
  return std::move(*db);
}

inline int64_t count(ledger_store& store) {
  auto n = store.count_requests();
  BOOST_REQUIRE_MESSAGE(n.ok(), (n.ok() ? "" : n.err().message));
  return *n;
}

inline domain::request_record request(std::string id, int64_t ts_us,
                                      std::string route, std::string status,
                                      int32_t http_status, int64_t latency_us) {
  domain::request_record r;
  r.request_id = std::move(id);
  r.ts_us = ts_us;
  r.method = "POST";
  r.path = "/ask";
  r.route = std::move(route);
  r.status = std::move(status);
  r.http_status = http_status;
  r.latency_us = latency_us;
  return r;
}

inline domain::llm_call_record llm_call(std::string id, int64_t ts_us,
                                        std::string outcome, int32_t retries,
                                        bool fallback, int64_t in, int64_t out,
                                        double cost) {
  domain::llm_call_record c;
  c.request_id = std::move(id);
  c.ts_us = ts_us;
  c.prompt = "router";
  c.prompt_version = "v1";
  c.provider = "fake";
  c.model = "scripted-small";
  c.attempts = retries + 1;
  c.retries = retries;
  c.fallback_used = fallback;
  c.outcome = std::move(outcome);
  c.tokens_in = in;
  c.tokens_out = out;
  c.cost_usd = cost;
  c.latency_us = 1234;
  return c;
}

inline json::value parse(const domain::outcome<std::string>& text) {
  BOOST_REQUIRE_MESSAGE(text.ok(), (text.ok() ? "" : text.err().message));
  return json::parse(*text);
}

inline domain::trace_record trace_of(std::string id, int64_t ts_us,
                                     std::vector<std::string> outcomes) {
  domain::trace_record t;
  t.request_id = std::move(id);
  t.ts_us = ts_us;
  int64_t micros = 1;
  for (auto& o : outcomes)
    t.steps.push_back({domain::node::router, std::move(o), micros++});
  return t;
}

/// The outcomes of a run's trace, in the order /runs shows them.
inline std::vector<std::string> trace_outcomes(ledger_store& store,
                                               const std::string& id) {
  auto doc = parse(store.run_json(id));
  std::vector<std::string> out;
  for (auto& s : doc.at("trace").as_array())
    out.emplace_back(s.at("outcome").as_string());
  return out;
}

/// EXPLAIN QUERY PLAN of `sql`, one detail line per row, joined by "; ".
/// The outcomes of every trace row stored for an id, in `ord` order,
/// whichever request they belong to (run_json shows one request's).
inline std::vector<std::string> stored_trace_outcomes(const std::string& path,
                                                      const std::string& id) {
  auto db = open_raw(path);
  auto q = db.prepare("SELECT outcome FROM trace_steps WHERE request_id = ?1 "
                      "ORDER BY ord");
  BOOST_REQUIRE_MESSAGE(q.ok(), (q.ok() ? "" : q.err().message));
  BOOST_REQUIRE(!q->bind_text(1, id));
  std::vector<std::string> out;
  auto err = for_each_row(
    *q, [&](statement& row) { out.push_back(row.column_text(0)); });
  BOOST_REQUIRE_MESSAGE(!err, err.message);
  return out;
}

inline std::string query_plan(database& db, const std::string& sql) {
  auto q = db.prepare("EXPLAIN QUERY PLAN " + sql);
  BOOST_REQUIRE_MESSAGE(q.ok(), (q.ok() ? "" : q.err().message));
  std::string out;
  auto err = for_each_row(*q, [&](statement& row) {
    out += (out.empty() ? "" : "; ") + row.column_text(3);
  });
  BOOST_REQUIRE_MESSAGE(!err, err.message);
  return out;
}

} // namespace candor::test::ledger_rows

namespace candor::test {

/// Request rows in the ledger of a server's data directory (a server that
/// has stopped, or one whose writer has committed).
inline int64_t stored_requests(const std::string& data_dir) {
  auto store = ledger_rows::open_store(data_dir + "/ledger.db", false);
  return ledger_rows::count(store);
}

} // namespace candor::test
