#include "data/ledger_store.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "data/ledger_sql.hpp"
#include "data/sqlite.hpp"
#include "domain/json_text.hpp"
#include "domain/types.hpp"

namespace json = boost::json;

namespace candor::data {

using namespace ledger_sql; // the schema and the statement texts

// -- ledger_batch -------------------------------------------------------------

bool ledger_batch::empty() const noexcept {
  return requests.empty() && llm_calls.empty() && traces.empty()
         && sql_audits.empty();
}

size_t ledger_batch::size() const noexcept {
  return requests.size() + llm_calls.size() + traces.size()
         + sql_audits.size();
}

void ledger_batch::clear() noexcept {
  requests.clear();
  llm_calls.clear();
  traces.clear();
  sql_audits.clear();
}

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

/// Binds in order from parameter 1; stops at the first error.
///
/// Text is bound by reference (no copy inside SQLite): every caller holds a
/// `reset_on_exit()` guard on the statement, declared after the values it
/// binds, so the bindings are cleared before any of them dies.
class binder {
public:
  explicit binder(statement& stmt) : stmt_(stmt) {}

  binder& operator()(std::string_view x) {
    if (!err_)
      err_ = stmt_.bind_text_ref(next_++, x);
    return *this;
  }

  binder& operator()(int64_t x) {
    if (!err_)
      err_ = stmt_.bind_int64(next_++, x);
    return *this;
  }

  binder& operator()(int32_t x) { return (*this)(int64_t{x}); }

  binder& operator()(bool x) { return (*this)(int64_t{x ? 1 : 0}); }

  binder& operator()(double x) {
    if (!err_)
      err_ = stmt_.bind_double(next_++, x);
    return *this;
  }

  /// Runs the statement once all parameters are bound.
  domain::error run() {
    if (err_)
      return err_;
    return stmt_.run();
  }

private:
  statement& stmt_;
  int next_ = 1;
  domain::error err_;
};

std::string warnings_to_json(const std::vector<std::string>& warnings) {
  json::array arr;
  arr.reserve(warnings.size());
  for (auto& w : warnings)
    arr.emplace_back(w);
  return json::serialize(arr);
}

json::array warnings_from_json(const std::string& text) {
  boost::system::error_code ec;
  auto val = json::parse(text, ec);
  if (ec || !val.is_array())
    return {};
  return std::move(val.as_array());
}

/// True when `path` names a plain file (not `:memory:` or a `file:` URI).
bool plain_file(const std::string& path) {
  return !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
}

} // namespace

// -- impl ---------------------------------------------------------------------

struct ledger_store::impl {
  database db;
  /// The writer's BEGIN IMMEDIATE / COMMIT / ROLLBACK, prepared once.
  tx_statements write_tx;
  /// insert_requests[k - 1] inserts k requests (and so on); prepared on
  /// first use.
  std::array<statement, rows_per_insert> insert_requests;
  std::array<statement, rows_per_insert> insert_llm_calls;
  /// insert_trace_steps[k - 1] inserts k steps; prepared on first use.
  std::array<statement, trace_rows_per_insert> insert_trace_steps;
  statement insert_sql_audit;
  statement next_trace_ord;
  statement stats_requests;
  statement stats_llm;
  statement run_request;
  statement run_request_count;
  statement run_trace;
  statement run_llm_calls;
  statement run_sql_audit;
  statement count_requests;

  domain::error prepare_all() {
    std::pair<statement*, const char*> all[] = {
      {&insert_sql_audit, insert_sql_audit_sql},
      {&next_trace_ord, next_trace_ord_sql},
      {&stats_requests, stats_requests_sql},
      {&stats_llm, stats_llm_sql},
      {&run_request, run_request_sql},
      {&run_request_count, run_request_count_sql},
      {&run_trace, run_trace_sql},
      {&run_llm_calls, run_llm_calls_sql},
      {&run_sql_audit, run_sql_audit_sql},
      {&count_requests, count_requests_sql},
    };
    for (auto& [stmt, sql] : all) {
      auto res = db.prepare(sql);
      if (!res)
        return res.err();
      *stmt = std::move(*res);
    }
    return {};
  }

