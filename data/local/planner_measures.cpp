// The data planner's middle stages: from what was said to the plan's
// shape. The filters and groupings, the measure (said, or implied by "how
// much", "how many ... sold", "best-selling", a value's own words), and the
// ranking. Each refuses a question it cannot read one way.

#include "data/local/planner_reading.hpp"

#include <algorithm>

namespace candor::data::plan_detail {

namespace {

/// "a, b or c" of the first `n` of `xs`.
std::string listed(const std::vector<std::string>& xs, size_t n,
                   const char* last) {
  std::string out;
  n = std::min(n, xs.size());
  for (size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? last : ", ") + xs[i];
  return out;
}

/// The catalog's first metrics, as examples of what to measure.
std::string metric_examples(const semantic_layer& s) {
  std::vector<std::string> labels;
  for (auto& m : s.metrics)
    labels.push_back(m.label);
  return listed(labels, 3, " or ");
}

/// The catalog's first dimensions and months, as examples of groupings.
std::string grouping_examples(const semantic_layer& s) {
  std::vector<std::string> names;
  for (auto& d : s.dimensions)
    if (names.size() < 2)
      names.push_back(d.phrases.empty() ? d.name : d.phrases.back());
  names.push_back("months");
  return listed(names, 3, ", ") + "...";
}

} // namespace

bool choose_groups(reading& r) {
  auto& s = r.s;
  // Filters from the values said.
  for (auto& [di, said] : r.values) {
    auto& d = s.dimensions[static_cast<size_t>(di)];
    plan_filter f;
    f.dim = &d;
    size_t named = 0;
    for (auto& [vi, text] : said) {
      auto& v = d.values[static_cast<size_t>(vi)];
      for (auto& x : v.values)
        if (std::find(f.values.begin(), f.values.end(), x) == f.values.end())
          f.values.push_back(x);
      f.said += (f.said.empty() ? "" : ", ") + text;
      named += 1;
      r.understood("'" + text + "' -> " + d.name + " "
                   + (v.values.size() == 1 ? v.values[0]
                                           : "in (" + list_or(v.values) + ")"));
    }
    // Two or more values named one by one are shown side by side.
    bool grouped = std::find(r.dims_grouped.begin(), r.dims_grouped.end(), di)
                   != r.dims_grouped.end();
    // "share ... members vs non-members": each one's share, side by side;
    // "share of NL and BE": the two together.
    if (named >= 2 && !grouped && !r.combine && (!r.p.share || r.compare))
      r.dims_grouped.push_back(di);
    if (named >= 2 && r.combine)
      r.understood("'" + f.said + "' -> counted together");
    r.p.filters.push_back(std::move(f));
  }

  // The time grouping.
  for (auto g : r.grains_said) {
    if (r.p.time_group != time_grain::none && r.p.time_group != g)
      return r.refuse_explained(
        plan_refusal::ambiguous,
        "The question groups by two time units; ask for "
        "one. ");
    r.p.time_group = g;
  }
  if (r.average && r.p.time_group != time_grain::none) {
    r.p.average_over = r.p.time_group;
    r.p.time_group = time_grain::none;
  }
  // Several periods of one kind are compared side by side.
  if (r.p.periods.size() > 1 && r.p.time_group == time_grain::none
      && r.p.average_over == time_grain::none) {
    auto k = r.atoms.front().kind;
    r.p.time_group = k == period_kind::year      ? time_grain::year
                     : k == period_kind::quarter ? time_grain::quarter
                     : k == period_kind::month   ? time_grain::month
                     : k == period_kind::day     ? time_grain::day
                                                 : time_grain::none;
    // Halves and date ranges have no bucket: each is a labelled period.
    if (r.p.time_group == time_grain::none)
      r.p.labelled_periods = true;
  }
  // "growth", "yoy", "trend" with no period: year by year.
  if (r.compare && r.p.periods.empty() && r.p.time_group == time_grain::none
      && r.p.average_over == time_grain::none && r.dims_grouped.empty()) {
    r.p.time_group = time_grain::year;
    r.p.notes.push_back("The change is shown year by year.");
  }
  for (int d : r.dims_grouped) {
    auto* dim = &s.dimensions[static_cast<size_t>(d)];
    if (std::find(r.p.group_by.begin(), r.p.group_by.end(), dim)
        == r.p.group_by.end())
      r.p.group_by.push_back(dim);
  }
  return true;
}

namespace {

/// Whether `d` can be joined in at the grain of the default amount (a
/// dimension that cannot is of order lines: products, categories).
bool reachable_at(const semantic_layer& s, const semantic_metric& amount,
                  const semantic_dimension& d) {
  auto& g = *s.grain(amount.at.front().first);
  auto known = known_aliases(s);
  for (auto& e : d.exprs)
    if (joins_for(s, g, expression_aliases(e, known)))
      return true;
  return false;
}

/// "cancelled orders by payment method": the values' own words name what
/// to count, when they name one metric; else null.
const semantic_metric* metric_named_by_values(reading& r) {
  const semantic_metric* found = nullptr;
  for (auto& [di, said] : r.values)
    for (auto& [vi, text] : said) {
      int mi = metric_in_phrase(r.lex, text);
      if (mi < 0)
        continue;
      auto* m = &r.s.metrics[static_cast<size_t>(mi)];
      if (found != nullptr && found != m)
        return nullptr;
      found = m;
      r.understood("'" + text + "' -> " + m->label);
    }
  return found;
}

/// The measure when none was named; false with a refusal when nothing
/// implies one.
bool imply_metric(reading& r) {
  auto& s = r.s;
  auto* amount = s.metric(s.default_amount);
  auto* count_sold = s.metric(s.default_count_sold);
  bool product_like = false;
  for (auto* d : r.p.group_by)
    product_like = product_like || !reachable_at(s, *amount, *d);
  for (auto& f : r.p.filters)
    product_like = product_like || !reachable_at(s, *amount, *f.dim);
  if (r.how_much && !r.sell && r.atoms.empty() && r.p.group_by.empty()
      && r.p.time_group == time_grain::none) {
    // "how much is a brake bleed?": a price, or the sales of it? Neither a
    // verb of selling nor a period says.
    return r.refuse_explained(plan_refusal::ambiguous,
                              "'How much' with no period and no verb such as "
                              "'sold' could ask for a price or for sales; the "
                              "data hold only what the catalog describes. ");
  }
  if (r.how_much) {
    r.p.metrics.push_back(amount);
    r.understood("'how much' -> " + amount->label);
  } else if (r.how_many && !r.counted_members.empty() && !r.sell) {
    // "how many products are in each category": the size of a list, which
    // is no measure of the sales.
    return r.refuse_explained(
      plan_refusal::unsupported,
      "Counting " + r.counted_members
        + " themselves is not a measure of the data; "
          "ask for one of the measures the catalog defines. ");
  } else if (r.how_many && r.counted_dim >= 0
             && !s.dimensions[static_cast<size_t>(r.counted_dim)]
                   .how_many.empty()) {
    // "how many club members bought ...": the catalog says what counting
    // this dimension's values means.
    auto& d = s.dimensions[static_cast<size_t>(r.counted_dim)];
    auto* m = s.metric(d.how_many);
    r.p.metrics.push_back(m);
    r.understood("'how many' " + d.name + " -> " + m->label);
  } else if (r.how_many && (r.sell || product_like)) {
    r.p.metrics.push_back(count_sold);
    r.understood("'how many' -> " + count_sold->label);
  } else if (r.sell || r.sell_rank) {
    auto* m = product_like ? count_sold : amount;
    r.p.metrics.push_back(m);
    r.understood("'sold' -> " + m->label);
  } else if (auto* m = metric_named_by_values(r); m != nullptr) {
    r.p.metrics.push_back(m);
  } else {
    return r.refuse_explained(plan_refusal::no_metric,
                              "The question does not say what to measure (for "
                              "example "
                                + metric_examples(s) + "). ");
  }
  return true;
}

/// "including cancelled ones": those values are counted as well as what
/// the measure counts by default; grouped by their dimension, every value
/// is shown anyway.
void include_values(reading& r) {
  for (auto& [di, said] : r.included) {
    auto* d = &r.s.dimensions[static_cast<size_t>(di)];
    std::vector<std::string> extra;
    std::string text;
    for (auto& [vi, t] : said) {
      for (auto& x : d->values[static_cast<size_t>(vi)].values)
        extra.push_back(x);
      text += (text.empty() ? "" : ", ") + t;
    }
    r.understood("'including " + text + "' -> " + d->name + " " + list_or(extra)
                 + " counted too");
    if (std::find(r.p.group_by.begin(), r.p.group_by.end(), d)
        != r.p.group_by.end())
      continue;
    auto said_filter
      = std::find_if(r.p.filters.begin(), r.p.filters.end(),
                     [&](const plan_filter& f) { return f.dim == d; });
    std::vector<std::string>* into = nullptr;
    if (said_filter != r.p.filters.end()) {
      into = &said_filter->values;
    } else {
      for (auto* m : r.p.metrics)
        if (m->default_dimension == d->name) {
          r.p.filters.push_back({d, m->default_values, text});
          into = &r.p.filters.back().values;
          break;
        }
    }
    if (into != nullptr)
      for (auto& x : extra)
        if (std::find(into->begin(), into->end(), x) == into->end())
          into->push_back(x);
  }
}

} // namespace

bool choose_metrics(reading& r) {
  if (r.p.metrics.empty() && !imply_metric(r))
    return false;
  include_values(r);
  if (r.p.metrics.size() > 3)
    return r.refuse_explained(plan_refusal::unsupported,
                              "Ask for at most three measures at once. ");
  if (r.average && r.p.average_over == time_grain::none) {
    bool inherent
      = std::all_of(r.p.metrics.begin(), r.p.metrics.end(),
                    [](const semantic_metric* m) { return !m->additive; });
    if (!inherent)
      return r.refuse_explained(
        plan_refusal::unsupported,
        "I cannot tell what the average is taken over; ask "
        "for example for the average monthly figure. ");
  }
  if (r.p.share) {
    for (auto* m : r.p.metrics)
      if (!m->additive)
        return r.refuse_explained(
          plan_refusal::unsupported,
          "A share of the total needs a measure that adds "
          "up, and "
            + m->label + " does not. ");
  }
  return true;
}

bool choose_ranking(reading& r) {
  // "highest first" orders every row.
  if (r.sort && r.rank_n <= 0) {
    r.rank = false;
    if (r.p.group_by.empty() && r.p.time_group == time_grain::none)
      return r.refuse_explained(
        plan_refusal::ambiguous,
        "The question asks for an order, but not of what ("
          + grouping_examples(r.s) + "). ");
    r.p.sorted = true;
  }
  // The most or the least: a grouping to rank, and how many.
  if (!r.rank)
    return true;
  if (!r.p.group_by.empty() || r.p.time_group != time_grain::none) {
    r.p.top_n = r.rank_n > 0 ? r.rank_n : r.rank_plural ? 10 : 1;
    return true;
  }
  if (!(r.compare || r.p.periods.size() > 1))
    return r.refuse_explained(
      plan_refusal::ambiguous,
      "The question asks for the most or the least, but "
      "not of what ("
        + grouping_examples(r.s) + "). ");
  return true;
}

} // namespace candor::data::plan_detail
