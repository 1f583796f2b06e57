// Parsing and compiling the deterministic input rules
// (conf/input_rules.json) and matching text against them.

#include "domain/guard/input_rules.hpp"

#include <algorithm>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <boost/json.hpp>
#include <re2/re2.h>
#include <re2/set.h>

#include "domain/embedded.hpp"
#include "domain/guard/deobfuscate.hpp"
#include "domain/guard/input_scorer.hpp"
#include "domain/text.hpp"

namespace candor::domain {

namespace json = boost::json;

struct compiled_set {
  explicit compiled_set(const RE2::Options& opts)
      : set(opts, RE2::UNANCHORED) {}
  RE2::Set set;
};

std::string_view to_string(severity x) noexcept {
  return x == severity::high ? "high" : "medium";
}

std::string_view to_string(rule_scope x) noexcept {
  switch (x) {
    case rule_scope::input: return "input";
    case rule_scope::document: return "document";
    case rule_scope::both: return "both";
  }
  return "both";
}

namespace {

error invalid(std::string msg) {
  return make_error(ec::config_invalid, "input rules: " + std::move(msg));
}

std::string rule_label(size_t index, std::string_view name) {
  std::string out = "rule " + std::to_string(index);
  if (!name.empty())
    out += " (\"" + std::string{name} + "\")";
  return out;
}

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (char ch : s)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
      return false;
  return true;
}

/// Reads a required non-empty string field; empty result = error set.
std::string string_field(const json::object& obj, std::string_view key,
                         const std::string& label, std::string& err) {
  auto* v = obj.if_contains(key);
  if (v == nullptr) {
    err = label + ": missing field \"" + std::string{key} + "\"";
    return {};
  }
  if (!v->is_string() || v->as_string().empty()) {
    err = label + ": field \"" + std::string{key}
          + "\" must be a non-empty string";
    return {};
  }
  return std::string{v->as_string()};
}

/// RE2's memory budget for one rule and for one set of rules (program and
/// DFA cache). The default 8 MiB is too small for the multilingual rules:
/// a DFA that runs out of cache starts again on every text, which costs
/// little with a caching allocator and a great deal without one (the
/// sanitizer builds: ingesting the documents took 30 times longer).
constexpr int64_t rule_memory = 32 << 20;
constexpr int64_t set_memory = 64 << 20;

bool scope_covers(rule_scope rule, rule_scope asked) {
  return asked == rule_scope::both || rule == rule_scope::both || rule == asked;
}

} // namespace