  domain::error create_schema() {
    auto tx = transaction::begin(db, tx_mode::immediate);
    if (!tx)
      return tx.err();
    // Re-read under the write lock: another writer may have won the race.
    auto version = db.query_int64("PRAGMA user_version");
    if (!version)
      return version.err();
    auto v = *version;
    if (v > ledger_schema_version)
      return storage_error("ledger schema version " + std::to_string(v)
                           + ", expected "
                           + std::to_string(ledger_schema_version));
    // Every step in order, all in this transaction: a failed migration
    // leaves the database as it was.
    if (v == 0) {
      if (auto err = db.exec(schema_v1))
        return err;
      v = 1;
    }
    if (v == 1) {
      if (auto err = db.exec(migrate_v1_to_v2))
        return err;
      v = 2;
    }
    if (v != ledger_schema_version) // e.g. a negative user_version
      return storage_error("ledger schema version " + std::to_string(*version)
                           + ", expected "
                           + std::to_string(ledger_schema_version));
    return tx->commit();
  }

  /// The statement of `stmts` that inserts `rows` rows, prepared from
  /// `make_sql(rows)` on first use.
  template <size_t N>
  domain::outcome<statement*>
  multi_row(std::array<statement, N>& stmts, size_t rows,
            std::string (*make_sql)(size_t)) {
    auto& stmt = stmts[rows - 1];
    if (!stmt.is_valid()) {
      auto prepared = db.prepare(make_sql(rows));
      if (!prepared)
        return prepared.err();
      stmt = std::move(*prepared);
    }
    return &stmt;
  }

  /// The requests' warnings as JSON for one statement: bound without a
  /// copy, so they must live until the statement has run.
  std::vector<std::string> warnings_json;

  /// Inserts requests [first, first + rows) of `xs` in one statement.
  domain::error write_requests(const std::vector<domain::request_record>& xs,
                               size_t first, size_t rows) {
    auto stmt = multi_row(insert_requests, rows, insert_requests_sql);
    if (!stmt)
      return stmt.err();
    // Before the guard: the statement refers to them until the reset.
    warnings_json.resize(rows);
    for (size_t i = 0; i < rows; ++i)
      warnings_json[i] = warnings_to_json(xs[first + i].warnings);
    auto guard = (*stmt)->reset_on_exit();
    binder b{**stmt};
    for (size_t i = 0; i < rows; ++i) {
      auto& x = xs[first + i];
      b(x.request_id)(x.ts_us)(x.method)(x.path)(x.route)(x.status)(
        x.blocked_by)(x.http_status)(x.error)(x.latency_us)(x.question)(
        x.llm_calls)(x.tokens)(x.cost_usd)(warnings_json[i]);
    }
    return b.run();
  }

  /// Inserts model calls [first, first + rows) of `xs` in one statement.
  domain::error write_llm_calls(const std::vector<domain::llm_call_record>& xs,
                                size_t first, size_t rows) {
    auto stmt = multi_row(insert_llm_calls, rows, insert_llm_calls_sql);
    if (!stmt)
      return stmt.err();
    auto guard = (*stmt)->reset_on_exit();
    binder b{**stmt};
    for (size_t i = 0; i < rows; ++i) {
      auto& x = xs[first + i];
      b(x.request_id)(x.ts_us)(x.prompt)(x.prompt_version)(x.provider)(
        x.model)(x.attempts)(x.retries)(x.fallback_used)(x.outcome)(
        x.tokens_in)(x.tokens_out)(x.tokens_estimated)(x.cost_usd)(
        x.latency_us);
    }
    return b.run();
  }

