// The Prometheus metrics: request, model-call, ledger, restart and sandbox
// series, with cached series handles.

#include "data/telemetry.hpp"

#include <array>
#include <atomic>
#include <charconv>

#include <cstdio>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "domain/records.hpp"

namespace candor::actors {

namespace pm = prometheus;

namespace {

/// Series handles by label values. prometheus-cpp's Family::Add builds a
/// label map, hashes it and locks the family on every call (about 2 % of an
/// out-of-scope request's CPU, measured with perf); a series is never removed,
/// so its address can be kept and found again by a flat key.
template <class T>
class series_cache {
public:
  template <class Make>
  T& get(const std::string& key, Make make) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto it = map_.find(key); it != map_.end())
      return *it->second;
    T& series = make();
    map_.emplace(key, &series);
    return series;
  }

private:
  std::mutex mtx_;
  std::unordered_map<std::string, T*> map_;
};

/// `parts` joined by a byte that label values here never contain.
template <class... Ts>
const std::string& series_key(const Ts&... parts) {
  thread_local std::string key;
  key.clear();
  ((key.append(parts), key.push_back('\x1f')), ...);
  return key;
}

} // namespace

namespace {
const std::string none_route = "none";
const std::string http_error_status = "http_error";
} // namespace

struct telemetry::impl {
  std::shared_ptr<pm::Registry> registry = std::make_shared<pm::Registry>();
  pm::Family<pm::Counter>& requests
    = pm::BuildCounter()
        .Name("candor_http_requests_total")
        .Help(
          "HTTP requests by answer route, answer status and HTTP status code")
        .Register(*registry);
  pm::Family<pm::Counter>& failures
    = pm::BuildCounter()
        .Name("candor_server_failures_total")
        .Help("Requests that failed on the server's side (an answer ending "
              "in error, a 5xx, a missing fixture), by reason; a client's bad "
              "request is not counted")
        .Register(*registry);
  std::mutex failures_mtx;
  std::unordered_map<std::string, pm::Counter*> failure_series;
  pm::Family<pm::Histogram>& latency
    = pm::BuildHistogram()
        .Name("candor_http_request_duration_seconds")
        .Help("Time from request arrival to response, by answer route")
        .Register(*registry);
  pm::Family<pm::Gauge>& in_flight
    = pm::BuildGauge()
        .Name("candor_http_in_flight_requests")
        .Help("Requests being processed right now")
        .Register(*registry);
  pm::Gauge& in_flight_gauge = in_flight.Add({});
  pm::Family<pm::Counter>& dropped
    = pm::BuildCounter()
        .Name("candor_http_connections_dropped_total")
        .Help("Connections refused or closed before they sent a whole "
              "request, by reason: per_address_limit, capacity (every "
              "connection busy), shed (made room at the cap), "
              "header_timeout, body_timeout")
        .Register(*registry);
  /// The dropped series by reason, all made up front (no lock to count).
  std::array<std::pair<std::string_view, pm::Counter*>, 5> dropped_series{{
    {"per_address_limit", &dropped.Add({{"reason", "per_address_limit"}})},
    {"capacity", &dropped.Add({{"reason", "capacity"}})},
    {"shed", &dropped.Add({{"reason", "shed"}})},
    {"header_timeout", &dropped.Add({{"reason", "header_timeout"}})},
    {"body_timeout", &dropped.Add({{"reason", "body_timeout"}})},
  }};
  pm::Family<pm::Counter>& model_calls
    = pm::BuildCounter()
        .Name("candor_model_calls_total")
        .Help("Logical model calls by prompt and outcome")
        .Register(*registry);
  pm::Family<pm::Counter>& model_tokens
    = pm::BuildCounter()
        .Name("candor_model_tokens_total")
        .Help("Tokens used by model calls (estimated on the scripted provider)")
        .Register(*registry);
  pm::Family<pm::Counter>& model_retries = pm::BuildCounter()
                                             .Name("candor_model_retries_total")
                                             .Help("Retried model attempts")
                                             .Register(*registry);
  pm::Family<pm::Counter>& model_fallbacks
    = pm::BuildCounter()
        .Name("candor_model_fallbacks_total")
        .Help("Logical model calls answered by the fallback model")
        .Register(*registry);
  pm::Family<pm::Counter>& model_local_fallbacks
    = pm::BuildCounter()
        .Name("candor_model_local_fallbacks_total")
        .Help("Logical model calls answered by the local provider because "
              "every model failed")
        .Register(*registry);
  pm::Family<pm::Counter>& restarts
    = pm::BuildCounter()
        .Name("candor_actor_restarts_total")
        .Help("Service actors restarted by the guardian")
        .Register(*registry);
  pm::Family<pm::Counter>& ledger
    = pm::BuildCounter()
        .Name("candor_ledger_rows_total")
        .Help("Rows committed to the ledger database")
        .Register(*registry);
  pm::Family<pm::Gauge>& ledger_backlog
    = pm::BuildGauge()
        .Name("candor_ledger_backlog_records")
        .Help("Records handed to the ledger writer and not committed yet")
        .Register(*registry);
  pm::Family<pm::Counter>& sandbox_events
    = pm::BuildCounter()
        .Name("candor_sql_sandbox_events_total")
        .Help("SQL sandbox executor processes killed at their deadline (kill), "
              "dead of another cause (crash) and replaced (respawn); "
              "statements run again after their executor was lost (retry)")
        .Register(*registry);
  pm::Family<pm::Gauge>& sandbox_pool
    = pm::BuildGauge()
        .Name("candor_sql_sandbox_executors")
        .Help("SQL sandbox pool: executor processes by state, and queued "
              "statements")
        .Register(*registry);
  pm::Family<pm::Counter>& ledger_failures
    = pm::BuildCounter()
        .Name("candor_ledger_write_failures_total")
        .Help("Failed attempts to commit a batch to the ledger database (a "
              "full disk, an unwritable file); the batch is retried")
        .Register(*registry);
  pm::Family<pm::Gauge>& ledger_failing
    = pm::BuildGauge()
        .Name("candor_ledger_writes_failing")
        .Help("1 while the ledger's last commit failed, 0 once one succeeds")
        .Register(*registry);
  pm::Counter& ledger_failure_counter = ledger_failures.Add({});
  pm::Gauge& ledger_failing_gauge = ledger_failing.Add({});
  std::mutex ledger_mtx;
  std::string ledger_error; ///< the last failure while failing, else empty
  pm::Counter& ledger_counter = ledger.Add({});
  pm::Gauge& backlog_gauge = ledger_backlog.Add({});
  std::atomic<int64_t> backlog_records{0};
  pm::Counter& retries_counter = model_retries.Add({});
  pm::Counter& fallbacks_counter = model_fallbacks.Add({});
  pm::Counter& local_fallbacks_counter = model_local_fallbacks.Add({});
  pm::Counter& tokens_counter = model_tokens.Add({});
  // The pool gauges, set twice per statement: looked up once.
  pm::Gauge& pool_size = sandbox_pool.Add({{"state", "size"}});
  pm::Gauge& pool_ready = sandbox_pool.Add({{"state", "ready"}});
  pm::Gauge& pool_busy = sandbox_pool.Add({{"state", "busy"}});
  pm::Gauge& pool_queued = sandbox_pool.Add({{"state", "queued"}});
  series_cache<pm::Counter> request_series;
  series_cache<pm::Histogram> latency_series;
  series_cache<pm::Counter> model_call_series;
};

