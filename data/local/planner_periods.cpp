// The data planner's time stages: the periods a question names, settled
// (a month waiting for its year, "the quarter before", "between A and B",
// "since A"), then checked against the data's coverage; and the refusals
// the words alone decide (a duration, personal data, a word not
// understood, a value of two dimensions).

#include "data/local/planner_reading.hpp"

#include <algorithm>
#include <cstdio>

namespace candor::data::plan_detail {

period_atom year_period(int y) {
  return {{date_text(y, 1, 1), date_text(y, 12, 31), std::to_string(y)},
          period_kind::year};
}

period_atom month_period(int y, int m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d", y, m);
  return {{month_start(y, m), month_end(y, m), buf}, period_kind::month};
}

period_atom quarter_period(int y, int q) {
  return {{month_start(y, q * 3 - 2), month_end(y, q * 3),
           std::to_string(y) + "-Q" + std::to_string(q)},
          period_kind::quarter};
}

period_atom half_period(int y, int h) {
  return {{month_start(y, h * 6 - 5), month_end(y, h * 6),
           std::to_string(y) + "-H" + std::to_string(h)},
          period_kind::half};
}

period_atom day_period(int y, int md) {
  int m = md / 100;
  auto t = date_text(y, m, std::min(md % 100, days_in_month(y, m)));
  return {{t, t, t}, period_kind::day};
}

period_atom partial_period(int y, period_kind kind, int n) {
  switch (kind) {
    case period_kind::month: return month_period(y, n);
    case period_kind::quarter: return quarter_period(y, n);
    case period_kind::half: return half_period(y, n);
    default: return day_period(y, n);
  }
}

period_atom relative_period(const ymd& now, const std::string& now_text,
                            bool last, int n, time_grain g) {
  std::string from, to, label;
  bool month_done = now.d == days_in_month(now.y, now.m);
  if (g == time_grain::year) {
    bool done = now.m == 12 && month_done;
    int y = last ? (done ? now.y : now.y - 1) : now.y;
    int y0 = y - (n - 1);
    from = date_text(y0, 1, 1);
    to = last ? date_text(y, 12, 31) : now_text;
    label = n == 1 ? std::to_string(y)
                   : std::to_string(y0) + "-" + std::to_string(y);
  } else if (g == time_grain::quarter) {
    int q = (now.m + 2) / 3;
    bool done = now.m % 3 == 0 && month_done;
    int y = now.y;
    if (last && !done && --q == 0) {
      q = 4;
      --y;
    }
    int start = (y * 4 + q - 1) - (n - 1);
    from = month_start(start / 4, (start % 4 + 1) * 3 - 2);
    to = last ? month_end(y, q * 3) : now_text;
    label = n == 1 ? std::to_string(y) + "-Q" + std::to_string(q)
                   : from + " to " + to;
  } else if (g == time_grain::month) {
    int y = now.y, m = now.m;
    if (last && !month_done && --m == 0) {
      m = 12;
      --y;
    }
    int start = y * 12 + (m - 1) - (n - 1);
    from = month_start(start / 12, start % 12 + 1);
    to = last ? month_end(y, m) : now_text;
    label = n == 1 ? month_period(y, m).period.label : from + " to " + to;
  } else if (g == time_grain::week) {
    to = now_text;
    from = add_days(to, -(7 * n) + 1);
    label = from + " to " + to;
  } else {
    to = now_text;
    from = add_days(to, -n + 1);
    label = n == 1 ? to : from + " to " + to;
  }
  auto kind = n != 1                     ? period_kind::range
              : g == time_grain::year    ? period_kind::year
              : g == time_grain::quarter ? period_kind::quarter
              : g == time_grain::month   ? period_kind::month
                                         : period_kind::range;
  if (!last && kind != period_kind::year)
    kind = period_kind::range; // "this quarter": up to the latest day
  return {{from, to, label}, kind};
}

namespace {

/// `a` moved back by one `unit` ("Q4 vs the quarter before").
period_atom one_before(const period_atom& a, time_grain unit) {
  int months = unit == time_grain::year      ? 12
               : unit == time_grain::quarter ? 3
               : unit == time_grain::month   ? 1
                                             : 0;
  period_atom b = a;
  if (months == 0) {
    b.period.from = add_days(a.period.from, -7);
    b.period.to = add_days(a.period.to, -7);
    b.period.label = b.period.from + " to " + b.period.to;
    return b;
  }
  auto f = parse_date(a.period.from), t = parse_date(a.period.to);
  int fi = f.y * 12 + f.m - 1 - months, ti = t.y * 12 + t.m - 1 - months;
  b.period.from = month_start(fi / 12, fi % 12 + 1);
  b.period.to = month_end(ti / 12, ti % 12 + 1);
  switch (a.kind) {
    case period_kind::year: return year_period(fi / 12);
    case period_kind::quarter:
      return quarter_period(fi / 12, (fi % 12) / 3 + 1);
    case period_kind::month: return month_period(fi / 12, fi % 12 + 1);
    case period_kind::half: return half_period(fi / 12, (fi % 12) / 6 + 1);
    default:
      b.period.label = b.period.from + " to " + b.period.to;
      b.kind = period_kind::range;
      return b;
  }
}

} // namespace

bool settle_periods(reading& r) {
  auto& s = r.s;
  // Months/quarters still without a year: each year named, else every year
  // of the data.
  if (!r.partials.empty()) {
    std::vector<int> years = r.pending_years;
    if (years.empty())
      for (int y = r.earliest.y; y <= r.latest.y; ++y)
        years.push_back(y);
    else
      r.atoms.erase(std::remove_if(r.atoms.begin(), r.atoms.end(),
                                   [](const period_atom& a) {
                                     return a.kind == period_kind::year;
                                   }),
                    r.atoms.end());
    for (int y : years)
      for (auto& pt : r.partials)
        r.atoms.push_back(partial_period(y, pt.kind, pt.n));
    if (r.pending_years.empty())
      r.p.notes.push_back("No year was given, so every year of the data ("
                          + std::to_string(r.earliest.y) + " to "
                          + std::to_string(r.latest.y) + ") is shown.");
  }
  // "Q4 vs the quarter before": the period one unit earlier, compared.
  if (r.prior != time_grain::none) {
    if (r.atoms.size() != 1)
      return r.refuse(plan_refusal::ambiguous,
                      "The question asks for the "
                        + std::string{to_string(r.prior)}
                        + " before, but not before which period.");
    r.atoms.insert(r.atoms.begin(), one_before(r.atoms.front(), r.prior));
    r.compare = true;
  }
  // Ranges: between A and B, from A to B, since A, before A, after A.
  // "change between 2024 and 2025": two periods compared, not a range.
  if (r.range_state == 2 && r.compare && r.atoms.size() == r.range_atom + 2
      && r.atoms[r.range_atom].kind == r.atoms.back().kind
      && r.atoms.back().kind != period_kind::range)
    r.range_state = 0;
  if (r.range_state == 2 && r.atoms.size() >= r.range_atom + 2) {
    auto a = r.atoms[r.range_atom].period;
    auto b = r.atoms.back().period;
    r.atoms.resize(r.range_atom);
    r.atoms.push_back(
      {{a.from, b.to, a.from + " to " + b.to}, period_kind::range});
  }
  if (r.since_before_after != 0 && r.atoms.size() > r.sba_atom) {
    auto a = r.atoms[r.sba_atom].period;
    r.atoms.resize(r.sba_atom);
    if (r.since_before_after == 1)
      r.atoms.push_back(
        {{a.from, s.coverage_to, "since " + a.from}, period_kind::range});
    else if (r.since_before_after == 2)
      r.atoms.push_back(
        {{s.coverage_from, add_days(a.from, -1), "before " + a.from},
         period_kind::range});
    else
      r.atoms.push_back({{add_days(a.to, 1), s.coverage_to, "after " + a.to},
                         period_kind::range});
  }
  return true;
}

bool check_words(reading& r) {
  auto& s = r.s;
  if (!r.duration.empty())
    return r.refuse_explained(
      plan_refusal::unsupported,
      "'How many " + r.duration
        + "' asks for a duration, and the catalog measures "
          "amounts and counts, not time between events. ");
  if (r.restricted)
    return r.refuse(plan_refusal::restricted,
                    "I cannot answer this: " + s.restricted_reason + ". "
                      + r.examples_text());
  if (r.result.refusal == plan_refusal::ambiguous)
    return r.refuse(plan_refusal::ambiguous,
                    r.result.message + " " + r.examples_text());
  if (r.unknown.empty())
    return true;
  std::string msg = r.understood_text() + "I do not know what ";
  for (size_t i = 0; i < r.unknown.size(); ++i)
    msg += (i > 0 ? (i + 1 == r.unknown.size() ? " and " : ", ") : "")
           + ("'" + r.unknown[i] + "'");
  msg += r.unknown.size() == 1 ? " means" : " mean";
  msg += " in the data, so I will not guess.";
  // Name the valid values of a dimension the question names.
  for (int d : r.dims_grouped) {
    auto& dim = s.dimensions[static_cast<size_t>(d)];
    auto names = value_names(dim);
    if (!names.empty())
      msg += " The " + dim.name + " values in the data are: " + list_or(names)
             + ".";
  }
  return r.refuse(plan_refusal::not_understood, msg + " " + r.examples_text());
}

bool check_periods(reading& r) {
  auto& s = r.s;
  // Inside the data's coverage, clipped to it.
  for (auto& a : r.atoms) {
    if (a.period.to < s.coverage_from || a.period.from > s.coverage_to)
      return r.refuse(plan_refusal::out_of_period,
                      "The data cover " + s.coverage_from + " to "
                        + s.coverage_to + ", so there are no figures for "
                        + a.period.label
                        + ". Ask about a period inside that range.");
    if (a.period.from > a.period.to)
      return r.refuse(plan_refusal::ambiguous,
                      "The period " + a.period.label + " is empty.");
    if (a.period.from < s.coverage_from || a.period.to > s.coverage_to) {
      r.p.notes.push_back("The data cover " + s.coverage_from + " to "
                          + s.coverage_to + ", so " + a.period.label
                          + " is counted within that range only.");
      a.period.from = std::max(a.period.from, s.coverage_from);
      a.period.to = std::min(a.period.to, s.coverage_to);
    }
  }
  // The same period said twice ("2025 ... in 2025") counts once.
  std::vector<period_atom> unique;
  for (auto& a : r.atoms)
    if (std::none_of(unique.begin(), unique.end(), [&](auto& u) {
          return u.period.from == a.period.from && u.period.to == a.period.to;
        }))
      unique.push_back(a);
  r.atoms = std::move(unique);
  // Like compared with like.
  for (auto& a : r.atoms)
    if (a.kind != r.atoms.front().kind)
      return r.refuse_explained(
        plan_refusal::ambiguous,
        "The question names periods of different kinds ("
          + r.atoms.front().period.label + ", " + a.period.label
          + "); ask for one period, or compare periods of the "
            "same kind. ");
  for (auto& a : r.atoms)
    r.p.periods.push_back(a.period);
  return true;
}

} // namespace candor::data::plan_detail