  /// Inserts steps [first, first + rows) of `x` with ord = ord0 + seq.
  /// `clash` tells a primary key conflict (the id already has rows with
  /// those ords) from other failures; either way the statement changed
  /// nothing and the transaction stays open.
  domain::error insert_steps(statement& stmt, const domain::trace_record& x,
                             int64_t ord0, size_t first, size_t rows,
                             bool& clash) {
    auto guard = stmt.reset_on_exit();
    binder b{stmt};
    b(x.request_id)(x.ts_us)(ord0);
    for (size_t seq = first; seq < first + rows; ++seq) {
      const auto& step = x.steps[seq];
      b(static_cast<int64_t>(seq))(domain::to_string(step.step))(
        step.outcome)(step.micros);
    }
    auto err = b.run();
    // Read before the guard's reset.
    clash = err && db.last_error_code() == SQLITE_CONSTRAINT_PRIMARYKEY;
    return err;
  }

  domain::outcome<int64_t> next_ord(const std::string& request_id) {
    auto guard = next_trace_ord.reset_on_exit();
    next_trace_ord.bind_text(1, request_id);
    auto res = next_trace_ord.step();
    if (!res)
      return res.err();
    if (*res != step_result::row)
      return storage_error("next ord query returned no row");
    return next_trace_ord.column_int64(0);
  }

  domain::error write_trace(const domain::trace_record& x) {
    // A request id is nearly always new, so its rows take ord = seq without
    // a lookup. When a client reused the id, the insert clashes with the
    // earlier rows and is redone after them.
    int64_t ord0 = 0;
    bool looked_up = false;
    size_t seq = 0;
    while (seq < x.steps.size()) {
      auto rows = std::min(trace_rows_per_insert, x.steps.size() - seq);
      auto prepared = multi_row(insert_trace_steps, rows,
                                insert_trace_steps_sql);
      if (!prepared)
        return prepared.err();
      auto& stmt = **prepared;
      bool clash = false;
      auto err = insert_steps(stmt, x, ord0, seq, rows, clash);
      if (err && clash && !looked_up) {
        looked_up = true;
        auto next = next_ord(x.request_id);
        if (!next)
          return next.err();
        ord0 = *next - static_cast<int64_t>(seq);
        err = insert_steps(stmt, x, ord0, seq, rows, clash);
      }
      if (err)
        return err;
      seq += rows;
    }
    return {};
  }

  domain::error write_sql_audit(const domain::sql_audit_record& x) {
    auto guard = insert_sql_audit.reset_on_exit();
    return binder{insert_sql_audit}(x.request_id)(x.ts_us)(x.sql)(x.verdict)(
             x.layer)(x.reason)(x.rows)(x.latency_us)
      .run();
  }
};

// -- ledger_store -------------------------------------------------------------

namespace {

/// Calls `write(xs, first, rows)` for consecutive chunks of at most
/// `rows_per_insert` rows; stops at the first error.
template <class T, class Write>
domain::error in_chunks(const std::vector<T>& xs, Write write) {
  for (size_t i = 0; i < xs.size(); i += rows_per_insert)
    if (auto err = write(xs, i, std::min(rows_per_insert, xs.size() - i)))
      return err;
  return {};
}

/// Binds ?2 and, when the query has it, ?3 of the /runs queries: a
/// request's window, or NULL for every row of the id. A bind error is
/// reported by the next step().
void bind_window(statement& q, std::optional<int64_t> from_us,
                 std::optional<int64_t> to_us) {
  bool end = q.parameter_count() >= 3;
  if (from_us && to_us) {
    (void) q.bind_int64(2, *from_us);
    if (end)
      (void) q.bind_int64(3, *to_us);
  } else {
    (void) q.bind_null(2);
    if (end)
      (void) q.bind_null(3);
  }
}

} // namespace

ledger_store::ledger_store(std::unique_ptr<impl> ptr) noexcept
  : impl_(std::move(ptr)) {
  // nop
}