outcome<rule_set> rule_set::parse(std::string_view text) {
  boost::system::error_code jec;
  auto doc = json::parse(text, jec);
  if (jec)
    return invalid("not valid JSON: " + jec.message());
  if (!doc.is_object())
    return invalid("top level must be an object");
  const auto& top = doc.as_object();
  for (const auto& kv : top)
    if (kv.key() != "version" && kv.key() != "rules")
      return invalid("unknown top-level field \"" + std::string{kv.key()}
                     + "\"");
  if (auto* v = top.if_contains("version");
      v != nullptr && !(v->is_int64() && v->as_int64() == 1))
    return invalid("field \"version\" must be 1");
  auto* rules = top.if_contains("rules");
  if (rules == nullptr || !rules->is_array())
    return invalid("field \"rules\" must be an array");
  rule_set out;
  std::set<std::string, std::less<>> names;
  size_t index = 0;
  for (const auto& item : rules->as_array()) {
    auto label = rule_label(index, {});
    if (!item.is_object())
      return invalid(label + ": must be an object");
    const auto& obj = item.as_object();
    if (auto* n = obj.if_contains("name"); n != nullptr && n->is_string())
      label = rule_label(index, n->as_string());
    ++index;
    for (const auto& kv : obj) {
      static constexpr std::string_view known[]
        = {"name", "severity", "scope", "on", "pattern", "description"};
      if (std::find(std::begin(known), std::end(known), kv.key())
          == std::end(known))
        return invalid(label + ": unknown field \"" + std::string{kv.key()}
                       + "\"");
    }
    std::string err;
    input_rule r;
    r.name = string_field(obj, "name", label, err);
    if (!err.empty())
      return invalid(err);
    if (!valid_name(r.name))
      return invalid(label + ": field \"name\" must match [a-z0-9_]{1,64}");
    if (!names.insert(r.name).second)
      return invalid(label + ": field \"name\": duplicate name");
    r.description = string_field(obj, "description", label, err);
    auto sev = string_field(obj, "severity", label, err);
    auto scope = string_field(obj, "scope", label, err);
    auto on = string_field(obj, "on", label, err);
    r.pattern = string_field(obj, "pattern", label, err);
    if (!err.empty())
      return invalid(err);
    if (sev == "high")
      r.sev = severity::high;
    else if (sev == "medium")
      r.sev = severity::medium;
    else
      return invalid(label + ": field \"severity\": unknown value \"" + sev
                     + "\" (expected high|medium)");
    if (scope == "input")
      r.scope = rule_scope::input;
    else if (scope == "document")
      r.scope = rule_scope::document;
    else if (scope == "both")
      r.scope = rule_scope::both;
    else
      return invalid(label + ": field \"scope\": unknown value \"" + scope
                     + "\" (expected input|document|both)");
    if (on == "raw")
      r.on_raw = true;
    else if (on == "normalized")
      r.on_raw = false;
    else
      return invalid(label + ": field \"on\": unknown value \"" + on
                     + "\" (expected normalized|raw)");
    RE2::Options opts;
    opts.set_log_errors(false);
    opts.set_max_mem(rule_memory);
    auto re = std::make_shared<const RE2>(r.pattern, opts);
    if (!re->ok())
      return invalid(label + ": field \"pattern\": " + re->error());
    if (RE2::PartialMatch("", *re))
      return invalid(label + ": field \"pattern\": matches empty text");
    out.rules_.push_back(std::move(r));
    out.compiled_.push_back(std::move(re));
  }
  out.build_matchers();
  return out;
}

void rule_set::build_matchers() {
  // One pair of sets per scope asked for, holding only the rules that scope
  // runs: the documents' sanitizer never pays for the question-only rules.
  for (auto scope : {rule_scope::input, rule_scope::document,
                     rule_scope::both}) {
    for (bool on_raw : {true, false}) {
      RE2::Options opts;
      opts.set_log_errors(false);
      opts.set_max_mem(set_memory);
      auto cs = std::make_shared<compiled_set>(opts);
      matcher m;
      bool ok = true;
      for (size_t i = 0; i < rules_.size() && ok; ++i) {
        if (rules_[i].on_raw != on_raw || !scope_covers(rules_[i].scope, scope))
          continue;
        ok = cs->set.Add(rules_[i].pattern, nullptr) >= 0;
        m.rule_of.push_back(i);
      }
      if (m.rule_of.empty())
        ; // no rule reads this form of the text
      else if (ok && cs->set.Compile())
        m.set = std::move(cs);
      else
        m.broken = true;
      auto& pair = matchers_[static_cast<size_t>(scope)];
      (on_raw ? pair.raw : pair.norm) = std::move(m);
    }
  }
}

bool rule_set::match_set(const matcher& m, std::string_view text,
                         std::vector<size_t>& hits) const {
  if (m.broken)
    return false;
  if (!m.set)
    return true;
  std::vector<int> found;
  RE2::Set::ErrorInfo info{};
  if (!m.set->set.Match(re2::StringPiece{text.data(), text.size()}, &found,
                        &info))
    return info.kind == RE2::Set::kNoError; // no match, or a real failure
  for (int k : found)
    hits.push_back(m.rule_of[static_cast<size_t>(k)]);
  return true;
}

