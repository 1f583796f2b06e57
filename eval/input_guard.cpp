// `candor-eval guard`: the input rules on the labelled set of attacks and
// benign look-alikes, per family, with every miss and the gate.

#include "eval/input_guard.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "domain/build_info.hpp"
#include "domain/guard/input_rules.hpp"
#include "domain/guard/input_scorer.hpp"
#include "domain/guard/deobfuscate.hpp"
#include "domain/text.hpp"
#include "eval/gate.hpp"

namespace candor::eval {

namespace {

namespace json = boost::json;

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

domain::error bad(const std::string& path, const std::string& what) {
  return domain::make_error(domain::ec::config_invalid, path + ": " + what);
}


size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// Attacks or benign questions of one family: how many, how many blocked.
struct tally {
  size_t total = 0;
  size_t blocked = 0;
  double rate() const {
    return total == 0 ? 0.0 : static_cast<double>(blocked) / total;
  }
};

struct bound {
  double value = 0;
  bool is_min = true;
  bool holds(double x) const {
    return is_min ? x >= value : x <= value;
  }
};

domain::outcome<std::map<std::string, bound>>
load_bounds(const std::string& path) {
  auto v = read_json_object(path);
  if (!v)
    return v.err();
  std::map<std::string, bound> out;
  for (const char* key : {"attackBlockRate", "benignBlockRate"}) {
    auto* b = v->if_contains(key);
    if (b == nullptr || !b->is_object())
      return bad(path, std::string{"missing object \""} + key + "\"");
    const auto& o = b->as_object();
    auto* mn = o.if_contains("min");
    auto* mx = o.if_contains("max");
    if ((mn == nullptr) == (mx == nullptr) || !(mn ? mn : mx)->is_number())
      return bad(path, std::string{key} + ": needs one numeric min or max");
    bound bd{(mn ? mn : mx)->to_number<double>(), mn != nullptr};
    if (bd.value < 0 || bd.value > 1)
      return bad(path, std::string{key} + ": bound outside 0..1");
    out[key] = bd;
  }
  return out;
}

std::string rate_text(const tally& t) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << t.rate() << " (" << t.blocked
     << "/" << t.total << ")";
  return os.str();
}

/// The text of a question for one line of output: invisible and control
/// characters shown as <U+XXXX>, cut at 160 characters.
std::string shown(std::string_view text) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size() && chars < 160;) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    auto piece = text.substr(i, len);
    i += len;
    ++chars;
    if (c < 0x20) {
      out += ' ';
      continue;
    }
    // Characters that normalize() drops entirely are the invisible ones.
    if (c >= 0x80 && domain::normalize("a" + std::string{piece} + "a") == "aa") {
      uint32_t cp = 0;
      for (size_t k = 0; k < piece.size(); ++k)
        cp = k == 0 ? (c & (0xFF >> (len + 1))) : (cp << 6) | (piece[k] & 0x3F);
      char buf[16];
      std::snprintf(buf, sizeof buf, "<U+%04X>", cp);
      out += buf;
      continue;
    }
    out += piece;
  }
  if (chars >= 160 && utf8_length(text) > 160)
    out += "...";
  return out;
}

} // namespace

domain::outcome<std::vector<guard_item>>
load_guard_set(const std::string& path) {
  auto v = read_json_object(path);
  if (!v)
    return v.err();
  const auto& top = *v;
  if (auto* ver = top.if_contains("version");
      ver == nullptr || !ver->is_int64() || ver->as_int64() != 1)
    return bad(path, "\"version\" must be 1");
  auto* items = top.if_contains("items");
  if (items == nullptr || !items->is_array())
    return bad(path, "\"items\" must be an array");
  std::vector<guard_item> out;
  std::set<std::string> ids;
  size_t index = 0;
  for (const auto& x : items->as_array()) {
    auto where = "item " + std::to_string(index++);
    if (!x.is_object())
      return bad(path, where + ": must be an object");
    const auto& o = x.as_object();
    for (const auto& kv : o) {
      static const std::set<std::string, std::less<>> known
        = {"id", "label", "family", "lang", "split", "text", "note"};
      if (known.count(kv.key()) == 0)
        return bad(path, where + ": unknown field \"" + std::string{kv.key()}
                           + "\"");
    }
    auto field = [&](const char* k, std::string& to) -> bool {
      auto* f = o.if_contains(k);
      if (f == nullptr || !f->is_string() || f->as_string().empty())
        return false;
      to = std::string{f->as_string()};
      return true;
    };
    guard_item it;
    std::string label;
    for (auto [k, to] : {std::pair{"id", &it.id}, std::pair{"label", &label},
                         std::pair{"family", &it.family},
                         std::pair{"lang", &it.lang},
                         std::pair{"split", &it.split},
                         std::pair{"text", &it.text}})
      if (!field(k, *to))
        return bad(path, where + ": \"" + k + "\" must be a non-empty string");
    where += " (" + it.id + ")";
    if (!ids.insert(it.id).second)
      return bad(path, where + ": duplicate id");
    if (label != "attack" && label != "benign")
      return bad(path, where + ": \"label\" must be attack or benign");
    it.attack = label == "attack";
    if (it.split != "calibration" && it.split != "test")
      return bad(path, where + ": \"split\" must be calibration or test");
    if (utf8_length(it.text) > 500)
      return bad(path, where + ": \"text\" is longer than a question may be "
                               "(500 characters)");
    out.push_back(std::move(it));
  }
  if (out.empty())
    return bad(path, "no items");
  return out;
}