telemetry::telemetry() : impl_(std::make_unique<impl>()) {
  // Pre-create the sandbox series so dashboards see zeros, not gaps.
  impl_->restarts.Add({{"actor", "llm"}});
  for (auto* event : {"kill", "respawn", "crash", "retry"})
    impl_->sandbox_events.Add({{"event", event}});
}

telemetry::~telemetry() = default;

void telemetry::request_done(const std::string& route,
                             const std::string& status, int http_status,
                             double seconds, const std::string& error) {
  if (domain::server_failure(status, http_status, error)) {
    const std::string reason = error.empty() ? "answer_error" : error;
    auto& f = *impl_;
    std::lock_guard<std::mutex> guard{f.failures_mtx};
    auto& c = f.failure_series[reason];
    if (c == nullptr)
      c = &f.failures.Add({{"reason", reason}});
    c->Increment();
  }
  const std::string& r = route.empty() ? none_route : route;
  const std::string& st = status.empty() ? http_error_status : status;
  char digits[16];
  auto end = std::to_chars(digits, digits + sizeof digits, http_status).ptr;
  std::string code{digits, end};
  auto& i = *impl_;
  i.request_series
    .get(
      series_key(r, st, std::string_view{code}),
      [&]() -> pm::Counter& {
        return i.requests.Add({{"route", r}, {"status", st}, {"code", code}});
      })
    .Increment();
  static const pm::Histogram::BucketBoundaries buckets{
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25,   0.5,   1,      2.5,   5,    10,    30};
  i.latency_series
    .get(series_key(r),
         [&]() -> pm::Histogram& {
           return i.latency.Add({{"route", r}}, buckets);
         })
    .Observe(seconds);
}