const rule_set& rule_set::builtin() {
  static const rule_set rules = [] {
    auto parsed = parse(embedded::input_rules());
    if (!parsed) {
      // The embedded rules are tested; a bad file is a build defect that
      // ends the process with this text (the runtime prints it).
      throw std::logic_error("candor: embedded conf/input_rules.json: "
                             + parsed.err().message);
    }
    return std::move(*parsed);
  }();
  return rules;
}

namespace {

/// `raw_text` cut to `rule_set::max_bytes` at a UTF-8 boundary.
std::string_view bounded(std::string_view raw_text) {
  if (raw_text.size() <= rule_set::max_bytes)
    return raw_text;
  size_t cut = rule_set::max_bytes;
  // Do not split a UTF-8 sequence: back off over continuation bytes.
  for (int i = 0;
       i < 3 && cut > 0
       && (static_cast<unsigned char>(raw_text[cut]) & 0xC0) == 0x80;
       ++i)
    --cut;
  return raw_text.substr(0, cut);
}

} // namespace

rule_verdict rule_set::evaluate(std::string_view raw_text,
                                rule_scope scope) const {
  raw_text = bounded(raw_text);
  auto norm = normalize(raw_text);
  // The second canonical text, when the question spells words out, or
  // writes digits and symbols for letters: the rules reading normalized
  // text read both, and a match in either counts.
  auto plain = deobfuscate(raw_text, norm);
  return evaluate_texts(raw_text, norm, plain ? &plain->text : nullptr,
                        plain ? plain->undone : 0u, scope);
}

rule_verdict rule_set::evaluate_question(std::string_view question,
                                         const input_scorer& scorer) const {
  question = bounded(question);
  auto norm = normalize(question);
  auto plain = deobfuscate(question, norm);
  auto v = evaluate_texts(question, norm, plain ? &plain->text : nullptr,
                          plain ? plain->undone : 0u, rule_scope::input);
  auto s = scorer.judge(norm, plain ? std::string_view{plain->words}
                                    : std::string_view{});
  v.score = s.score;
  v.score_top = std::move(s.top);
  if (s.blocked) {
    v.matched.emplace_back("input_scorer");
    ++v.high;
    v.blocked = true;
  }
  return v;
}

rule_verdict rule_set::evaluate_texts(std::string_view raw_text,
                                      std::string_view norm,
                                      const std::string* plain,
                                      unsigned disguise,
                                      rule_scope scope) const {
  const re2::StringPiece raw_piece{raw_text.data(), raw_text.size()};
  const re2::StringPiece norm_piece{norm.data(), norm.size()};
  // One pass per text form over every rule reading it (RE2::Set); a set
  // that is missing or fails at match time (DFA memory) falls back to one
  // match per rule, with the same result.
  std::vector<size_t> hits;
  const auto& m = matchers_[static_cast<size_t>(scope)];
  bool from_sets = match_set(m.raw, raw_text, hits)
                   && match_set(m.norm, norm, hits)
                   && (plain == nullptr || match_set(m.norm, *plain, hits));
  if (!from_sets) {
    hits.clear();
    for (size_t i = 0; i < rules_.size(); ++i) {
      if (!scope_covers(rules_[i].scope, scope))
        continue;
      const auto& re = *compiled_[i];
      if (rules_[i].on_raw ? RE2::PartialMatch(raw_piece, re)
                           : RE2::PartialMatch(norm_piece, re)
                               || (plain != nullptr
                                   && RE2::PartialMatch(*plain, re)))
        hits.push_back(i);
    }
  }
  std::sort(hits.begin(), hits.end());
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
  rule_verdict v;
  v.disguise = disguise;
  for (size_t i : hits) {
    const auto& r = rules_[i];
    if (!scope_covers(r.scope, scope))
      continue;
    v.matched.push_back(r.name);
    if (r.sev == severity::high)
      ++v.high;
    else
      ++v.medium;
  }
  v.blocked = v.high > 0 || v.medium >= 2;
  return v;
}

} // namespace candor::domain