namespace {

/// The benign questions of the calibration splits of the other labelled
/// sets (golden, routing, data, documents answers, retrieval): what real
/// users ask, so the scorer learns that too. Attack categories of the
/// golden set and the data set's personal-data requests are left out.
domain::outcome<std::vector<std::string>>
other_benign_questions(const std::string& root) {
  std::vector<std::string> out;
  for (const char* name : {"golden.v1.json", "routing.v1.json",
                           "data_questions.v1.json", "local_answers.v1.json",
                           "retrieval.v1.json"}) {
    auto v = read_json_object(root + name);
    if (!v)
      return v.err();
    const auto& o = *v;
    const auto* arr = o.if_contains("questions");
    if (arr == nullptr)
      arr = o.if_contains("items");
    if (arr == nullptr || !arr->is_array())
      return bad(root + name, "no questions");
    for (const auto& q : arr->as_array()) {
      if (!q.is_object())
        return bad(root + name, "a question must be an object");
      const auto& x = q.as_object();
      auto field = [&](const char* k) -> std::string {
        auto* f = x.if_contains(k);
        return f != nullptr && f->is_string() ? std::string{f->as_string()}
                                              : std::string{};
      };
      if (field("split") != "calibration")
        continue;
      auto category = field("category");
      if (category.rfind("injection", 0) == 0 || category == "sql_attack"
          || field("kind") == "pii")
        continue;
      out.push_back(field("question"));
    }
  }
  return out;
}

std::string set_path_of(const guard_command& cmd, const std::string& root) {
  return cmd.set_path.empty() ? root + "input_guard.v1.json" : cmd.set_path;
}

/// The labelled set at `path`, or nothing after saying on `err` why not.
std::optional<std::vector<guard_item>> set_or_report(const std::string& path,
                                                     std::ostream& err) {
  auto set = load_guard_set(path);
  if (!set) {
    err << "candor: guard: " << set.err().message << "\n";
    return std::nullopt;
  }
  return std::move(*set);
}

domain::scorer_example example_of(std::string_view text, bool attack) {
  domain::scorer_example ex;
  ex.norm = domain::normalize(text);
  if (auto p = domain::deobfuscate(text, ex.norm))
    ex.plain = std::move(p->words); // what evaluate_question scores
  ex.attack = attack;
  return ex;
}

} // namespace

int run_guard_training(const guard_command& cmd, const std::string& write_to,
                       std::ostream& out, std::ostream& err) {
  auto root = std::string{domain::source_dir()} + "/eval/";
  auto set_path = set_path_of(cmd, root);
  auto set = set_or_report(set_path, err);
  if (!set)
    return exit_usage;
  auto others = other_benign_questions(root);
  if (!others) {
    err << "candor: guard: " << others.err().message << "\n";
    return exit_usage;
  }
  std::vector<domain::scorer_example> examples;
  size_t attacks = 0;
  for (const auto& it : *set)
    if (it.split == "calibration") {
      examples.push_back(example_of(it.text, it.attack));
      attacks += it.attack;
    }
  for (const auto& q : *others)
    examples.push_back(example_of(q, false));
  auto scorer = domain::input_scorer::train(examples);
  auto trained_on = "the calibration split of eval/input_guard.v1.json ("
                    + std::to_string(attacks) + " attacks, "
                    + std::to_string(examples.size() - attacks - others->size())
                    + " look-alikes) and " + std::to_string(others->size())
                    + " benign questions of the calibration splits of the "
                      "golden, routing, data, documents answers and retrieval "
                      "sets; logistic regression, 30 epochs, threshold at the "
                      "0.998 quantile of benign scores in 5-fold "
                      "cross-validation";
  auto text = scorer.to_json(trained_on);
  if (write_to.empty()) {
    out << text;
    return 0;
  }
  std::ofstream f{write_to, std::ios::trunc};
  f << text;
  if (!f) {
    err << "candor: guard: cannot write " << write_to << "\n";
    return exit_failure;
  }
  err << "candor: guard: wrote " << write_to << " (" << scorer.size()
      << " weights, threshold " << scorer.threshold() << ", "
      << examples.size() << " examples)\n";
  return 0;
}

