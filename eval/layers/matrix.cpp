// The attack x defence-layer matrix: layer names, the gate over the
// matrix, and its text and JSON renderings.

#include "eval/layers/matrix.hpp"

#include <algorithm>
#include <sstream>

#include <boost/json.hpp>

namespace candor::eval {

namespace {

namespace json = boost::json;

struct layer_names {
  std::string_view name;
  std::string_view heading;
};

constexpr std::array<layer_names, layer_count> names{{
  {"input_rules", "rules"},
  {"input_model", "model"},
  {"sanitizer", "sanit"},
  {"sql_policy", "policy"},
  {"sql_authorizer", "auth"},
  {"sql_connection", "conn"},
  {"sql_executor", "exec"},
  {"output_guard", "output"},
}};

char symbol(cell_kind k) noexcept {
  switch (k) {
    case cell_kind::stopped: return 'S';
    case cell_kind::passed: return '.';
    case cell_kind::not_configured: return 'o';
    case cell_kind::not_applicable: break;
  }
  return '-';
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string pad(std::string_view s, size_t width) {
  std::string out{s};
  if (out.size() < width)
    out.append(width - out.size(), ' ');
  return out;
}

} // namespace

const std::array<layer, layer_count>& all_layers() noexcept {
  static const std::array<layer, layer_count> xs{
    layer::input_rules,  layer::input_model,    layer::sanitizer,
    layer::sql_policy,   layer::sql_authorizer, layer::sql_connection,
    layer::sql_executor, layer::output_guard};
  return xs;
}

std::string_view to_string(layer l) noexcept {
  return names[static_cast<size_t>(l)].name;
}

std::string_view short_name(layer l) noexcept {
  return names[static_cast<size_t>(l)].heading;
}

bool parse_layer(std::string_view name, layer& out) noexcept {
  for (auto l : all_layers())
    if (to_string(l) == name) {
      out = l;
      return true;
    }
  return false;
}

std::string_view to_string(cell_kind k) noexcept {
  switch (k) {
    case cell_kind::not_applicable: return "n/a";
    case cell_kind::not_configured: return "not_configured";
    case cell_kind::stopped: return "stopped";
    case cell_kind::passed: return "passed";
  }
  return "?";
}

size_t attack_row::stopped() const noexcept {
  return static_cast<size_t>(
    std::count_if(cells.begin(), cells.end(),
                  [](const cell& c) { return c.kind == cell_kind::stopped; }));
}

std::vector<std::string> attack_row::stopped_by() const {
  std::vector<std::string> out;
  for (auto l : all_layers())
    if (at(l).kind == cell_kind::stopped)
      out.emplace_back(to_string(l));
  return out;
}

std::array<layer_total, layer_count>
totals(const std::vector<attack_row>& rows) {
  std::array<layer_total, layer_count> t{};
  for (auto& r : rows)
    for (size_t i = 0; i < layer_count; ++i)
      switch (r.cells[i].kind) {
        case cell_kind::stopped: ++t[i].stopped; break;
        case cell_kind::passed: ++t[i].passed; break;
        case cell_kind::not_configured: ++t[i].not_configured; break;
        case cell_kind::not_applicable: ++t[i].not_applicable; break;
      }
  return t;
}

std::vector<gate_failure> check_gate(const std::vector<attack_row>& rows) {
  std::vector<gate_failure> out;
  for (auto& r : rows) {
    auto n = r.stopped();
    if (n == 0)
      out.push_back({r.id, "passes every layer"});
    else if (r.write && n < min_layers_for_writes)
      out.push_back(
        {r.id, "a write stopped by " + std::to_string(n) + " layer (at least "
                 + std::to_string(min_layers_for_writes) + " required)"});
  }
  return out;
}

std::vector<std::string>
expectation_notes(const std::vector<attack_row>& rows) {
  std::vector<std::string> out;
  for (auto& r : rows) {
    auto actual = r.stopped_by();
    std::vector<std::string> missed, extra;
    for (auto& e : r.expected)
      if (std::find(actual.begin(), actual.end(), e) == actual.end())
        missed.push_back(e);
    for (auto& a : actual)
      if (std::find(r.expected.begin(), r.expected.end(), a)
          == r.expected.end())
        extra.push_back(a);
    if (missed.empty() && extra.empty())
      continue;
    std::string line = r.id + ":";
    if (!missed.empty())
      line += " expected " + join(missed) + ", not stopped there;";
    if (!extra.empty())
      line += " also stopped by " + join(extra) + ";";
    line.pop_back();
    out.push_back(std::move(line));
  }
  return out;
}

std::string format_matrix(const std::vector<attack_row>& rows) {
  std::ostringstream out;
  size_t id_width = 6;
  for (auto& r : rows)
    id_width = std::max(id_width, r.id.size());
  out << "attack x defence layer, each layer on its own "
         "(S stopped, . passed, - not applicable, o not configured)\n\n"
      << pad("attack", id_width + 2) << pad("kind", 10) << pad("write", 7);
  for (auto l : all_layers())
    out << pad(short_name(l), 8);
  out << "stops\n";
  for (auto& r : rows) {
    out << pad(r.id, id_width + 2) << pad(to_string(r.kind), 10)
        << pad(r.write ? "yes" : "", 7);
    for (auto l : all_layers())
      out << pad(std::string(1, symbol(r.at(l).kind)), 8);
    out << r.stopped() << "\n";
  }
  out << "\nper layer: stopped / passed (applicable); not configured\n";
  auto t = totals(rows);
  for (auto l : all_layers()) {
    auto& x = t[static_cast<size_t>(l)];
    out << "  " << pad(to_string(l), 16) << x.stopped << " / " << x.passed
        << " (" << x.stopped + x.passed << ")";
    if (x.not_configured > 0)
      out << "; " << x.not_configured << " not configured";
    out << "\n";
  }
  size_t writes = 0, writes_ok = 0;
  for (auto& r : rows)
    if (r.write) {
      ++writes;
      writes_ok += r.stopped() >= min_layers_for_writes ? 1 : 0;
    }
  out << "\n"
      << rows.size() << " attacks; writes stopped by at least "
      << min_layers_for_writes << " layers: " << writes_ok << " / " << writes
      << "\n";
  auto notes = expectation_notes(rows);
  if (!notes.empty()) {
    out << "\ndiffering from the expected layers (not gated):\n";
    for (auto& n : notes)
      out << "  " << n << "\n";
  }
  auto failures = check_gate(rows);
  if (failures.empty()) {
    out << "\ngate: pass (every attack stopped by at least one layer, every "
           "write by at least "
        << min_layers_for_writes << ")\n";
  } else {
    out << "\ngate: FAIL\n";
    for (auto& f : failures)
      out << "  " << f.id << ": " << f.reason << "\n";
  }
  return out.str();
}

json::value to_json(const std::vector<attack_row>& rows) {
  json::array attacks;
  for (auto& r : rows) {
    json::object layers;
    for (auto l : all_layers()) {
      auto& c = r.at(l);
      json::object cell;
      cell["result"] = to_string(c.kind);
      cell["detail"] = c.detail;
      layers[to_string(l)] = std::move(cell);
    }
    json::array stopped_by, expected;
    for (auto& s : r.stopped_by())
      stopped_by.emplace_back(s);
    for (auto& e : r.expected)
      expected.emplace_back(e);
    attacks.push_back(json::object{{"id", r.id},
                                   {"kind", to_string(r.kind)},
                                   {"write", r.write},
                                   {"layers", std::move(layers)},
                                   {"stoppedBy", std::move(stopped_by)},
                                   {"expected", std::move(expected)}});
  }
  json::object per_layer;
  auto t = totals(rows);
  for (auto l : all_layers()) {
    auto& x = t[static_cast<size_t>(l)];
    per_layer[to_string(l)] = json::object{{"stopped", x.stopped},
                                           {"passed", x.passed},
                                           {"notConfigured", x.not_configured},
                                           {"notApplicable", x.not_applicable}};
  }
  json::array notes;
  for (auto& n : expectation_notes(rows))
    notes.emplace_back(n);
  json::array failures;
  auto gate = check_gate(rows);
  for (auto& f : gate)
    failures.push_back(json::object{{"id", f.id}, {"reason", f.reason}});
  return json::object{
    {"attacks", std::move(attacks)},
    {"layers", std::move(per_layer)},
    {"notes", std::move(notes)},
    {"gate",
     json::object{{"pass", gate.empty()}, {"failures", std::move(failures)}}}};
}

} // namespace candor::eval
