// data::ledger_store's reads: /stats (totals, latency percentiles, model
// calls over a window) and /runs (one request's stored trace), built from
// the backend's rows, so that both backends give the same JSON.

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

#include "data/ledger/backend.hpp"
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

/// The /runs window parameter: a request's bound, or NULL for every row of
/// the id.
ledger_param window_param(std::optional<int64_t> us) {
  if (us)
    return *us;
  return std::monostate{};
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
  // -- requests
  std::map<std::string, int64_t> by_route{
    {"docs", 0}, {"data", 0}, {"out_of_scope", 0}, {"none", 0}};
  std::map<std::string, int64_t> by_status{
    {"answered", 0}, {"refused", 0},    {"no_results", 0}, {"blocked", 0},
    {"error", 0},    {"http_error", 0}, {"cancelled", 0}};
  std::map<int64_t, int64_t> by_http;
  int64_t requests = 0;
  int64_t errors = 0;
  int64_t client_errors = 0;
  std::vector<double> latencies_ms;
  json::object llm;
  auto read_requests = [&]() -> domain::error {
    return impl_->read(
      ledger_read::stats_requests, {from_us, now_us},
      [&](const ledger_row& row) {
        auto route = row.text(0);
        auto status = row.text(1);
        auto http = row.int64(2);
        ++requests;
        ++by_route[route.empty() ? "none" : route];
        ++by_status[status.empty() ? "http_error" : status];
        ++by_http[http];
        // The server's failures (a missing fixture too) against a client's
        // bad requests.
        if (domain::server_failure(status, static_cast<int>(http), row.text(4)))
          ++errors;
        else if (http >= 400 && http <= 499)
          ++client_errors;
        latencies_ms.push_back(static_cast<double>(row.int64(3)) / 1000.0);
      });
  };
  // -- model calls
  bool llm_row = false;
  auto read_llm = [&]() -> domain::error {
    return impl_->read(
      ledger_read::stats_llm, {from_us, now_us}, [&](const ledger_row& q) {
        llm_row = true;
        // TOTAL() is a REAL; integer sums stay exact far beyond any ledger.
        auto total = [&](int col) {
          return static_cast<int64_t>(std::llround(q.real(col)));
        };
        auto tokens_in = total(4);
        auto tokens_out = total(5);
        llm["calls"] = q.int64(0);
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
        llm["costUsd"] = domain::round_usd(q.real(6));
        llm["costIsFictional"] = cost_is_fictional;
      });
  };
  // -- per API key (requests that came with one)
  json::object by_key;
  auto read_keys = [&]() -> domain::error {
    return impl_->read(
      ledger_read::stats_keys, {from_us, now_us}, [&](const ledger_row& q) {
        json::object k;
        k["requests"] = q.int64(1);
        k["tokens"] = static_cast<int64_t>(std::llround(q.real(2)));
        k["rateLimited"] = static_cast<int64_t>(std::llround(q.real(3)));
        by_key[q.text(0)] = std::move(k);
      });
  };
  // One snapshot for both tables.
  if (auto err = impl_->snapshot([&]() -> domain::error {
        if (auto e = read_requests())
          return e;
        if (auto e = read_keys())
          return e;
        return read_llm();
      }))
    return err;
  if (!llm_row)
    return domain::make_error(domain::ec::storage_failed,
                              "stats query returned no row");
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
  // Per API key name (empty without keys): requests, model tokens, 429s.
  doc["byKey"] = std::move(by_key);
  return domain::json_text(doc);
}