void telemetry::set_in_flight(int64_t n) {
  impl_->in_flight_gauge.Set(static_cast<double>(n));
}

void telemetry::model_call(const std::string& prompt,
                           const std::string& outcome, int64_t tokens,
                           bool fallback, int32_t retries,
                           bool local_fallback) {
  auto& i = *impl_;
  i.model_call_series
    .get(series_key(prompt, outcome),
         [&]() -> pm::Counter& {
           return i.model_calls.Add({{"prompt", prompt}, {"outcome", outcome}});
         })
    .Increment();
  impl_->tokens_counter.Increment(static_cast<double>(tokens));
  if (fallback)
    impl_->fallbacks_counter.Increment();
  if (local_fallback)
    impl_->local_fallbacks_counter.Increment();
  if (retries > 0)
    impl_->retries_counter.Increment(retries);
}

void telemetry::actor_restart(const std::string& name) {
  impl_->restarts.Add({{"actor", name}}).Increment();
}

void telemetry::ledger_write_failed(const std::string& message) {
  impl_->ledger_failure_counter.Increment();
  impl_->ledger_failing_gauge.Set(1);
  std::lock_guard<std::mutex> guard{impl_->ledger_mtx};
  impl_->ledger_error = message.empty() ? "unknown error" : message;
}

bool telemetry::ledger_write_ok() {
  std::lock_guard<std::mutex> guard{impl_->ledger_mtx};
  if (impl_->ledger_error.empty())
    return false;
  impl_->ledger_error.clear();
  impl_->ledger_failing_gauge.Set(0);
  return true;
}

std::string telemetry::ledger_failure() const {
  std::lock_guard<std::mutex> guard{impl_->ledger_mtx};
  return impl_->ledger_error;
}

void telemetry::ledger_rows(int64_t n) {
  impl_->ledger_counter.Increment(static_cast<double>(n));
}

void telemetry::ledger_backlog(int64_t records) {
  impl_->backlog_records.store(records, std::memory_order_relaxed);
  impl_->backlog_gauge.Set(static_cast<double>(records));
}

int64_t telemetry::ledger_backlog_records() const noexcept {
  return impl_->backlog_records.load(std::memory_order_relaxed);
}

void telemetry::connection_dropped(std::string_view reason) {
  for (auto& [name, counter] : impl_->dropped_series)
    if (name == reason) {
      counter->Increment();
      return;
    }
}

void telemetry::sandbox_event(const std::string& event) {
  impl_->sandbox_events.Add({{"event", event}}).Increment();
}

void telemetry::sandbox_pool(int64_t size, int64_t ready, int64_t busy,
                             int64_t queued) {
  impl_->pool_size.Set(static_cast<double>(size));
  impl_->pool_ready.Set(static_cast<double>(ready));
  impl_->pool_busy.Set(static_cast<double>(busy));
  impl_->pool_queued.Set(static_cast<double>(queued));
}

std::string telemetry::render() const {
  return pm::TextSerializer{}.Serialize(impl_->registry->Collect());
}

} // namespace candor::actors
