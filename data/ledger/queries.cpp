// data::ledger_store's reads: /stats (totals, latency percentiles, model
// calls over a window) and /runs (one request's stored trace).

#include "data/ledger/store.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "data/ledger/store_impl.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"
#include "domain/types.hpp"

namespace json = boost::json;

namespace candor::data {

// -- nearest rank -------------------------------------------------------------

double nearest_rank(const std::vector<double>& sorted, double p) {
  if (sorted.empty())
    return 0;
  auto n = static_cast<double>(sorted.size());
  // p * n first: exact for whole p and n, so whole ranks stay whole.
  auto rank = std::ceil(p * n / 100.0);
  if (!(rank >= 1)) // also catches NaN
    rank = 1;
  if (rank > n)
    rank = n;
  return sorted[static_cast<size_t>(rank) - 1];
}

namespace {

json::array warnings_from_json(const std::string& text) {
  boost::system::error_code ec;
  auto val = json::parse(text, ec);
  if (ec || !val.is_array())
    return {};
  return std::move(val.as_array());
}

/// Binds ?2 and, when the query has it, ?3 of the /runs queries: a
/// request's window, or NULL for every row of the id. A bind error is
/// reported by the next step().
void bind_window(statement& q, std::optional<int64_t> from_us,
                 std::optional<int64_t> to_us) {
  bool end = q.parameter_count() >= 3;
  if (from_us && to_us) {
    (void)q.bind_int64(2, *from_us);
    if (end)
      (void)q.bind_int64(3, *to_us);
  } else {
    (void)q.bind_null(2);
    if (end)
      (void)q.bind_null(3);
  }
}

} // namespace

domain::outcome<std::string>
ledger_store::stats_json(const std::string& window_label,
                         int64_t window_seconds, int64_t now_us,
                         bool cost_is_fictional) {
  // Clamp so that nothing below can overflow (1e12 s is 31,000 years).
  constexpr int64_t max_window_s = 1'000'000'000'000;
  constexpr auto min_us = std::numeric_limits<int64_t>::min();
  window_seconds = std::clamp<int64_t>(window_seconds, 0, max_window_s);
  auto window_us = window_seconds * 1'000'000;
  auto from_us = now_us < min_us + window_us ? min_us : now_us - window_us;
  auto& m = *impl_;
  // One snapshot for both tables.
  auto tx = transaction::begin(m.db, tx_mode::deferred);
  if (!tx)
    return tx.err();
  // -- requests
  std::map<std::string, int64_t> by_route{
    {"docs", 0}, {"data", 0}, {"out_of_scope", 0}, {"none", 0}};
  std::map<std::string, int64_t> by_status{
    {"answered", 0}, {"refused", 0}, {"no_results", 0},
    {"blocked", 0},  {"error", 0},   {"http_error", 0}};
  std::map<int64_t, int64_t> by_http;
  int64_t requests = 0;
  int64_t errors = 0;
  int64_t client_errors = 0;
  std::vector<double> latencies_ms;
  {
    auto& q = m.stats_requests;
    auto guard = q.reset_on_exit();
    q.bind_int64(1, from_us);
    q.bind_int64(2, now_us);
    auto err = for_each_row(q, [&](statement& row) {
      auto route = row.column_text(0);
      auto status = row.column_text(1);
      auto http = row.column_int64(2);
      ++requests;
      ++by_route[route.empty() ? "none" : route];
      ++by_status[status.empty() ? "http_error" : status];
      ++by_http[http];
      // The server's failures (a missing fixture too) against a client's
      // bad requests.
      if (domain::server_failure(status, static_cast<int>(http),
                                 row.column_text(4)))
        ++errors;
      else if (http >= 400 && http <= 499)
        ++client_errors;
      latencies_ms.push_back(static_cast<double>(row.column_int64(3)) / 1000.0);
    });
    if (err)
      return err;
  }
  // -- model calls
  json::object llm;
  {
    auto& q = m.stats_llm;
    auto guard = q.reset_on_exit();
    q.bind_int64(1, from_us);
    q.bind_int64(2, now_us);
    auto res = q.step();
    if (!res)
      return res.err();
    if (*res != step_result::row)
      return storage_error("stats query returned no row");
    // TOTAL() is a REAL; integer sums stay exact far beyond any ledger.
    auto total = [&](int col) {
      return static_cast<int64_t>(std::llround(q.column_double(col)));
    };
    auto tokens_in = total(4);
    auto tokens_out = total(5);
    llm["calls"] = q.column_int64(0);
    llm["failures"] = total(1);
    llm["retries"] = total(2);
    llm["fallbacks"] = total(3);
    llm["localFallbacks"] = total(7);
    // Who wrote the data questions' SQL (or declined to): the local
    // planner (llm.provider local, llm.planFirst, or a local fallback) or
    // a model.
    llm["sqlByPlanner"] = total(8);
    llm["sqlByModel"] = total(9);
    llm["tokensIn"] = tokens_in;
    llm["tokensOut"] = tokens_out;
    llm["tokens"] = tokens_in + tokens_out;
    llm["costUsd"] = domain::round_usd(q.column_double(6));
    llm["costIsFictional"] = cost_is_fictional;
  }
  if (auto err = tx->commit())
    return err;
  // -- the document
  std::sort(latencies_ms.begin(), latencies_ms.end());
  json::object totals;
  totals["requests"] = requests;
  json::object route_obj;
  for (auto& [k, v] : by_route)
    route_obj[k] = v;
  totals["byRoute"] = std::move(route_obj);
  json::object status_obj;
  for (auto& [k, v] : by_status)
    status_obj[k] = v;
  totals["byStatus"] = std::move(status_obj);
  json::object http_obj;
  for (auto& [k, v] : by_http)
    http_obj[std::to_string(k)] = v;
  totals["byHttpStatus"] = std::move(http_obj);
  json::object latency;
  if (latencies_ms.empty()) {
    latency["p50"] = nullptr;
    latency["p95"] = nullptr;
    latency["max"] = nullptr;
  } else {
    latency["p50"] = nearest_rank(latencies_ms, 50);
    latency["p95"] = nearest_rank(latencies_ms, 95);
    latency["max"] = latencies_ms.back();
  }
  json::object doc;
  doc["since"] = window_label;
  doc["fromUs"] = from_us;
  doc["toUs"] = now_us;
  doc["totals"] = std::move(totals);
  doc["errorRate"] = requests == 0 ? 0.0
                                   : static_cast<double>(errors)
                                       / static_cast<double>(requests);
  doc["clientErrors"] = client_errors;
  doc["latencyMs"] = std::move(latency);
  doc["llm"] = std::move(llm);
  return domain::json_text(doc);
}

domain::outcome<std::string>
ledger_store::run_json(const std::string& request_id) {
  auto& m = *impl_;
  auto tx = transaction::begin(m.db, tx_mode::deferred);
  if (!tx)
    return tx.err();
  int64_t requests_with_id = 0;
  {
    auto& q = m.run_request_count;
    auto guard = q.reset_on_exit();
    q.bind_text(1, request_id);
    auto res = q.step();
    if (!res)
      return res.err();
    if (*res == step_result::row)
      requests_with_id = q.column_int64(0);
  }
  json::value request = nullptr;
  // When the id was reused, the latest request's window: its trace rows
  // carry its arrival time, its model calls and statements fall between
  // arrival and end. An id used once shows every row it has (a wall clock
  // stepped back during the request cannot hide one).
  std::optional<int64_t> from_us;
  std::optional<int64_t> to_us;
  {
    auto& q = m.run_request;
    auto guard = q.reset_on_exit();
    q.bind_text(1, request_id);
    auto err = for_each_row(q, [&](statement& row) {
      json::object r;
      r["requestId"] = row.column_text(0);
      r["tsUs"] = row.column_int64(1);
      r["method"] = row.column_text(2);
      r["path"] = row.column_text(3);
      r["route"] = row.column_text(4);
      r["status"] = row.column_text(5);
      r["blockedBy"] = row.column_text(6);
      r["httpStatus"] = row.column_int64(7);
      r["error"] = row.column_text(8);
      r["latencyUs"] = row.column_int64(9);
      r["question"] = row.column_text(10);
      r["llmCalls"] = row.column_int64(11);
      r["tokens"] = row.column_int64(12);
      r["costUsd"] = row.column_double(13);
      r["warnings"] = warnings_from_json(row.column_text(14));
      if (requests_with_id > 1) {
        from_us = row.column_int64(1);
        to_us = *from_us + std::max<int64_t>(row.column_int64(9), 0);
      }
      request = std::move(r);
    });
    if (err)
      return err;
  }
  json::array trace;
  {
    auto& q = m.run_trace;
    auto guard = q.reset_on_exit();
    q.bind_text(1, request_id);
    bind_window(q, from_us, to_us);
    auto err = for_each_row(q, [&](statement& row) {
      json::object s;
      s["seq"] = row.column_int64(0);
      s["node"] = row.column_text(1);
      s["outcome"] = row.column_text(2);
      s["micros"] = row.column_int64(3);
      trace.emplace_back(std::move(s));
    });
    if (err)
      return err;
  }
  if (request.is_null() && trace.empty())
    return domain::make_error(domain::ec::not_found,
                              "no run with id " + request_id);
  json::array llm_calls;
  {
    auto& q = m.run_llm_calls;
    auto guard = q.reset_on_exit();
    q.bind_text(1, request_id);
    bind_window(q, from_us, to_us);
    auto err = for_each_row(q, [&](statement& row) {
      json::object c;
      c["tsUs"] = row.column_int64(0);
      c["prompt"] = row.column_text(1);
      c["promptVersion"] = row.column_text(2);
      c["provider"] = row.column_text(3);
      c["model"] = row.column_text(4);
      c["attempts"] = row.column_int64(5);
      c["retries"] = row.column_int64(6);
      c["fallbackUsed"] = row.column_int64(7) != 0;
      c["outcome"] = row.column_text(8);
      c["tokensIn"] = row.column_int64(9);
      c["tokensOut"] = row.column_int64(10);
      c["tokensEstimated"] = row.column_int64(11) != 0;
      c["costUsd"] = row.column_double(12);
      c["latencyUs"] = row.column_int64(13);
      c["localFallback"] = row.column_int64(14) != 0;
      llm_calls.emplace_back(std::move(c));
    });
    if (err)
      return err;
  }
  json::array audits;
  {
    auto& q = m.run_sql_audit;
    auto guard = q.reset_on_exit();
    q.bind_text(1, request_id);
    bind_window(q, from_us, to_us);
    auto err = for_each_row(q, [&](statement& row) {
      json::object a;
      a["tsUs"] = row.column_int64(0);
      a["sql"] = row.column_text(1);
      a["verdict"] = row.column_text(2);
      a["layer"] = row.column_text(3);
      a["reason"] = row.column_text(4);
      a["rows"] = row.column_int64(5);
      a["latencyUs"] = row.column_int64(6);
      audits.emplace_back(std::move(a));
    });
    if (err)
      return err;
  }
  if (auto err = tx->commit())
    return err;
  json::object doc;
  doc["requestId"] = request_id;
  // More than 1 when a client reused the id: only the latest is shown.
  doc["requestsWithId"] = requests_with_id;
  doc["request"] = std::move(request);
  doc["trace"] = std::move(trace);
  doc["llmCalls"] = std::move(llm_calls);
  doc["sqlAudit"] = std::move(audits);
  return domain::json_text(doc);
}

domain::outcome<int64_t> ledger_store::count_requests() {
  auto& q = impl_->count_requests;
  auto guard = q.reset_on_exit();
  auto res = q.step();
  if (!res)
    return res.err();
  if (*res != step_result::row)
    return storage_error("count query returned no row");
  return q.column_int64(0);
}

} // namespace candor::data
