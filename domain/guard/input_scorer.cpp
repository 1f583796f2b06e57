// The input guard's linear scorer: features, scoring, the weights file and
// the offline training that makes it.

#include "domain/guard/input_scorer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include <boost/json.hpp>

#include "domain/embedded.hpp"

namespace candor::domain {

namespace json = boost::json;

namespace {

error invalid(std::string msg) {
  return make_error(ec::config_invalid, "input scorer: " + std::move(msg));
}

/// Calls `f(feature)` for each word and word pair of `text` (words
/// separated by single spaces), reusing `key`.
template <class F>
void each_feature(std::string_view text, std::string& key, F&& f) {
  std::string_view prev;
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(' ', start);
    if (end == std::string_view::npos)
      end = text.size();
    auto word = text.substr(start, end - start);
    key.assign("w:");
    key.append(word);
    f(key);
    if (!prev.empty()) {
      key.assign("b:");
      key.append(prev);
      key.push_back(' ');
      key.append(word);
      f(key);
    }
    prev = word;
    start = end + 1;
  }
}

double sigmoid(double z) {
  z = std::clamp(z, -30.0, 30.0);
  return 1.0 / (1.0 + std::exp(-z));
}

/// Fisher-Yates with mt19937's own numbers (std::shuffle's use of the
/// engine is not specified, so its order could differ between libraries).
void shuffle(std::vector<size_t>& xs, std::mt19937& rng) {
  for (size_t i = xs.size(); i > 1; --i)
    std::swap(xs[i - 1], xs[rng() % i]);
}

/// Examples as feature ids.
struct encoded {
  std::vector<std::vector<uint32_t>> features;
  std::vector<bool> attack;
  std::vector<std::string> names;
};

encoded encode(const std::vector<scorer_example>& examples) {
  encoded out;
  std::map<std::string, uint32_t> ids;
  for (const auto& ex : examples) {
    std::vector<uint32_t> fs;
    for (auto& name : scorer_features(ex.norm, ex.plain)) {
      auto [it, added] = ids.emplace(name, static_cast<uint32_t>(ids.size()));
      if (added)
        out.names.push_back(name);
      fs.push_back(it->second);
    }
    out.features.push_back(std::move(fs));
    out.attack.push_back(ex.attack);
  }
  return out;
}

struct fitted {
  std::vector<double> w;
  double bias = 0;
};

fitted fit(const encoded& data, const std::vector<size_t>& rows,
           const scorer_training& t) {
  fitted m;
  m.w.assign(data.names.size(), 0.0);
  std::mt19937 rng{t.seed};
  auto order = rows;
  for (int epoch = 0; epoch < t.epochs; ++epoch) {
    shuffle(order, rng);
    for (size_t r : order) {
      double z = m.bias;
      for (auto f : data.features[r])
        z += m.w[f];
      double g = sigmoid(z) - (data.attack[r] ? 1.0 : 0.0);
      m.bias -= t.rate * g;
      for (auto f : data.features[r])
        m.w[f] -= t.rate * (g + t.l2 * m.w[f]);
    }
  }
  return m;
}

/// Drops the weights the file would not keep, so that the threshold is
/// chosen on the scores the file gives.
void prune(fitted& m, double min_weight) {
  for (auto& w : m.w)
    if (std::abs(w) < min_weight)
      w = 0;
}

double score_of(const fitted& m, const std::vector<uint32_t>& fs) {
  double z = m.bias;
  for (auto f : fs)
    z += m.w[f];
  return z;
}

} // namespace

std::vector<std::string> scorer_features(std::string_view norm,
                                         std::string_view plain) {
  std::vector<std::string> out;
  std::set<std::string, std::less<>> seen;
  std::string key;
  for (auto text : {norm, plain})
    each_feature(text, key, [&](const std::string& k) {
      if (seen.insert(k).second)
        out.push_back(k);
    });
  return out;
}

