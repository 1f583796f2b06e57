// `candor calibrate`: scores the calibration split's evidence and picks
// the refusal threshold with maximal accuracy.

#include "eval/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include <boost/json.hpp>

#include "data/retrieval/evidence.hpp"

namespace candor::eval {

namespace json = boost::json;

namespace {

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

double median(std::vector<double> xs) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

/// Correct decisions when every item with evidence > `below` is answered
/// (the threshold lies just above `below`).
size_t correct_above(const std::vector<scored_question>& items, double below) {
  size_t n = 0;
  for (const auto& x : items)
    n += x.answerable == (x.evidence > below) ? 1 : 0;
  return n;
}

} // namespace

double refusal_accuracy(const std::vector<scored_question>& items,
                        double threshold) {
  if (items.empty())
    return 0;
  size_t n = 0;
  for (const auto& x : items)
    n += x.answerable == (x.evidence >= threshold) ? 1 : 0;
  return static_cast<double>(n) / static_cast<double>(items.size());
}

calibration calibrate(const std::vector<scored_question>& items,
                      size_t sweep_rows) {
  calibration c;
  std::vector<double> ans;
  std::vector<double> unans;
  std::vector<double> values;
  for (const auto& x : items) {
    (x.answerable ? ans : unans).push_back(x.evidence);
    values.push_back(x.evidence);
  }
  c.answerable = ans.size();
  c.unanswerable = unans.size();
  c.median_answerable = median(ans);
  c.median_unanswerable = median(unans);
  c.separation = c.median_answerable - c.median_unanswerable;
  if (items.empty())
    return c;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  // Candidate j is the interval (lo_j, hi_j] of thresholds that answer
  // exactly the items above lo_j.
  struct candidate {
    double lo;
    double hi;
    size_t correct;
  };
  std::vector<candidate> cands;
  double floor = std::min(0.0, values.front());
  cands.push_back({floor, values.front(), ans.size()});
  for (size_t j = 0; j + 1 < values.size(); ++j)
    cands.push_back(
      {values[j], values[j + 1], correct_above(items, values[j])});
  if (ans.empty())
    cands.push_back({values.back(), values.back() + 1.0, unans.size()});
  size_t best = 0;
  for (const auto& x : cands)
    best = std::max(best, x.correct);
  c.best_accuracy
    = static_cast<double>(best) / static_cast<double>(items.size());
  // Widest run of adjacent best candidates; ties go to the lower run.
  double best_width = -1;
  for (size_t i = 0; i < cands.size();) {
    if (cands[i].correct != best) {
      ++i;
      continue;
    }
    auto j = i;
    while (j + 1 < cands.size() && cands[j + 1].correct == best)
      ++j;
    auto width = cands[j].hi - cands[i].lo;
    if (width > best_width) {
      best_width = width;
      c.plateau_low = cands[i].lo;
      c.plateau_high = cands[j].hi;
    }
    i = j + 1;
  }
  auto mid = (c.plateau_low + c.plateau_high) / 2;
  auto rounded = std::round(mid * 1e4) / 1e4;
  c.threshold
    = rounded > c.plateau_low && rounded <= c.plateau_high ? rounded : mid;
  // Even grid over [floor, highest value] for the printed sweep.
  auto top = values.back();
  auto rows = std::max<size_t>(sweep_rows, 2);
  for (size_t i = 0; i < rows; ++i) {
    auto t = floor
             + (top - floor) * static_cast<double>(i)
                 / static_cast<double>(rows - 1);
    c.sweep.push_back({t, refusal_accuracy(items, t)});
  }
  return c;
}

std::vector<scored_question> score_split(const data::retrieval_snapshot& snap,
                                         const labelled_set& set,
                                         split_kind split,
                                         data::search_mode mode, size_t k) {
  std::vector<scored_question> out;
  for (const auto* q : set.of(split)) {
    auto hits = snap.search(q->question, k, mode);
    out.push_back(
      {data::evidence_score(snap, q->question, hits), q->answerable});
  }
  return out;
}

std::string format_calibration(const calibration& c) {
  std::ostringstream out;
  out << "calibration split: " << c.answerable << " answerable, "
      << c.unanswerable << " unanswerable\n\n"
      << "threshold  accuracy\n";
  // The grid, with the plateau's ends and the choice merged in.
  struct row {
    double threshold;
    double accuracy;
    const char* note;
  };
  std::vector<row> rows;
  for (const auto& r : c.sweep)
    rows.push_back({r.threshold, r.accuracy, ""});
  if (c.plateau_high > c.plateau_low) {
    rows.push_back({c.plateau_low, -1, "  plateau starts above"});
    rows.push_back({c.threshold, c.best_accuracy, "  <- chosen"});
    rows.push_back({c.plateau_high, c.best_accuracy, "  plateau ends"});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const row& a, const row& b) {
    return a.threshold < b.threshold;
  });
  for (const auto& r : rows) {
    bool in = r.threshold > c.plateau_low && r.threshold <= c.plateau_high;
    out << fixed(r.threshold, 4) << "     "
        << (r.accuracy < 0 ? std::string{"     "} : fixed(r.accuracy, 3))
        << (*r.note ? r.note : (in ? "  *" : "")) << "\n";
  }
  out << "\nmedian evidence: answerable " << fixed(c.median_answerable, 4)
      << ", unanswerable " << fixed(c.median_unanswerable, 4) << ", separation "
      << fixed(c.separation, 4) << "\n"
      << "best accuracy " << fixed(c.best_accuracy, 3) << " on the plateau ("
      << fixed(c.plateau_low, 4) << ", " << fixed(c.plateau_high, 4)
      << "] (marked above)\n"
      << "chosen threshold: " << fixed(c.threshold, 4) << "\n";
  return out.str();
}

