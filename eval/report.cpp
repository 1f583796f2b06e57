// Rendering of the eval gate's report: Markdown (printed and written) and
// JSON (written, or printed with --json).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "domain/json_text.hpp"
#include "eval/gate.hpp"

namespace candor::eval {

namespace json = boost::json;

namespace {

std::string fixed(double x, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string bound_text(const gated_metric& g) {
  if (!g.bound)
    return "-";
  return (g.bound->is_min ? ">= " : "<= ") + fixed(g.bound->bound, 2);
}

std::string verdict(const gated_metric& g) {
  if (!g.bound)
    return "not gated";
  if (g.m.total == 0)
    return "n/a (no items)";
  return g.pass ? "pass" : "FAIL";
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string outcome_text(const observed& o) {
  if (o.failed)
    return "error: " + o.error;
  std::string s = std::string{domain::to_string(o.route)} + "/"
                  + std::string{domain::to_string(o.status)};
  if (o.blocked_by != domain::layer_kind::none)
    s += " by " + std::string{domain::to_string(o.blocked_by)};
  return s;
}

std::string expected_text(const golden_item& it) {
  std::string s = std::string{domain::to_string(it.expected_route)} + "/"
                  + std::string{domain::to_string(it.expected_status)};
  if (it.blocking_layer != domain::layer_kind::none)
    s += " by " + std::string{domain::to_string(it.blocking_layer)};
  return s;
}

bool as_expected(const golden_item& it, const observed& o) {
  return !o.failed && o.route == it.expected_route
         && o.status == it.expected_status && o.blocked_by == it.blocking_layer;
}

json::value cell_json(const domain::cell& c) {
  switch (c.kind) {
    case domain::cell::integer: return c.i;
    case domain::cell::real: return c.r;
    case domain::cell::null: return nullptr;
    default: return json::value(c.s);
  }
}

json::array rows_json(const std::vector<result_row>& rows, size_t max) {
  json::array out;
  for (size_t i = 0; i < rows.size() && i < max; ++i) {
    json::array row;
    for (auto& c : rows[i])
      row.push_back(cell_json(c));
    out.push_back(std::move(row));
  }
  return out;
}

} // namespace

std::string format_markdown(const gate_report& r) {
  std::ostringstream out;
  out << "# candor eval: " << r.profile << " profile, " << r.split
      << " split\n\n"
      << "| | |\n|---|---|\n"
      << "| profile | " << r.profile << " |\n"
      << "| provider | " << r.provider << " |\n"
      << "| models | " << join(r.models) << " |\n"
      << "| embedder | `" << r.embedder << "` |\n"
      << "| guardrail mode | " << r.guardrail_mode << " |\n"
      << "| golden set | " << r.golden_name << ", " << r.split << " split, "
      << r.items.size() << " items |\n"
      << "| date | " << r.date << " |\n"
      << "| run time | " << fixed(r.seconds, 1) << " s |\n\n";
  out << "| metric | kind | value | threshold | result | counts |\n"
      << "|---|---|---:|---|---|---:|\n";
  for (auto& g : r.metrics) {
    out << "| " << g.m.name << " | " << to_string(g.m.kind) << " | "
        << (g.m.total == 0 ? std::string{"-"} : fixed(g.m.value)) << " | "
        << bound_text(g) << " | " << verdict(g) << " | ";
    if (g.m.key == "mrr")
      out << g.m.hits << " first of " << g.m.total;
    else
      out << g.m.hits << "/" << g.m.total;
    out << " |\n";
  }
  out << "\n| route | items | P50 ms | P95 ms |\n|---|---:|---:|---:|\n";
  for (auto& l : r.latency)
    out << "| " << l.route << " | " << l.items << " | " << fixed(l.p50_ms, 1)
        << " | " << fixed(l.p95_ms, 1) << " |\n";
  out << "\n| category | items | route, status and layer as expected |\n"
      << "|---|---:|---:|\n";
  for (auto& cat : golden_categories()) {
    size_t n = 0, ok = 0;
    for (size_t i = 0; i < r.items.size(); ++i)
      if (r.items[i]->category == cat) {
        ++n;
        ok += as_expected(*r.items[i], r.outcomes[i]);
      }
    if (n > 0)
      out << "| " << cat << " | " << n << " | " << ok << " |\n";
  }
  std::ostringstream misses;
  for (size_t i = 0; i < r.items.size(); ++i)
    if (!as_expected(*r.items[i], r.outcomes[i]))
      misses << "- " << r.items[i]->id << " (" << r.items[i]->category
             << "): expected " << expected_text(*r.items[i]) << ", got "
             << outcome_text(r.outcomes[i]) << "\n";
  if (!misses.str().empty())
    out << "\nNot as expected:\n\n" << misses.str();
  size_t failed = 0;
  std::string names;
  for (auto& g : r.metrics)
    if (!g.pass) {
      ++failed;
      names += (names.empty() ? "" : ", ") + g.m.name;
    }
  out << "\n**" << (failed == 0 ? "PASS" : "FAIL") << "**: ";
  if (failed == 0)
    out << "every gated metric meets its threshold\n";
  else
    out << failed << " metric(s) below threshold: " << names << "\n";
  return out.str();
}

json::value to_json(const gate_report& r) {
  json::object o;
  o["profile"] = r.profile;
  o["provider"] = r.provider;
  json::array models;
  for (auto& m : r.models)
    models.push_back(json::value(m));
  o["models"] = std::move(models);
  o["embedder"] = r.embedder;
  o["guardrailMode"] = r.guardrail_mode;
  o["goldenSet"] = r.golden_name;
  o["split"] = r.split;
  o["date"] = r.date;
  o["seconds"] = r.seconds;
  o["passed"] = r.passed();
  json::array metrics;
  for (auto& g : r.metrics) {
    json::object m{
      {"key", g.m.key},
      {"name", g.m.name},
      {"kind", to_string(g.m.kind)},
      {"value", g.m.total == 0 ? json::value{} : json::value(g.m.value)},
      {"hits", g.m.hits},
      {"total", g.m.total},
      {"pass", g.pass}};
    if (g.bound)
      m[g.bound->is_min ? "min" : "max"] = g.bound->bound;
    metrics.push_back(std::move(m));
  }
  o["metrics"] = std::move(metrics);
  json::array lat;
  for (auto& l : r.latency)
    lat.push_back(json::object{{"route", l.route},
                               {"items", l.items},
                               {"p50Ms", l.p50_ms},
                               {"p95Ms", l.p95_ms}});
  o["latency"] = std::move(lat);
  json::array items;
  for (size_t i = 0; i < r.items.size(); ++i) {
    auto& it = *r.items[i];
    auto& ob = r.outcomes[i];
    json::object x{{"id", it.id},
                   {"category", it.category},
                   {"expected", expected_text(it)},
                   {"observed", outcome_text(ob)},
                   {"asExpected", as_expected(it, ob)},
                   {"latencyMs", ob.latency_ms},
                   {"llmCalls", ob.llm_calls}};
    json::array ret, cit;
    for (auto& c : ob.retrieved)
      ret.push_back(json::value(c));
    for (auto& c : ob.cited)
      cit.push_back(json::value(c));
    x["retrieved"] = std::move(ret);
    x["cited"] = std::move(cit);
    if (ob.has_sql) {
      x["rowCount"] = ob.row_count;
      x["rows"] = rows_json(ob.rows, 5);
    }
    if (ob.reference_rows)
      x["referenceRows"] = rows_json(*ob.reference_rows, 5);
    if (!ob.reference_error.empty())
      x["referenceError"] = ob.reference_error;
    items.push_back(std::move(x));
  }
  o["items"] = std::move(items);
  return o;
}

domain::outcome<std::vector<std::string>>
write_reports(const gate_report& r, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return domain::make_error(domain::ec::storage_failed,
                              "cannot create '" + dir + "': " + ec.message());
  auto base = (fs::path{dir} / (r.profile + "-" + r.split)).string();
  std::vector<std::string> paths{base + ".md", base + ".json"};
  std::string bodies[]
    = {format_markdown(r), domain::json_text(to_json(r)) + "\n"};
  for (size_t i = 0; i < 2; ++i) {
    std::ofstream out{paths[i], std::ios::binary | std::ios::trunc};
    out << bodies[i];
    if (!out)
      return domain::make_error(domain::ec::storage_failed,
                                "cannot write '" + paths[i] + "'");
  }
  return paths;
}

} // namespace candor::eval
