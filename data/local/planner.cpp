// The data planner: a question read word by word against the semantic
// layer (metrics, dimensions, values, time expressions, function words),
// then compiled to one SELECT. A word that maps to nothing, or a reading
// that is not unique, refuses. This file holds the planner's face and the
// order of its stages; the stages themselves are declared in
// planner_reading.hpp.

#include "data/local/planner.hpp"
#include "data/local/planner_reading.hpp"

#include <algorithm>
#include <cctype>

#include "data/sales/catalog.hpp"

namespace candor::data::plan_detail {

std::string list_or(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      out += i + 1 == xs.size() ? " or " : ", ";
    out += xs[i];
  }
  return out;
}

std::vector<std::string> value_names(const semantic_dimension& d) {
  std::vector<std::string> out;
  for (auto& v : d.values) {
    if (v.values.size() != 1)
      continue;
    if (!d.numeric)
      out.push_back(v.phrases.empty() || v.values[0].size() > 2
                      ? v.values[0]
                      : v.phrases[0] + " (" + v.values[0] + ")");
    else if (!v.phrases.empty())
      out.push_back(v.phrases[0]);
  }
  return out;
}

void reading::understood(std::string what) {
  if (std::find(p.understood.begin(), p.understood.end(), what)
      == p.understood.end())
    p.understood.push_back(std::move(what));
}

bool reading::refuse(plan_refusal why, std::string message) {
  result.refusal = why;
  result.message = std::move(message);
  return false;
}

std::string reading::understood_text() const {
  if (p.understood.empty())
    return {};
  std::string t = "I understood ";
  for (size_t i = 0; i < p.understood.size(); ++i)
    t += (i > 0 ? "; " : "") + p.understood[i];
  return t + ". ";
}

std::string reading::examples_text() const {
  auto ex = owner.examples();
  std::string t = "Questions I can answer look like: ";
  for (size_t i = 0; i < ex.size(); ++i)
    t += (i > 0 ? " / " : "") + ex[i];
  return t;
}

} // namespace candor::data::plan_detail

namespace candor::data {

using namespace plan_detail;

std::string_view to_string(time_grain g) {
  switch (g) {
    case time_grain::day: return "day";
    case time_grain::week: return "week";
    case time_grain::month: return "month";
    case time_grain::quarter: return "quarter";
    case time_grain::year: return "year";
    default: return "none";
  }
}

std::string_view to_string(plan_refusal r) {
  switch (r) {
    case plan_refusal::none: return "none";
    case plan_refusal::not_understood: return "not_understood";
    case plan_refusal::no_metric: return "no_metric";
    case plan_refusal::ambiguous: return "ambiguous";
    case plan_refusal::unsupported: return "unsupported";
    case plan_refusal::restricted: return "restricted";
    case plan_refusal::out_of_period: return "out_of_period";
  }
  return "none";
}

std::string query_plan::summary() const {
  std::string out;
  for (size_t i = 0; i < metrics.size(); ++i)
    out += (i > 0 ? " and " : "") + metrics[i]->label;
  if (share)
    out = "share of " + out;
  if (average_over != time_grain::none)
    out = "average " + std::string{to_string(average_over)} + "ly " + out;
  if (time_group != time_grain::none)
    out += " by " + std::string{to_string(time_group)};
  for (auto* d : group_by)
    out += (time_group != time_grain::none || d != group_by.front() ? " and "
                                                                    : " by ")
           + d->name;
  if (top_n > 0)
    out = std::string{ascending ? "bottom " : "top "} + std::to_string(top_n)
          + ": " + out;
  for (auto& f : filters) {
    out += ", " + f.dim->name + " ";
    out
      += f.values.size() == 1 ? f.values[0] : "in (" + list_or(f.values) + ")";
  }
  for (size_t i = 0; i < periods.size(); ++i)
    out += (i == 0 ? ", " : " vs ") + periods[i].label;
  return out;
}

domain::outcome<planner> planner::make(const catalog& cat,
                                       const dimension_values& loaded,
                                       sql_dialect dialect) {
  auto layer = semantic_layer::parse(cat);
  if (!layer)
    return layer.err();
  for (auto& d : layer->dimensions) {
    auto found = loaded.find(d.name);
    if (d.values_from.empty() || found == loaded.end())
      continue;
    for (auto& v : found->second) {
      semantic_value sv;
      sv.values.push_back(v);
      // "inner tube" -> "inner tubes": the plural users write.
      auto words = tokenize(v);
      if (!words.empty()
          && std::isalpha(static_cast<unsigned char>(words.back().back()))
          && words.back().back() != 's')
        sv.phrases.push_back(join_words(words, 0, words.size()) + "s");
      d.values.push_back(std::move(sv));
    }
  }
  planner p;
  p.dialect_ = dialect;
  p.layer_ = std::make_shared<const semantic_layer>(std::move(*layer));
  p.lex_ = build_lexicon(*p.layer_);
  return p;
}

plan_result planner::plan(std::string_view question) const {
  reading r{*this, *layer_, *lex_};
  r.latest = parse_date(layer_->coverage_to);
  r.earliest = parse_date(layer_->coverage_from);
  r.words = tokenize(question);
  r.items = read_items(*lex_, r.words);
  read_raw_values(*lex_, r.items);
  read_question(r);
  bool planned = settle_periods(r) && check_words(r) && check_periods(r)
                 && choose_groups(r) && choose_metrics(r) && choose_ranking(r)
                 && choose_grain(r) && compile_sql(r);
  plan_result out = std::move(r.result);
  if (!planned)
    out.unknown = std::move(r.unknown);
  out.p = std::move(r.p);
  return out;
}

} // namespace candor::data