outcome<input_scorer> input_scorer::parse(std::string_view text) {
  boost::system::error_code jec;
  auto doc = json::parse(text, jec);
  if (jec)
    return invalid("not valid JSON: " + jec.message());
  if (!doc.is_object())
    return invalid("top level must be an object");
  const auto& top = doc.as_object();
  for (const auto& kv : top)
    if (kv.key() != "version" && kv.key() != "bias" && kv.key() != "threshold"
        && kv.key() != "trainedOn" && kv.key() != "weights")
      return invalid("unknown field \"" + std::string{kv.key()} + "\"");
  if (auto* v = top.if_contains("version");
      v == nullptr || !v->is_int64() || v->as_int64() != 1)
    return invalid("field \"version\" must be 1");
  input_scorer out;
  for (auto [key, to] : {std::pair{"bias", &out.bias_},
                         std::pair{"threshold", &out.threshold_}}) {
    auto* v = top.if_contains(key);
    if (v == nullptr || !v->is_number() || !std::isfinite(v->to_number<double>()))
      return invalid(std::string{"field \""} + key + "\" must be a number");
    *to = v->to_number<double>();
  }
  auto* w = top.if_contains("weights");
  if (w == nullptr || !w->is_object())
    return invalid("field \"weights\" must be an object");
  for (const auto& kv : w->as_object()) {
    std::string_view name = kv.key();
    bool form = (name.size() > 2 && (name.substr(0, 2) == "w:"
                                     || name.substr(0, 2) == "b:"));
    if (!form)
      return invalid("weight \"" + std::string{name}
                     + "\": a feature is \"w:word\" or \"b:word word\"");
    if (!kv.value().is_number()
        || !std::isfinite(kv.value().to_number<double>()))
      return invalid("weight \"" + std::string{name} + "\" must be a number");
    out.weights_.emplace(std::string{name}, kv.value().to_number<double>());
  }
  return out;
}

const input_scorer& input_scorer::builtin() {
  static const input_scorer s = [] {
    auto parsed = parse(embedded::input_scorer());
    if (!parsed)
      throw std::logic_error("candor: embedded conf/input_scorer.json: "
                             + parsed.err().message);
    return std::move(*parsed);
  }();
  return s;
}

double input_scorer::raw_score(
  std::string_view norm, std::string_view plain,
  std::vector<std::pair<std::string, double>>* parts) const {
  double z = bias_;
  std::string key;
  // A feature counts once even when both texts have it.
  std::vector<std::string> counted;
  for (auto text : {norm, plain})
    each_feature(text, key, [&](const std::string& k) {
      auto it = weights_.find(k);
      if (it == weights_.end())
        return;
      if (std::find(counted.begin(), counted.end(), k) != counted.end())
        return;
      counted.push_back(k);
      z += it->second;
      if (parts != nullptr && it->second > 0)
        parts->emplace_back(k.substr(2), it->second);
    });
  return z;
}

score_verdict input_scorer::judge(std::string_view norm,
                                  std::string_view plain) const {
  score_verdict v;
  v.score = raw_score(norm, plain, &v.top);
  v.blocked = v.score > threshold_;
  std::sort(v.top.begin(), v.top.end(), [](auto& a, auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (v.top.size() > 5)
    v.top.resize(5);
  return v;
}

input_scorer input_scorer::train(const std::vector<scorer_example>& examples,
                                 const scorer_training& t) {
  if (!(t.benign_quantile >= 0 && t.benign_quantile <= 1) || t.epochs < 1)
    throw std::invalid_argument("input scorer: benign_quantile must be in "
                                "0..1 and epochs at least 1");
  auto data = encode(examples);
  const size_t n = examples.size();
  // Threshold: 5-fold cross-validation, the benign scores' quantile.
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i)
    perm[i] = i;
  std::mt19937 rng{t.seed + 1};
  shuffle(perm, rng);
  std::vector<double> benign_scores;
  for (size_t fold = 0; fold < 5; ++fold) {
    std::vector<size_t> train_rows, held;
    for (size_t i = 0; i < n; ++i)
      (i % 5 == fold ? held : train_rows).push_back(perm[i]);
    auto m = fit(data, train_rows, t);
    prune(m, t.min_weight);
    for (auto r : held)
      if (!data.attack[r])
        benign_scores.push_back(score_of(m, data.features[r]));
  }
  std::sort(benign_scores.begin(), benign_scores.end());
  input_scorer out;
  if (!benign_scores.empty()) {
    auto at = static_cast<size_t>(t.benign_quantile
                                  * static_cast<double>(benign_scores.size()));
    out.threshold_ = benign_scores[std::min(at, benign_scores.size() - 1)];
  }
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i)
    all[i] = i;
  auto m = fit(data, all, t);
  prune(m, t.min_weight);
  out.bias_ = m.bias;
  for (size_t f = 0; f < m.w.size(); ++f)
    if (m.w[f] != 0)
      out.weights_.emplace(data.names[f], m.w[f]);
  return out;
}

std::string input_scorer::to_json(std::string_view trained_on) const {
  auto num = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", x);
    return std::string{buf};
  };
  std::map<std::string, double> sorted(weights_.begin(), weights_.end());
  std::string out = "{\n  \"version\": 1,\n  \"trainedOn\": "
                    + json::serialize(json::value(json::string_view{
                      trained_on.data(), trained_on.size()}))
                    + ",\n  \"bias\": " + num(bias_)
                    + ",\n  \"threshold\": " + num(threshold_)
                    + ",\n  \"weights\": {";
  bool first = true;
  for (auto& [name, w] : sorted) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    out += json::serialize(json::value(json::string_view{name})) + ": "
           + num(w);
  }
  out += "\n  }\n}\n";
  return out;
}

} // namespace candor::domain
