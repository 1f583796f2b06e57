// `candor-eval local`: the local provider through the whole service on the
// routing set and the documents answer set, with the misses and the gate.

#include "eval/local.hpp"
#include "domain/records.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

#include <boost/json.hpp>

#include "domain/build_info.hpp"
#include "eval/gate.hpp"

namespace candor::eval {

namespace {

namespace json = boost::json;

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;


/// Lower case with every run of white space one space, for fact matching.
std::string folded(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool in_split(const json::object& q, const std::string& split) {
  return split == "all" || q.at("split").as_string() == split;
}

std::string str(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : std::string{};
}

struct figure {
  const char* key;
  size_t hits = 0;
  size_t total = 0;
  std::vector<std::string> misses;

  double value() const {
    return total ? static_cast<double>(hits) / static_cast<double>(total) : 0;
  }
};

std::string pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return buf;
}

} // namespace

int run_local_command(actors::app& service, const local_command& cmd,
                      std::ostream& out, std::ostream& err) {
  auto root = std::string{domain::source_dir()} + "/eval/";
  auto routing = read_json_object(cmd.routing_path.empty() ? root + "routing.v1.json"
                                                    : cmd.routing_path);
  auto answers
    = read_json_object(cmd.answers_path.empty() ? root + "local_answers.v1.json"
                                         : cmd.answers_path);
  auto bounds
    = read_json_object(cmd.thresholds_path.empty() ? root + "local_thresholds.json"
                                            : cmd.thresholds_path);
  for (auto* r : {&routing, &answers, &bounds})
    if (!*r) {
      err << "candor: local: " << r->err().message << "\n";
      return exit_usage;
    }
  if (cmd.split != "test" && cmd.split != "calibration" && cmd.split != "all") {
    err << "candor: local: --split must be test, calibration or all\n";
    return exit_usage;
  }
  figure route{"routeAccuracy"}, fact{"factRate"}, refusal{"refusalRate"};
  size_t failed = 0;
  auto started = std::chrono::steady_clock::now();
  for (const auto& v : routing->at("questions").as_array()) {
    const auto& q = v.as_object();
    if (!in_split(q, cmd.split))
      continue;
    auto question = str(q.at("question"));
    auto r = ask_as_eval(service, question, "eval-local");
    ++route.total;
    if (!r) {
      ++failed;
      route.misses.push_back(str(q.at("id")) + " failed: " + r.err().message);
      continue;
    }
    auto got = std::string{domain::to_string(r->route)};
    auto want = str(q.at("route"));
    if (got == want)
      ++route.hits;
    else
      route.misses.push_back(str(q.at("id")) + " " + want + " -> " + got + ": "
                             + question + "  [" + r->route_reason + "]");
  }
  for (const auto& v : answers->at("questions").as_array()) {
    const auto& q = v.as_object();
    if (!in_split(q, cmd.split))
      continue;
    auto question = str(q.at("question"));
    auto r = ask_as_eval(service, question, "eval-local");
    bool answerable = q.at("answerable").as_bool();
    auto& f = answerable ? fact : refusal;
    ++f.total;
    if (!r) {
      ++failed;
      f.misses.push_back(str(q.at("id")) + " failed: " + r.err().message);
      continue;
    }
    bool answered = r->status == domain::status_kind::answered;
    if (!answerable) {
      if (!answered)
        ++refusal.hits;
      else
        refusal.misses.push_back(str(q.at("id")) + " answered: " + question
                                 + "  => " + domain::cut_utf8(r->answer, 120));
      continue;
    }
    auto text = folded(r->answer);
    bool holds = false;
    for (const auto& want : q.at("facts").as_array())
      holds = holds || text.find(folded(str(want))) != std::string::npos;
    if (answered && holds) {
      ++fact.hits;
      continue;
    }
    std::string why
      = answered
          ? "answered without the fact"
          : "not answered (" + std::string{domain::to_string(r->status)} + ")";
    std::string warnings;
    for (const auto& w : r->warnings)
      warnings += (warnings.empty() ? "" : ",") + w;
    fact.misses.push_back(str(q.at("id")) + " " + why + ": " + question
                          + "  want " + json::serialize(q.at("facts"))
                          + (answered ? "  => " + domain::cut_utf8(r->answer, 160)
                                      : "  [" + warnings + "]"));
  }
  auto seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
        .count();

  bool pass = failed == 0;
  json::object report;
  for (auto* f : {&route, &fact, &refusal}) {
    double min = 0;
    if (auto* b = bounds->if_contains(f->key))
      min = b->at("min").to_number<double>();
    bool ok = f->value() >= min;
    bool gates = cmd.gated.empty()
                 || std::find(cmd.gated.begin(), cmd.gated.end(), f->key)
                      != cmd.gated.end();
    if (gates)
      pass = pass && ok;
    if (cmd.json) {
      json::array misses;
      for (const auto& m : f->misses)
        misses.emplace_back(m);
      report[f->key]
        = json::object{{"value", f->value()}, {"hits", f->hits},
                       {"total", f->total},   {"min", min},
                       {"pass", ok},          {"gated", gates},
                       {"misses", std::move(misses)}};
      continue;
    }
    out << f->key << ": " << pct(f->value()) << " (" << f->hits << "/"
        << f->total << ", min " << pct(min) << ") " << (ok ? "pass" : "FAIL")
        << (gates ? "" : " (not gated)") << "\n";
    for (auto m : f->misses) {
      std::replace(m.begin(), m.end(), '\n', ' ');
      out << "  miss " << m << "\n";
    }
  }
  if (cmd.json) {
    report["split"] = cmd.split;
    report["pass"] = pass;
    report["seconds"] = seconds;
    out << json::serialize(report) << "\n";
  } else {
    out << "split " << cmd.split << ", " << pct(seconds) << " s, "
        << (pass ? "gate passed" : "gate FAILED") << "\n";
  }
  return pass ? 0 : exit_failure;
}

} // namespace candor::eval