domain::outcome<std::string>
ledger_store::run_json(const std::string& request_id) {
  int64_t requests_with_id = 0;
  json::value request = nullptr;
  // When the id was reused, the latest request's window: its trace rows
  // carry its arrival time, its model calls and statements fall between
  // arrival and end. An id used once shows every row it has (a wall clock
  // stepped back during the request cannot hide one).
  std::optional<int64_t> from_us;
  std::optional<int64_t> to_us;
  json::array trace;
  json::array llm_calls;
  json::array audits;
  std::string_view id = request_id;
  auto read_request = [&]() -> domain::error {
    if (auto err = impl_->read(
          ledger_read::run_request_count, {id},
          [&](const ledger_row& row) { requests_with_id = row.int64(0); }))
      return err;
    return impl_->read(
      ledger_read::run_request, {id}, [&](const ledger_row& row) {
        json::object r;
        r["requestId"] = row.text(0);
        r["tsUs"] = row.int64(1);
        r["method"] = row.text(2);
        r["path"] = row.text(3);
        r["route"] = row.text(4);
        r["status"] = row.text(5);
        r["blockedBy"] = row.text(6);
        r["httpStatus"] = row.int64(7);
        r["error"] = row.text(8);
        r["latencyUs"] = row.int64(9);
        r["question"] = row.text(10);
        r["llmCalls"] = row.int64(11);
        r["tokens"] = row.int64(12);
        r["costUsd"] = row.real(13);
        r["warnings"] = warnings_from_json(row.text(14));
        if (requests_with_id > 1) {
          from_us = row.int64(1);
          to_us = *from_us + std::max<int64_t>(row.int64(9), 0);
        }
        request = std::move(r);
      });
  };
  auto read_trace = [&]() -> domain::error {
    return impl_->read(ledger_read::run_trace, {id, window_param(from_us)},
                       [&](const ledger_row& row) {
                         json::object s;
                         s["seq"] = row.int64(0);
                         s["node"] = row.text(1);
                         s["outcome"] = row.text(2);
                         s["micros"] = row.int64(3);
                         trace.emplace_back(std::move(s));
                       });
  };
  auto read_llm_calls = [&]() -> domain::error {
    return impl_->read(ledger_read::run_llm_calls,
                       {id, window_param(from_us), window_param(to_us)},
                       [&](const ledger_row& row) {
                         json::object c;
                         c["tsUs"] = row.int64(0);
                         c["prompt"] = row.text(1);
                         c["promptVersion"] = row.text(2);
                         c["provider"] = row.text(3);
                         c["model"] = row.text(4);
                         c["attempts"] = row.int64(5);
                         c["retries"] = row.int64(6);
                         c["fallbackUsed"] = row.int64(7) != 0;
                         c["outcome"] = row.text(8);
                         c["tokensIn"] = row.int64(9);
                         c["tokensOut"] = row.int64(10);
                         c["tokensEstimated"] = row.int64(11) != 0;
                         c["costUsd"] = row.real(12);
                         c["latencyUs"] = row.int64(13);
                         c["localFallback"] = row.int64(14) != 0;
                         llm_calls.emplace_back(std::move(c));
                       });
  };
  auto read_audits = [&]() -> domain::error {
    return impl_->read(ledger_read::run_sql_audit,
                       {id, window_param(from_us), window_param(to_us)},
                       [&](const ledger_row& row) {
                         json::object a;
                         a["tsUs"] = row.int64(0);
                         a["sql"] = row.text(1);
                         a["verdict"] = row.text(2);
                         a["layer"] = row.text(3);
                         a["reason"] = row.text(4);
                         a["rows"] = row.int64(5);
                         a["latencyUs"] = row.int64(6);
                         audits.emplace_back(std::move(a));
                       });
  };
  bool found = true;
  if (auto err = impl_->snapshot([&]() -> domain::error {
        if (auto e = read_request())
          return e;
        if (auto e = read_trace())
          return e;
        found = !request.is_null() || !trace.empty();
        if (!found)
          return {};
        if (auto e = read_llm_calls())
          return e;
        return read_audits();
      }))
    return err;
  if (!found)
    return domain::make_error(domain::ec::not_found,
                              "no run with id " + request_id);
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
  std::optional<int64_t> n;
  if (auto err = impl_->read(ledger_read::count_requests, {},
                             [&](const ledger_row& row) { n = row.int64(0); }))
    return err;
  if (!n)
    return domain::make_error(domain::ec::storage_failed,
                              "count query returned no row");
  return *n;
}

} // namespace candor::data