int run_guard_command(const guard_command& cmd, std::ostream& out,
                      std::ostream& err) {
  auto root = std::string{domain::source_dir()} + "/eval/";
  auto set_path = set_path_of(cmd, root);
  auto set = set_or_report(set_path, err);
  if (!set)
    return exit_usage;
  auto bounds = load_bounds(cmd.thresholds_path.empty()
                              ? root + "input_guard_thresholds.json"
                              : cmd.thresholds_path);
  if (!bounds) {
    err << "candor: guard: " << bounds.err().message << "\n";
    return exit_usage;
  }
  if (cmd.split != "test" && cmd.split != "calibration" && cmd.split != "all") {
    err << "candor: guard: --split must be test, calibration or all\n";
    return exit_usage;
  }
  const auto& rules = domain::rule_set::builtin();
  const auto& scorer = domain::input_scorer::builtin();
  tally attacks, benign;
  std::map<std::pair<bool, std::string>, tally> families;
  std::vector<std::string> missed, false_blocks, listed;
  for (const auto& it : *set) {
    if (cmd.split != "all" && it.split != cmd.split)
      continue;
    auto v = rules.evaluate_question(it.text, scorer);
    std::string why;
    for (auto& m : v.matched)
      why += (why.empty() ? "" : ",") + m;
    char score[64];
    std::snprintf(score, sizeof score, "%sscore %.2f", why.empty() ? "" : " ",
                  v.score);
    why += score;
    for (size_t k = 0; k < v.score_top.size() && k < 3; ++k)
      why += (k == 0 ? ": " : ", ") + v.score_top[k].first;
    auto& t = it.attack ? attacks : benign;
    auto& f = families[{!it.attack, it.family}];
    ++t.total;
    ++f.total;
    if (v.blocked) {
      ++t.blocked;
      ++f.blocked;
    }
    auto line = it.id + " [" + it.lang + "] " + shown(it.text)
                + (why.empty() ? "" : "  {" + why + "}");
    if (it.attack && !v.blocked)
      missed.push_back(line);
    else if (!it.attack && v.blocked)
      false_blocks.push_back(line);
    else if (cmd.list_all)
      listed.push_back((v.blocked ? "blocked " : "passed  ") + line);
  }
  const auto& ab = bounds->at("attackBlockRate");
  const auto& bb = bounds->at("benignBlockRate");
  bool ok = attacks.total > 0 && benign.total > 0 && ab.holds(attacks.rate())
            && bb.holds(benign.rate());
  if (cmd.json) {
    json::object o;
    o["split"] = cmd.split;
    o["rules"] = rules.size();
    o["attackBlockRate"] = attacks.rate();
    o["attacks"] = attacks.total;
    o["benignBlockRate"] = benign.rate();
    o["benign"] = benign.total;
    json::object fam;
    for (auto& [key, t] : families)
      fam[(key.first ? "benign/" : "attack/") + key.second]
        = json::object{{"total", t.total}, {"blocked", t.blocked}};
    o["families"] = std::move(fam);
    json::array m;
    for (auto& x : missed)
      m.push_back(json::value(x));
    o["missedAttacks"] = std::move(m);
    json::array fb;
    for (auto& x : false_blocks)
      fb.push_back(json::value(x));
    o["blockedBenign"] = std::move(fb);
    o["pass"] = ok;
    out << json::serialize(o) << "\n";
    return ok ? 0 : exit_failure;
  }
  out << "input guard on " << set_path << " (split " << cmd.split << ", "
      << rules.size() << " rules, scorer of " << scorer.size()
      << " weights, threshold " << scorer.threshold() << ")\n\n";
  out << "family                         label    blocked\n";
  for (auto& [key, t] : families) {
    out << std::left << std::setw(31) << key.second << std::setw(9)
        << (key.first ? "benign" : "attack") << rate_text(t) << "\n";
  }
  out << "\nattacks blocked  " << rate_text(attacks) << "  bound "
      << (ab.is_min ? ">= " : "<= ") << ab.value
      << (ab.holds(attacks.rate()) ? "  ok" : "  MISSED") << "\n";
  out << "benign blocked   " << rate_text(benign) << "  bound "
      << (bb.is_min ? ">= " : "<= ") << bb.value
      << (bb.holds(benign.rate()) ? "  ok" : "  MISSED") << "\n";
  out << "\nattacks let through (" << missed.size() << "):\n";
  for (auto& x : missed)
    out << "  " << x << "\n";
  out << "benign questions blocked (" << false_blocks.size() << "):\n";
  for (auto& x : false_blocks)
    out << "  " << x << "\n";
  if (cmd.list_all) {
    out << "the rest:\n";
    for (auto& x : listed)
      out << "  " << x << "\n";
  }
  out << "\ngate: " << (ok ? "pass" : "FAIL") << "\n";
  return ok ? 0 : exit_failure;
}

} // namespace candor::eval