ledger_store::ledger_store(ledger_store&&) noexcept = default;

ledger_store& ledger_store::operator=(ledger_store&&) noexcept = default;

ledger_store::~ledger_store() = default;

domain::outcome<ledger_store> ledger_store::open(const std::string& path,
                                                 bool writer) {
  // NOMUTEX: a ledger_store is used by one thread at a time (see the
  // header), so the connection's own mutex only costs a lock per API call.
  auto flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
  if (writer) {
    flags |= SQLITE_OPEN_CREATE;
    if (plain_file(path)) {
      auto parent = std::filesystem::path{path}.parent_path();
      std::error_code ec;
      if (!parent.empty())
        std::filesystem::create_directories(parent, ec);
      if (ec)
        return storage_error(parent.string() + ": " + ec.message());
    }
  }
  auto db = database::open(path, flags);
  if (!db)
    return db.err();
  auto ptr = std::make_unique<impl>();
  ptr->db = std::move(*db);
  auto& conn = ptr->db;
  if (auto err = conn.busy_timeout(std::chrono::seconds{5}))
    return err;
  if (writer) {
    auto mode = conn.query_text("PRAGMA journal_mode = WAL");
    if (!mode)
      return mode.err();
    if (*mode != "wal" && *mode != "memory")
      return storage_error(path + ": cannot use WAL (journal mode " + *mode
                           + ")");
    if (auto err = conn.exec("PRAGMA synchronous = NORMAL"))
      return err;
    // The ledger takes many small appends: a larger page cache saves
    // re-reading index pages, and a larger WAL means fewer checkpoints
    // (each one writes back and fsyncs the database file).
    if (auto err = conn.exec("PRAGMA cache_size = -32768"))
      return err;
    if (auto err = conn.exec("PRAGMA wal_autocheckpoint = 8192"))
      return err;
    auto version = conn.query_int64("PRAGMA user_version");
    if (!version)
      return version.err();
    if (*version != ledger_schema_version)
      if (auto err = ptr->create_schema())
        return err;
  } else {
    if (auto err = conn.exec("PRAGMA query_only = ON"))
      return err;
    auto version = conn.query_int64("PRAGMA user_version");
    if (!version)
      return version.err();
    if (*version != ledger_schema_version)
      return storage_error(path + ": ledger schema version "
                           + std::to_string(*version) + ", expected "
                           + std::to_string(ledger_schema_version));
  }
  if (auto err = ptr->prepare_all())
    return err;
  if (writer) {
    auto stmts = tx_statements::prepare(conn, tx_mode::immediate);
    if (!stmts)
      return stmts.err();
    ptr->write_tx = std::move(*stmts);
  }
  return ledger_store{std::move(ptr)};
}

domain::error ledger_store::write(const ledger_batch& batch) {
  if (batch.empty())
    return {};
  auto& m = *impl_;
  auto tx = m.write_tx.is_valid() ? transaction::begin(m.db, m.write_tx)
                                  : transaction::begin(m.db);
  if (!tx)
    return tx.err();
  if (auto err = in_chunks(batch.requests, [&m](auto& xs, size_t i, size_t n) {
        return m.write_requests(xs, i, n);
      }))
    return err;
  if (auto err = in_chunks(batch.llm_calls, [&m](auto& xs, size_t i, size_t n) {
        return m.write_llm_calls(xs, i, n);
      }))
    return err;
  for (auto& x : batch.traces)
    if (auto err = m.write_trace(x))
      return err;
  for (auto& x : batch.sql_audits)
    if (auto err = m.write_sql_audit(x))
      return err;
  return tx->commit();
}

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
      if (status == "error" || http >= 500)
        ++errors;
      if (http >= 400 && http <= 499)
        ++client_errors;
      latencies_ms.push_back(static_cast<double>(row.column_int64(3))
                             / 1000.0);
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
