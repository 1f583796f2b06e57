// The eval gate: asks every golden question through the service, computes
// the metrics, checks them against the profile's thresholds and reports.

#include "data/clock.hpp"
#include "eval/gate.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <ostream>
#include <sstream>

#include <boost/json.hpp>

#include "actors/app.hpp"
#include "data/sqlite.hpp"
#include "domain/build_info.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"

namespace candor::eval {

namespace json = boost::json;

namespace {

domain::error bad_thresholds(const std::string& what) {
  return domain::make_error(domain::ec::config_invalid, "thresholds: " + what);
}

std::string utc_now() {
  auto t
    = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

domain::cell cell_of(const data::statement& st, int col) {
  domain::cell c;
  switch (st.column_type(col)) {
    case SQLITE_INTEGER:
      c.kind = domain::cell::integer;
      c.i = st.column_int64(col);
      break;
    case SQLITE_FLOAT:
      c.kind = domain::cell::real;
      c.r = st.column_double(col);
      break;
    case SQLITE_NULL: break;
    case SQLITE_BLOB:
      c.kind = domain::cell::blob;
      c.s = st.column_text(col);
      break;
    default: c.kind = domain::cell::text; c.s = st.column_text(col);
  }
  return c;
}

observed observe(const domain::ask_state& st) {
  observed o;
  o.route = st.route;
  o.status = st.status;
  o.blocked_by = st.blocked_by;
  for (auto& p : st.passages)
    o.retrieved.push_back(p.chunk_id);
  for (auto& c : st.citations)
    o.cited.push_back(c.chunk_id);
  o.has_sql = st.has_sql;
  o.rows = st.sql.rows;
  o.row_count = st.sql.row_count;
  o.llm_calls = st.usage.calls;
  return o;
}

} // namespace

domain::outcome<domain::ask_state>
ask_as_eval(actors::app& service, std::string question, std::string path) {
  domain::ask_request req;
  req.request_id = data::new_request_id();
  req.question = std::move(question);
  req.received_us = data::wall_us();
  req.method = "EVAL"; // the request row is written by the service
  req.path = std::move(path);
  return service.ask_sync(std::move(req));
}

namespace {

/// Asks one question like `candor ask` does, and records it.
observed ask_one(actors::app& service, const golden_item& it) {
  auto started = std::chrono::steady_clock::now();
  auto result = ask_as_eval(service, it.question, "eval");
  auto elapsed = std::chrono::steady_clock::now() - started;
  observed o;
  if (result) {
    o = observe(*result);
  } else {
    o.failed = true;
    o.error = std::string{domain::to_string(result.err().code)} + ": "
              + result.err().message;
  }
  o.latency_ms = std::chrono::duration<double, std::milli>(elapsed).count();
  return o;
}

std::vector<route_latency>
latency_by_route(const std::vector<observed>& outcomes) {
  std::vector<route_latency> out;
  using domain::route_kind;
  for (auto r : {route_kind::docs, route_kind::data, route_kind::out_of_scope,
                 route_kind::none}) {
    std::vector<double> ms;
    for (auto& o : outcomes)
      if (!o.failed && o.route == r)
        ms.push_back(o.latency_ms);
    if (ms.empty())
      continue;
    route_latency l;
    l.route = r == route_kind::none ? "none (blocked before routing)"
                                    : std::string{domain::to_string(r)};
    l.items = ms.size();
    l.p50_ms = percentile(ms, 50);
    l.p95_ms = percentile(ms, 95);
    out.push_back(std::move(l));
  }
  return out;
}

} // namespace

// -- thresholds ---------------------------------------------------------------

const std::vector<std::string>& metric_keys() {
  static const std::vector<std::string> keys{
    "routeAccuracy",      "recallAt3",        "mrr",
    "refusalAccuracy",    "citationValidity", "sqlExecutionAccuracy",
    "injectionBlockRate", "falseBlockRate"};
  return keys;
}

domain::outcome<threshold_map> parse_thresholds(std::string_view text,
                                                std::string_view profile) {
  boost::system::error_code jec;
  auto doc = json::parse(text, jec);
  if (jec)
    return bad_thresholds("not valid JSON (" + jec.message() + ")");
  if (auto dup = domain::duplicate_member(text))
    return bad_thresholds("'" + *dup + "' appears more than once");
  if (!doc.is_object())
    return bad_thresholds("expected an object");
  auto* p = doc.as_object().if_contains(profile);
  if (!p || !p->is_object())
    return bad_thresholds("no object for the profile '" + std::string{profile}
                          + "'");
  threshold_map out;
  auto& keys = metric_keys();
  for (auto& [key, v] : p->as_object()) {
    auto name = std::string{key};
    auto where = std::string{profile} + "." + name;
    if (std::find(keys.begin(), keys.end(), name) == keys.end())
      return bad_thresholds("unknown metric '" + where + "'");
    if (!v.is_object())
      return bad_thresholds(where + " must be an object");
    auto& o = v.as_object();
    auto* lo = o.if_contains("min");
    auto* hi = o.if_contains("max");
    if ((lo == nullptr) == (hi == nullptr))
      return bad_thresholds(where + " needs exactly one of min and max");
    auto* b = lo ? lo : hi;
    if (!b->is_number())
      return bad_thresholds(where + ": the bound must be a number");
    threshold t;
    t.bound = b->to_number<double>();
    t.is_min = lo != nullptr;
    if (t.bound < 0 || t.bound > 1)
      return bad_thresholds(where + ": the bound must be within 0..1");
    out[name] = t;
  }
  return out;
}

domain::outcome<threshold_map> load_thresholds(const std::string& path,
                                               std::string_view profile) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return bad_thresholds("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_thresholds(ss.str(), profile);
}

std::string default_thresholds_path() {
  return std::string{domain::source_dir()} + "/eval/thresholds.json";
}

domain::outcome<boost::json::object>
read_json_object(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return domain::make_error(domain::ec::config_invalid,
                              "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  boost::system::error_code ec;
  auto v = boost::json::parse(ss.str(), ec);
  if (ec)
    return domain::make_error(domain::ec::config_invalid,
                              path + ": not valid JSON: " + ec.message());
  if (!v.is_object())
    return domain::make_error(domain::ec::config_invalid,
                              path + ": not a JSON object");
  return std::move(v.as_object());
}

std::vector<gated_metric> apply_thresholds(const std::vector<metric>& ms,
                                           const threshold_map& bounds) {
  std::vector<gated_metric> out;
  for (auto& m : ms) {
    gated_metric g;
    g.m = m;
    if (auto i = bounds.find(m.key); i != bounds.end()) {
      g.bound = i->second;
      if (m.total > 0)
        g.pass = i->second.is_min ? m.value >= i->second.bound - 1e-12
                                  : m.value <= i->second.bound + 1e-12;
    }
    out.push_back(std::move(g));
  }
  return out;
}

bool gate_report::passed() const {
  for (auto& g : metrics)
    if (!g.pass)
      return false;
  return true;
}

// -- running ------------------------------------------------------------------

domain::outcome<std::vector<result_row>>
run_reference_sql(const std::string& db_path, const std::string& sql,
                  size_t max_rows) {
  auto db
    = data::database::open(db_path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  if (!db)
    return db.err();
  auto st = db->prepare(sql);
  if (!st)
    return st.err();
  if (!st->read_only())
    return domain::make_error(domain::ec::invalid_request,
                              "reference SQL must only read");
  std::vector<result_row> rows;
  bool too_many = false;
  auto err = data::for_each_row(*st, [&](data::statement& s) {
    if (rows.size() >= max_rows) {
      too_many = true;
      return;
    }
    result_row row;
    for (int c = 0; c < s.column_count(); ++c)
      row.push_back(cell_of(s, c));
    rows.push_back(std::move(row));
  });
  if (err)
    return err;
  if (too_many)
    return domain::make_error(domain::ec::invalid_request,
                              "reference SQL returns more than "
                                + std::to_string(max_rows) + " rows");
  return rows;
}

domain::outcome<gate_report>
run_gate(actors::app& service, const std::vector<const golden_item*>& items,
         const gate_options& opts, const threshold_map& bounds,
         const std::string& sales_db, std::ostream& progress) {
  gate_report r;
  r.profile = opts.live ? "live" : "scripted";
  auto& info = service.info();
  r.provider = info.provider;
  r.models = info.models;
  r.embedder = info.embedder;
  r.guardrail_mode = info.guardrail_mode;
  r.split = opts.split;
  r.date = utc_now();
  r.items = items;
  if (opts.limit > 0 && r.items.size() > opts.limit)
    r.items.resize(opts.limit);
  auto started = std::chrono::steady_clock::now();
  size_t n = 0;
  for (auto* it : r.items) {
    ++n;
    progress << "\reval: " << n << "/" << r.items.size() << " " << it->id << " "
             << it->category << "                    " << std::flush;
    auto o = ask_one(service, *it);
    if (!it->reference_sql.empty()) {
      auto rows = run_reference_sql(sales_db, it->reference_sql);
      if (rows)
        o.reference_rows = std::move(*rows);
      else
        o.reference_error = rows.err().message;
    }
    r.outcomes.push_back(std::move(o));
  }
  progress << "\n";
  r.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
        .count();
  metric_options mo;
  mo.live = opts.live;
  r.metrics
    = apply_thresholds(compute_metrics(r.items, r.outcomes, mo), bounds);
  r.latency = latency_by_route(r.outcomes);
  return r;
}

} // namespace candor::eval