json::value to_json(const calibration& c) {
  json::array sweep;
  for (const auto& r : c.sweep)
    sweep.push_back(
      json::object{{"threshold", r.threshold}, {"accuracy", r.accuracy}});
  return json::object{
    {"answerable", c.answerable},
    {"unanswerable", c.unanswerable},
    {"medianAnswerable", c.median_answerable},
    {"medianUnanswerable", c.median_unanswerable},
    {"separation", c.separation},
    {"bestAccuracy", c.best_accuracy},
    {"plateauLow", c.plateau_low},
    {"plateauHigh", c.plateau_high},
    {"threshold", c.threshold},
    {"sweep", std::move(sweep)},
  };
}

domain::error write_threshold(const std::string& path, double threshold) {
  auto fail = [&](std::string why) {
    return domain::make_error(domain::ec::config_invalid,
                              "cannot set retrieval.threshold in " + path + ": "
                                + std::move(why));
  };
  std::string text;
  {
    std::ifstream in{path, std::ios::binary};
    if (!in)
      return fail("cannot read the file");
    text.assign(std::istreambuf_iterator<char>{in},
                std::istreambuf_iterator<char>{});
  }
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object())
    return fail("not a JSON object");
  auto* r = v.as_object().if_contains("retrieval");
  if (r == nullptr || !r->is_object() || !r->as_object().contains("threshold"))
    return fail("no retrieval.threshold key");
  // Edit the number in place so the file keeps its layout: find the
  // "threshold" key after the "retrieval" key and replace its value.
  auto at = text.find("\"retrieval\"");
  if (at != std::string::npos)
    at = text.find("\"threshold\"", at);
  if (at != std::string::npos)
    at = text.find(':', at);
  if (at == std::string::npos)
    return fail("unexpected layout");
  auto begin = text.find_first_not_of(" \t\r\n", at + 1);
  if (begin == std::string::npos)
    return fail("unexpected layout");
  auto end = text.find_first_of(",}\r\n \t", begin);
  if (end == std::string::npos)
    return fail("unexpected layout");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", threshold);
  // Shortest text that reads back as the same double.
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[64];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, threshold);
    if (std::strtod(shorter, nullptr) == threshold) {
      std::snprintf(buf, sizeof buf, "%s", shorter);
      break;
    }
  }
  auto edited = text.substr(0, begin) + buf + text.substr(end);
  auto check = json::parse(edited, ec);
  if (ec || !check.is_object())
    return fail("the edit did not give valid JSON");
  auto* t = check.as_object().if_contains("retrieval");
  auto* tv
    = t && t->is_object() ? t->as_object().if_contains("threshold") : nullptr;
  if (tv == nullptr || !tv->is_number() || tv->to_number<double>() != threshold)
    return fail("the edit did not land on retrieval.threshold");
  auto tmp = path + ".tmp";
  {
    std::ofstream out{tmp, std::ios::binary | std::ios::trunc};
    out << edited;
    if (!out)
      return fail("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return fail("cannot replace the file");
  }
  return {};
}

} // namespace candor::eval
