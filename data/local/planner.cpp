// The data planner: a question read word by word against the semantic
// layer (metrics, dimensions, values, time expressions, function words),
// then compiled to one SELECT. A word that maps to nothing, or a reading
// that is not unique, refuses.

#include "data/local/planner.hpp"
#include "data/local/planner_detail.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "data/sales/catalog.hpp"

namespace candor::data {

using namespace plan_detail;

namespace {

std::set<std::string> known_aliases(const semantic_layer& s) {
  std::set<std::string> out;
  for (auto& g : s.grains)
    out.insert(g.provides.begin(), g.provides.end());
  for (auto& j : s.joins)
    out.insert(j.alias);
  return out;
}

/// The joins that bring `need` in at grain `g`, in order; nullopt when an
/// alias cannot be reached.
std::optional<std::vector<const semantic_join*>>
joins_for(const semantic_layer& s, const semantic_grain& g,
          const std::set<std::string>& need) {
  std::set<std::string> have(g.provides.begin(), g.provides.end());
  std::vector<const semantic_join*> out;
  std::function<bool(const std::string&, int)> reach
    = [&](const std::string& a, int depth) -> bool {
    if (have.count(a) > 0)
      return true;
    if (depth > 8)
      return false;
    for (auto& j : s.joins) {
      if (j.alias != a)
        continue;
      if (!reach(j.needs, depth + 1))
        continue;
      have.insert(a);
      out.push_back(&j);
      return true;
    }
    return false;
  };
  for (auto& a : need)
    if (!reach(a, 0))
      return std::nullopt;
  return out;
}

std::string quote(std::string_view v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'')
      out += '\'';
    out += c;
  }
  return out + "'";
}

std::string bucket_sql(time_grain g, const std::string& col) {
  switch (g) {
    case time_grain::day: return col;
    case time_grain::week: return "strftime('%Y-W%W', " + col + ")";
    case time_grain::month: return "strftime('%Y-%m', " + col + ")";
    case time_grain::quarter:
      return "strftime('%Y', " + col + ") || '-Q' || ((CAST(strftime('%m', "
             + col + ") AS INTEGER) + 2) / 3)";
    case time_grain::year: return "strftime('%Y', " + col + ")";
    default: return col;
  }
}

std::string column_name(const semantic_metric& m) {
  return m.unit == metric_unit::eur ? m.name + "_eur" : m.name;
}

std::string list_or(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      out += i + 1 == xs.size() ? " or " : ", ";
    out += xs[i];
  }
  return out;
}

/// The values of `d` as a user would type them.
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

/// What a period type a plan_period is, for comparing like with like.
enum class period_kind { year, quarter, month, half, day, range };

struct period_atom {
  plan_period period;
  period_kind kind = period_kind::range;
};

} // namespace

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
                                       const dimension_values& loaded) {
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
  p.layer_ = std::make_shared<const semantic_layer>(std::move(*layer));
  p.lex_ = build_lexicon(*p.layer_);
  return p;
}

namespace {

/// The state of one question's reading.
struct reading {
  const semantic_layer& s;
  query_plan p;
  plan_result result;
  std::vector<std::string> unknown;
  bool how_many = false, how_much = false, sell = false, sell_rank = false;
  bool rank = false, compare = false, average = false, sort = false;
  time_grain prior = time_grain::none;
  int rank_n = -1;
  bool rank_plural = false;
  bool restricted = false;
  std::vector<period_atom> atoms;
  std::vector<time_grain> grains_said;
  /// dimension index -> values (value indices) said.
  std::map<int, std::vector<std::pair<int, std::string>>> values;
  std::vector<int> dims_grouped;
  /// Values said after "including": counted too, not filtered on.
  std::map<int, std::vector<std::pair<int, std::string>>> included;
  bool combine = false;
  /// "how many products ...": the dimension whose members are counted.
  std::string counted_members;
  /// "how many days ...": the unit of a duration asked for.
  std::string duration;
  /// The dimension of the value said right after "how many", or -1.
  int counted_dim = -1;
  std::string now; ///< the latest date of data

  explicit reading(const semantic_layer& layer) : s(layer) {}

  void understood(std::string what) {
    if (std::find(p.understood.begin(), p.understood.end(), what)
        == p.understood.end())
      p.understood.push_back(std::move(what));
  }
};

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

/// A day of a month (`md` = month * 100 + day), the day clamped to the
/// month's length ("29 february" of a common year is the 28th).
period_atom day_period(int y, int md) {
  int m = md / 100;
  auto t = date_text(y, m, std::min(md % 100, days_in_month(y, m)));
  return {{t, t, t}, period_kind::day};
}

/// A month, quarter, half or day said without its year, in year `y`.
period_atom partial_period(int y, period_kind kind, int n) {
  switch (kind) {
    case period_kind::month: return month_period(y, n);
    case period_kind::quarter: return quarter_period(y, n);
    case period_kind::half: return half_period(y, n);
    default: return day_period(y, n);
  }
}

bool day_of_month(const item* it) {
  return it != nullptr && it->number >= 1 && it->number <= 31;
}

} // namespace

plan_result planner::plan(std::string_view question) const {
  const auto& s = *layer_;
  reading r{s};
  r.now = s.coverage_to;
  auto words = tokenize(question);
  auto items = read_items(*lex_, words);
  read_raw_values(*lex_, items);
  auto now = parse_date(s.coverage_to);
  auto first = parse_date(s.coverage_from);
  std::vector<int> pending_years; // years not attached to a month/quarter
  // Month/quarter/half atoms waiting for a year.
  struct partial {
    period_kind kind;
    int n;
  };
  std::vector<partial> partials;
  size_t partial_item = 0; // the item of the last partial
  int range_state = 0;     // 1: after between/from, 2: after its 'to'
  size_t range_atom = 0;
  int since_before_after = 0; // 1 since, 2 before, 3 after
  size_t sba_atom = 0;

  auto push_atom = [&](period_atom a) { r.atoms.push_back(std::move(a)); };

  bool including = false; // values said now are counted too
  for (size_t i = 0; i < items.size(); ++i) {
    auto& it = items[i];
    auto next = [&](size_t k) -> const item* {
      return i + k < items.size() ? &items[i + k] : nullptr;
    };
    if (!(it.function || it.is(lx::value) || it.said == "and"
          || it.said == "or"))
      including = false;
    if (it.unknown) {
      r.unknown.push_back(it.said);
      continue;
    }
    if (it.function)
      continue;
    if (!it.corrected.empty())
      r.p.notes.push_back("'" + it.said + "' is read as '" + it.corrected
                          + "'.");
    if (it.year != 0) {
      // Attach to a month/quarter/half said just before ("march 2025",
      // "q1 of 2024"); one said earlier waits for every year named.
      bool adjacent = !partials.empty() && i > 0
                      && (partial_item + 1 == i
                          || (partial_item + 2 == i && items[i - 1].function));
      if (adjacent) {
        for (auto& pt : partials)
          push_atom(partial_period(it.year, pt.kind, pt.n));
        partials.clear();
      } else {
        pending_years.push_back(it.year);
        push_atom(year_period(it.year));
      }
      continue;
    }
    if (!it.date.empty()) {
      push_atom({{it.date, it.date, it.date}, period_kind::day});
      continue;
    }
    if (it.month != 0 || it.quarter != 0) {
      auto kind = it.month != 0 ? period_kind::month : period_kind::quarter;
      int n = it.month != 0 ? it.month : it.quarter;
      // "2024 q1": a year just before takes it.
      if (i > 0 && items[i - 1].year != 0 && !r.atoms.empty()
          && r.atoms.back().kind == period_kind::year
          && r.atoms.back().period.label == std::to_string(items[i - 1].year)) {
        int y = items[i - 1].year;
        r.atoms.pop_back();
        pending_years.pop_back();
        push_atom(kind == period_kind::month ? month_period(y, n)
                                             : quarter_period(y, n));
      } else if (kind == period_kind::month && day_of_month(next(1))
                 && (next(2) == nullptr
                     || !(next(2)->is(lx::dimension)
                          || next(2)->is(lx::unit_word)))) {
        // "march 15", "december 24 2025": a day of the month.
        partials.push_back({period_kind::day, n * 100 + next(1)->number});
        partial_item = ++i;
      } else {
        partials.push_back({kind, n});
        partial_item = i;
      }
      continue;
    }
    if (it.number >= 0) {
      // "top 5", "5 best", "which 3 countries": a rank size; "last 6
      // months": a relative span.
      auto* nx = next(1);
      if (nx && nx->is(lx::dimension) && it.number > 0) {
        r.rank_n = it.number;
        continue;
      }
      if (nx
          && (nx->is(lx::rank_desc) || nx->is(lx::rank_asc)
              || nx->is(lx::top))) {
        r.rank_n = it.number;
        continue;
      }
      if (i > 0
          && (items[i - 1].is(lx::top) || items[i - 1].is(lx::rank_desc)
              || items[i - 1].is(lx::rank_asc))) {
        r.rank_n = it.number;
        continue;
      }
      if (i > 0 && items[i - 1].is(lx::relative) && nx
          && nx->is(lx::unit_word)) {
        continue; // handled with the relative word
      }
      // "15 march", "1-7 december", "24 to 31 december": days of a month;
      // the first of two days opens a range up to the second.
      if (day_of_month(&it)) {
        const item* month = nx != nullptr && nx->month != 0 ? nx : nullptr;
        bool span = false;
        if (month == nullptr && day_of_month(nx) && next(2)
            && next(2)->month != 0) {
          month = next(2);
          span = true;
        } else if (month == nullptr && nx && nx->is(lx::range_to)
                   && day_of_month(next(2)) && next(3) && next(3)->month != 0) {
          month = next(3);
          span = true;
        }
        if (month != nullptr) {
          partials.push_back(
            {period_kind::day, month->month * 100 + it.number});
          if (span) {
            if (range_state == 0) {
              range_state = 2;
              range_atom = r.atoms.size();
            }
            partial_item = i;
          } else {
            partial_item = ++i; // the month is taken
          }
          continue;
        }
      }
      r.unknown.push_back(it.said);
      continue;
    }
    if (it.entries.empty())
      continue;
    // One reading per item, by context.
    if (it.is(lx::restricted)) {
      r.restricted = true;
      r.understood("'" + it.said + "' asks for personal data");
      continue;
    }
    if (it.is(lx::filler))
      continue;
    if (it.is(lx::ytd)) {
      push_atom({{date_text(now.y, 1, 1), s.coverage_to,
                  "year to date " + std::to_string(now.y)},
                 period_kind::range});
      r.p.notes.push_back("Year to date is read as " + date_text(now.y, 1, 1)
                          + " to " + s.coverage_to
                          + ", the latest order date in the data.");
      continue;
    }
    if (it.is(lx::relative)) {
      bool last = it.get(lx::relative)->arg == 0;
      int n = 1;
      size_t k = 1;
      if (auto* nx = next(1); nx && nx->number > 0) {
        n = nx->number;
        k = 2;
      }
      auto* unit = next(k);
      if (unit == nullptr
          || !(unit->is(lx::unit_word) || unit->is(lx::ordinal))) {
        if (it.said == "last" || it.said == "latest")
          continue; // "the last one" etc.: a function word here
        continue;
      }
      auto* ue = unit->get(lx::unit_word);
      if (ue == nullptr) {
        continue;
      }
      auto g = static_cast<time_grain>(ue->arg);
      // The latest complete unit on or before the latest date ("last"),
      // or the one holding it ("this").
      std::string from, to, label;
      bool month_done = now.d == days_in_month(now.y, now.m);
      if (g == time_grain::year) {
        bool done = now.m == 12 && month_done;
        int y = last ? (done ? now.y : now.y - 1) : now.y;
        int y0 = y - (n - 1);
        from = date_text(y0, 1, 1);
        to = last ? date_text(y, 12, 31) : s.coverage_to;
        label = n == 1 ? std::to_string(y)
                       : std::to_string(y0) + "-" + std::to_string(y);
      } else if (g == time_grain::quarter) {
        int q = (now.m + 2) / 3;
        bool done = now.m % 3 == 0 && month_done;
        int y = now.y;
        if (last && !done) {
          if (--q == 0) {
            q = 4;
            --y;
          }
        }
        int end_m = q * 3;
        int start_idx = (y * 4 + q - 1) - (n - 1);
        int ys = start_idx / 4, qs = start_idx % 4 + 1;
        from = month_start(ys, qs * 3 - 2);
        to = last ? month_end(y, end_m) : s.coverage_to;
        label = n == 1 ? std::to_string(y) + "-Q" + std::to_string(q)
                       : from + " to " + to;
      } else if (g == time_grain::month) {
        int y = now.y, m = now.m;
        if (last && !month_done) {
          if (--m == 0) {
            m = 12;
            --y;
          }
        }
        int idx = y * 12 + (m - 1) - (n - 1);
        from = month_start(idx / 12, idx % 12 + 1);
        to = last ? month_end(y, m) : s.coverage_to;
        label = n == 1 ? month_period(y, m).period.label : from + " to " + to;
      } else if (g == time_grain::week) {
        to = s.coverage_to;
        from = add_days(to, -(7 * n) + 1);
        label = from + " to " + to;
      } else {
        to = s.coverage_to;
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
      push_atom({{from, to, label}, kind});
      r.p.notes.push_back("'" + join_words(words, it.begin, unit->end)
                          + "' is read as " + from + " to " + to
                          + ": the data end on " + s.coverage_to + ".");
      i += k; // the number and the unit are consumed
      continue;
    }
    if (it.is(lx::half)) {
      partials.push_back({period_kind::half, it.get(lx::half)->arg});
      partial_item = i;
      continue;
    }
    if (it.is(lx::ordinal)) {
      auto* nx = next(1);
      if (nx && nx->is(lx::unit_word)
          && nx->get(lx::unit_word)->arg
               == static_cast<int>(time_grain::quarter)) {
        partials.push_back({period_kind::quarter, it.get(lx::ordinal)->arg});
        ++i;
        partial_item = i;
      }
      continue;
    }
    if (it.is(lx::range_from)) {
      range_state = 1;
      range_atom = r.atoms.size();
      continue;
    }
    if (it.is(lx::range_to)) {
      if (range_state == 1)
        range_state = 2;
      continue;
    }
    if (it.is(lx::since) || it.is(lx::before) || it.is(lx::after)) {
      since_before_after = it.is(lx::since) ? 1 : it.is(lx::before) ? 2 : 3;
      sba_atom = r.atoms.size();
      continue;
    }
    if (it.is(lx::how_many)) {
      // "how many days between an order and its refund": a duration,
      // which no measure of the catalog is.
      if (auto* nx = next(1); nx && nx->is(lx::unit_word)) {
        r.duration = nx->said;
        continue;
      }
      r.how_many = true;
      continue;
    }
    if (it.is(lx::how_much)) {
      r.how_much = true;
      continue;
    }
    if (it.is(lx::grain)) {
      r.grains_said.push_back(static_cast<time_grain>(it.get(lx::grain)->arg));
      continue;
    }
    if (it.is(lx::unit_word)) {
      // "by month", "which month", "best month": a grouping.
      r.grains_said.push_back(
        static_cast<time_grain>(it.get(lx::unit_word)->arg));
      if (!it.said.empty() && it.said.back() == 's')
        r.rank_plural = true;
      continue;
    }
    if (it.is(lx::sort)) {
      r.sort = true;
      r.p.ascending = it.get(lx::sort)->arg == 1;
      continue;
    }
    if (it.is(lx::prior)) {
      r.prior = static_cast<time_grain>(it.get(lx::prior)->arg);
      continue;
    }
    if (it.is(lx::rank_desc) || it.is(lx::rank_asc) || it.is(lx::top)) {
      r.rank = true;
      if (it.is(lx::rank_asc) || (it.is(lx::top) && it.get(lx::top)->arg == 1))
        r.p.ascending = true;
      if (auto* e = it.get(lx::rank_desc); e && e->arg == 1)
        r.sell_rank = true;
      continue;
    }
    if (it.is(lx::share)) {
      r.p.share = true;
      continue;
    }
    if (it.is(lx::including)) {
      including = true;
      continue;
    }
    if (it.is(lx::combine)) {
      r.combine = true;
      continue;
    }
    if (it.is(lx::compare)) {
      r.compare = true;
      continue;
    }
    if (it.is(lx::average)) {
      r.average = true;
      continue;
    }
    if (it.is(lx::sell)) {
      r.sell = true;
      continue;
    }
    if (it.is(lx::group_cue) || it.is(lx::which)) {
      // The next item, a dimension or a time unit, is grouped by.
      continue;
    }
    // Content readings: metric, dimension, value.
    auto* me = it.get(lx::metric);
    auto* de = it.get(lx::dimension);
    auto* ve = it.get(lx::value);
    bool after_group
      = i > 0
        && (items[i - 1].is(lx::group_cue) || items[i - 1].is(lx::which)
            || items[i - 1].is(lx::top)
            || (items[i - 1].number > 0 && i > 1 && items[i - 2].is(lx::top)));
    if (de && !ve && !me && i > 0 && items[i - 1].is(lx::how_many)) {
      // "how many products ...": the thing counted, not a breakdown.
      r.counted_members = it.said;
      continue;
    }
    if (de && (after_group || (!ve && !me))) {
      r.dims_grouped.push_back(de->index);
      if (!it.said.empty() && it.said.back() == 's')
        r.rank_plural = true;
      r.understood("'" + it.said + "' -> by "
                   + s.dimensions[static_cast<size_t>(de->index)].name);
      continue;
    }
    if (me && (!ve || r.p.metrics.empty())) {
      auto* m = &s.metrics[static_cast<size_t>(me->index)];
      if (std::find(r.p.metrics.begin(), r.p.metrics.end(), m)
          == r.p.metrics.end())
        r.p.metrics.push_back(m);
      r.understood("'" + it.said + "' -> " + m->label);
      continue;
    }
    if (ve) {
      // Every reading of the phrase as a value (a phrase may name values
      // of two dimensions; that is ambiguous unless one reading alone).
      std::vector<const entry*> vals;
      for (auto& e : it.entries)
        if (e.kind == lx::value)
          vals.push_back(&e);
      if (vals.size() > 1) {
        std::vector<std::string> dims;
        for (auto* e : vals)
          dims.push_back(s.dimensions[static_cast<size_t>(e->index)].name);
        r.result.refusal = plan_refusal::ambiguous;
        r.result.message = "'" + it.said + "' could be a " + list_or(dims)
                           + "; please say which.";
        continue;
      }
      (including ? r.included : r.values)[ve->index].emplace_back(ve->arg,
                                                                  it.said);
      if (i > 0 && items[i - 1].is(lx::how_many))
        r.counted_dim = ve->index; // "how many club members ..."

      continue;
    }
    if (de) {
      r.dims_grouped.push_back(de->index);
      continue;
    }
  }
  plan_result& out = r.result;
  auto refuse = [&](plan_refusal why, std::string message) {
    out.refusal = why;
    out.message = std::move(message);
    out.unknown = r.unknown;
    out.p = std::move(r.p);
    return std::move(out);
  };
  auto understood_text = [&] {
    if (r.p.understood.empty())
      return std::string{};
    std::string t = "I understood ";
    for (size_t i = 0; i < r.p.understood.size(); ++i)
      t += (i > 0 ? "; " : "") + r.p.understood[i];
    return t + ". ";
  };
  auto examples_text = [&] {
    auto ex = examples();
    std::string t = "Questions I can answer look like: ";
    for (size_t i = 0; i < ex.size(); ++i)
      t += (i > 0 ? " / " : "") + ex[i];
    return t;
  };
  // Months/quarters still without a year: each year named, else every year
  // of the data.
  if (!partials.empty()) {
    std::vector<int> years = pending_years;
    if (years.empty())
      for (int y = first.y; y <= now.y; ++y)
        years.push_back(y);
    else
      r.atoms.erase(std::remove_if(r.atoms.begin(), r.atoms.end(),
                                   [](const period_atom& a) {
                                     return a.kind == period_kind::year;
                                   }),
                    r.atoms.end());
    for (int y : years)
      for (auto& pt : partials)
        push_atom(partial_period(y, pt.kind, pt.n));
    if (pending_years.empty())
      r.p.notes.push_back("No year was given, so every year of the data ("
                          + std::to_string(first.y) + " to "
                          + std::to_string(now.y) + ") is shown.");
  }
  // "Q4 vs the quarter before": the period one unit earlier, compared.
  if (r.prior != time_grain::none) {
    if (r.atoms.size() != 1)
      return refuse(plan_refusal::ambiguous,
                    "The question asks for the "
                      + std::string{to_string(r.prior)}
                      + " before, but not before which period.");
    auto a = r.atoms.front();
    int months = r.prior == time_grain::year      ? 12
                 : r.prior == time_grain::quarter ? 3
                 : r.prior == time_grain::month   ? 1
                                                  : 0;
    period_atom b = a;
    if (months == 0) {
      b.period.from = add_days(a.period.from, -7);
      b.period.to = add_days(a.period.to, -7);
      b.period.label = b.period.from + " to " + b.period.to;
    } else {
      auto f = parse_date(a.period.from), t = parse_date(a.period.to);
      int fi = f.y * 12 + f.m - 1 - months, ti = t.y * 12 + t.m - 1 - months;
      b.period.from = month_start(fi / 12, fi % 12 + 1);
      b.period.to = month_end(ti / 12, ti % 12 + 1);
      switch (a.kind) {
        case period_kind::year: b = year_period(fi / 12); break;
        case period_kind::quarter:
          b = quarter_period(fi / 12, (fi % 12) / 3 + 1);
          break;
        case period_kind::month: b = month_period(fi / 12, fi % 12 + 1); break;
        case period_kind::half:
          b = half_period(fi / 12, (fi % 12) / 6 + 1);
          break;
        default:
          b.period.label = b.period.from + " to " + b.period.to;
          b.kind = period_kind::range;
      }
    }
    r.atoms.insert(r.atoms.begin(), b);
    r.compare = true;
  }
  // Ranges: between A and B, from A to B, since A, before A, after A.
  // "change between 2024 and 2025": two periods compared, not a range.
  if (range_state == 2 && r.compare && r.atoms.size() == range_atom + 2
      && r.atoms[range_atom].kind == r.atoms.back().kind
      && r.atoms.back().kind != period_kind::range)
    range_state = 0;
  if (range_state == 2 && r.atoms.size() >= range_atom + 2) {
    auto a = r.atoms[range_atom].period;
    auto b = r.atoms.back().period;
    r.atoms.resize(range_atom);
    r.atoms.push_back(
      {{a.from, b.to, a.from + " to " + b.to}, period_kind::range});
  }
  if (since_before_after != 0 && r.atoms.size() > sba_atom) {
    auto a = r.atoms[sba_atom].period;
    r.atoms.resize(sba_atom);
    if (since_before_after == 1)
      r.atoms.push_back(
        {{a.from, s.coverage_to, "since " + a.from}, period_kind::range});
    else if (since_before_after == 2)
      r.atoms.push_back(
        {{s.coverage_from, add_days(a.from, -1), "before " + a.from},
         period_kind::range});
    else
      r.atoms.push_back({{add_days(a.to, 1), s.coverage_to, "after " + a.to},
                         period_kind::range});
  }

  if (!r.duration.empty())
    return refuse(plan_refusal::unsupported,
                  understood_text() + "'How many " + r.duration
                    + "' asks for a duration, and the catalog measures "
                      "amounts and counts, not time between events. "
                    + examples_text());
  if (r.restricted)
    return refuse(plan_refusal::restricted,
                  "I cannot answer this: " + s.restricted_reason + ". "
                    + examples_text());
  if (out.refusal == plan_refusal::ambiguous)
    return refuse(plan_refusal::ambiguous, out.message + " " + examples_text());
  if (!r.unknown.empty()) {
    std::string msg = understood_text() + "I do not know what ";
    for (size_t i = 0; i < r.unknown.size(); ++i)
      msg += (i > 0 ? (i + 1 == r.unknown.size() ? " and " : ", ") : "")
             + ("'" + r.unknown[i] + "'");
    msg += r.unknown.size() == 1 ? " means" : " mean";
    msg += " in the sales data, so I will not guess.";
    // Name the valid values of a dimension the question names.
    for (int d : r.dims_grouped) {
      auto names = value_names(s.dimensions[static_cast<size_t>(d)]);
      if (!names.empty())
        msg += " The " + s.dimensions[static_cast<size_t>(d)].name
               + " values in the data are: " + list_or(names) + ".";
    }
    return refuse(plan_refusal::not_understood, msg + " " + examples_text());
  }

  // Periods: inside the data's coverage, like compared with like.
  for (auto& a : r.atoms) {
    if (a.period.to < s.coverage_from || a.period.from > s.coverage_to)
      return refuse(plan_refusal::out_of_period,
                    "The sales data cover " + s.coverage_from + " to "
                      + s.coverage_to + ", so there are no figures for "
                      + a.period.label
                      + ". Ask about a period inside that range.");
    if (a.period.from > a.period.to)
      return refuse(plan_refusal::ambiguous,
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
  {
    std::vector<period_atom> unique;
    for (auto& a : r.atoms)
      if (std::none_of(unique.begin(), unique.end(), [&](auto& u) {
            return u.period.from == a.period.from && u.period.to == a.period.to;
          }))
        unique.push_back(a);
    r.atoms = std::move(unique);
  }
  for (auto& a : r.atoms)
    if (a.kind != r.atoms.front().kind)
      return refuse(plan_refusal::ambiguous,
                    understood_text()
                      + "The question names periods of different kinds ("
                      + r.atoms.front().period.label + ", " + a.period.label
                      + "); ask for one period, or compare periods of the "
                        "same kind. "
                      + examples_text());
  for (auto& a : r.atoms)
    r.p.periods.push_back(a.period);

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
      return refuse(plan_refusal::ambiguous,
                    understood_text()
                      + "The question groups by two time units; ask for "
                        "one. "
                      + examples_text());
    r.p.time_group = g;
  }
  if (r.average) {
    if (r.p.time_group != time_grain::none) {
      r.p.average_over = r.p.time_group;
      r.p.time_group = time_grain::none;
    }
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

  // The metric: said, or implied by "how much ... sold" / "how many ...
  // sold" / "best-selling".
  auto* amount = s.metric(s.default_amount);
  auto* count_sold = s.metric(s.default_count_sold);
  auto reachable_at_amount = [&](const semantic_dimension* d) {
    auto& g = *s.grain(amount->at.front().first);
    auto known = known_aliases(s);
    for (auto& e : d->exprs)
      if (joins_for(s, g, expression_aliases(e, known)))
        return true;
    return false;
  };
  // "cancelled orders by payment method": the value's own words name what
  // to count, when they name one metric.
  auto metric_named_by_values = [&]() -> const semantic_metric* {
    const semantic_metric* found = nullptr;
    for (auto& [di, said] : r.values)
      for (auto& [vi, text] : said) {
        int mi = metric_in_phrase(*lex_, text);
        if (mi < 0)
          continue;
        auto* m = &s.metrics[static_cast<size_t>(mi)];
        if (found != nullptr && found != m)
          return nullptr;
        found = m;
        r.understood("'" + text + "' -> " + m->label);
      }
    return found;
  };
  bool product_like = false;
  for (auto* d : r.p.group_by)
    product_like = product_like || !reachable_at_amount(d);
  for (auto& f : r.p.filters)
    product_like = product_like || !reachable_at_amount(f.dim);
  if (r.p.metrics.empty()) {
    if (r.how_much && !r.sell && r.atoms.empty() && r.p.group_by.empty()
        && r.p.time_group == time_grain::none) {
      // "how much is a brake bleed?": a price, or the sales of it? Neither
      // a verb of selling nor a period says.
      return refuse(plan_refusal::ambiguous,
                    understood_text()
                      + "'How much' with no period and no verb such as "
                        "'sold' could ask for a price or for sales; the "
                        "sales data hold sales only. "
                      + examples_text());
    }
    if (r.how_much) {
      r.p.metrics.push_back(amount);
      r.understood("'how much' -> " + amount->label);
    } else if (r.how_many && !r.counted_members.empty() && !r.sell) {
      // "how many products are in each category": the size of a list,
      // which is no measure of the sales.
      return refuse(plan_refusal::unsupported,
                    understood_text() + "Counting " + r.counted_members
                      + " themselves is not a measure of the sales data; "
                        "ask how many were sold, or for revenue or orders. "
                      + examples_text());
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
    } else if (auto* m = metric_named_by_values(); m != nullptr) {
      r.p.metrics.push_back(m);
    } else {
      return refuse(plan_refusal::no_metric,
                    understood_text()
                      + "The question does not say what to measure (for "
                        "example revenue, orders or units sold). "
                      + examples_text());
    }
  }
  // "including cancelled ones": those values are counted as well as what
  // the measure counts by default; grouped by their dimension, every value
  // is shown anyway.
  for (auto& [di, said] : r.included) {
    auto* d = &s.dimensions[static_cast<size_t>(di)];
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
  if (r.p.metrics.size() > 3)
    return refuse(plan_refusal::unsupported,
                  understood_text() + "Ask for at most three measures at once. "
                    + examples_text());
  if (r.average && r.p.average_over == time_grain::none) {
    bool inherent
      = std::all_of(r.p.metrics.begin(), r.p.metrics.end(),
                    [](const semantic_metric* m) { return !m->additive; });
    if (!inherent)
      return refuse(plan_refusal::unsupported,
                    understood_text()
                      + "I cannot tell what the average is taken over; ask "
                        "for example for the average monthly figure. "
                      + examples_text());
  }
  if (r.p.share) {
    for (auto* m : r.p.metrics)
      if (!m->additive)
        return refuse(plan_refusal::unsupported,
                      understood_text()
                        + "A share of the total needs a "
                          "measure that adds up, and "
                        + m->label + " does not. " + examples_text());
  }

  // Ranking: a grouping to rank, and how many; "highest first" orders
  // every row.
  if (r.sort && r.rank_n <= 0) {
    r.rank = false;
    if (r.p.group_by.empty() && r.p.time_group == time_grain::none)
      return refuse(plan_refusal::ambiguous,
                    understood_text()
                      + "The question asks for an order, but not of what "
                        "(products, countries, months...). "
                      + examples_text());
    r.p.sorted = true;
  }
  if (r.rank) {
    if (r.p.group_by.empty() && r.p.time_group == time_grain::none) {
      if (!(r.compare || r.p.periods.size() > 1))
        return refuse(plan_refusal::ambiguous,
                      understood_text()
                        + "The question asks for the most or the least, but "
                          "not of what (products, countries, months...). "
                        + examples_text());
    } else {
      r.p.top_n = r.rank_n > 0 ? r.rank_n : r.rank_plural ? 10 : 1;
    }
  }

  // The grain: the first of the metrics' grains where every expression's
  // aliases can be joined in.
  auto known = known_aliases(s);
  const semantic_grain* grain = nullptr;
  std::vector<const semantic_join*> joins;
  std::vector<std::string> dim_exprs(s.dimensions.size());
  bool status_explicit = false;
  for (auto& grain_expr : r.p.metrics.front()->at) {
    // Named, not a structured binding: the lambda below captures it.
    const auto& gname = grain_expr.first;
    auto* g = s.grain(gname);
    std::set<std::string> need;
    bool ok = true;
    for (auto* m : r.p.metrics) {
      auto found = std::find_if(m->at.begin(), m->at.end(),
                                [&](auto& kv) { return kv.first == gname; });
      if (found == m->at.end()) {
        ok = false;
        break;
      }
      auto a = expression_aliases(found->second, known);
      need.insert(a.begin(), a.end());
    }
    if (!ok)
      continue;
    auto pick = [&](const semantic_dimension* d) -> bool {
      auto idx = static_cast<size_t>(d - s.dimensions.data());
      for (auto& x : d->exprs) {
        auto a = expression_aliases(x, known);
        auto trial = need;
        trial.insert(a.begin(), a.end());
        if (joins_for(s, *g, trial)) {
          need = std::move(trial);
          dim_exprs[idx] = x;
          return true;
        }
      }
      return false;
    };
    for (auto* d : r.p.group_by)
      ok = ok && pick(d);
    for (auto& f : r.p.filters)
      ok = ok && pick(f.dim);
    for (auto* m : r.p.metrics) {
      if (m->default_dimension.empty())
        continue;
      auto* d = s.dimension(m->default_dimension);
      bool said = std::find(r.p.group_by.begin(), r.p.group_by.end(), d)
                    != r.p.group_by.end()
                  || std::any_of(r.p.filters.begin(), r.p.filters.end(),
                                 [&](auto& f) { return f.dim == d; });
      if (!said)
        ok = ok && pick(d);
    }
    if (!ok)
      continue;
    auto j = joins_for(s, *g, need);
    if (!j)
      continue;
    grain = g;
    joins = std::move(*j);
    break;
  }
  if (grain == nullptr) {
    std::string what;
    for (auto* d : r.p.group_by)
      what += (what.empty() ? "" : ", ") + d->name;
    for (auto& f : r.p.filters)
      what += (what.empty() ? "" : ", ") + f.dim->name;
    return refuse(
      plan_refusal::unsupported,
      understood_text() + "The catalog cannot compute "
        + r.p.metrics.front()->label + (what.empty() ? "" : " by " + what)
        + (r.p.metrics.size() > 1 ? " together with the other measures" : "")
        + ". " + examples_text());
  }
  r.p.grain = grain;

  // -- compile ----------------------------------------------------------------
  std::vector<std::string> select, group, where;
  std::string time_col = grain->time;
  std::string bucket;
  auto grain_bucket
    = r.p.average_over != time_grain::none ? r.p.average_over : r.p.time_group;
  if (grain_bucket != time_grain::none) {
    bucket = bucket_sql(grain_bucket, time_col);
    select.push_back(bucket + " AS " + std::string{to_string(grain_bucket)});
    r.p.columns.emplace_back(to_string(grain_bucket));
    group.push_back(std::to_string(select.size()));
  } else if (r.p.labelled_periods) {
    std::string cases = "CASE";
    for (auto& pp : r.p.periods)
      cases += " WHEN " + time_col + " BETWEEN " + quote(pp.from) + " AND "
               + quote(pp.to) + " THEN " + quote(pp.label);
    select.push_back(cases + " END AS period");
    r.p.columns.emplace_back("period");
    group.push_back(std::to_string(select.size()));
  }
  for (auto* d : r.p.group_by) {
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    select.push_back(dim_exprs[idx] + " AS " + d->name);
    r.p.columns.push_back(d->name);
    group.push_back(std::to_string(select.size()));
  }
  size_t first_metric = select.size() + 1;
  for (auto* m : r.p.metrics) {
    auto found = std::find_if(m->at.begin(), m->at.end(), [&](auto& kv) {
      return kv.first == grain->name;
    });
    select.push_back(found->second + " AS " + column_name(*m));
    r.p.columns.push_back(column_name(*m));
  }
  // WHERE: default filters, the question's filters, the periods.
  for (auto* m : r.p.metrics) {
    if (m->default_dimension.empty())
      continue;
    auto* d = s.dimension(m->default_dimension);
    bool said = std::find(r.p.group_by.begin(), r.p.group_by.end(), d)
                  != r.p.group_by.end()
                || std::any_of(r.p.filters.begin(), r.p.filters.end(),
                               [&](auto& f) { return f.dim == d; });
    if (said) {
      status_explicit = true;
      continue;
    }
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    std::string in;
    for (auto& v : m->default_values)
      in += (in.empty() ? "" : ", ") + (d->numeric ? v : quote(v));
    auto cond = dim_exprs[idx] + " IN (" + in + ")";
    if (std::find(where.begin(), where.end(), cond) == where.end())
      where.push_back(cond);
  }
  (void)status_explicit;
  // A group with no value (e.g. no store: not a store sale) is not a group.
  for (auto* d : r.p.group_by) {
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    bool filtered = std::any_of(r.p.filters.begin(), r.p.filters.end(),
                                [&](auto& f) { return f.dim == d; });
    if (!filtered)
      where.push_back(dim_exprs[idx] + " IS NOT NULL");
  }
  std::string share_cond;
  for (auto& f : r.p.filters) {
    auto idx = static_cast<size_t>(f.dim - s.dimensions.data());
    std::string in;
    for (auto& v : f.values)
      in += (in.empty() ? "" : ", ") + (f.dim->numeric ? v : quote(v));
    auto cond = f.values.size() == 1
                  ? dim_exprs[idx] + " = "
                      + (f.dim->numeric ? f.values[0] : quote(f.values[0]))
                  : dim_exprs[idx] + " IN (" + in + ")";
    if (r.p.share && r.p.group_by.empty() && share_cond.empty()
        && &f == &r.p.filters.back()) {
      share_cond = cond; // the part whose share of the whole is asked
      continue;
    }
    where.push_back(cond);
  }
  if (!r.p.periods.empty()) {
    std::string any;
    for (auto& pp : r.p.periods) {
      auto c = pp.from == pp.to ? time_col + " = " + quote(pp.from)
                                : time_col + " BETWEEN " + quote(pp.from)
                                    + " AND " + quote(pp.to);
      any += (any.empty() ? "" : " OR ") + c;
    }
    where.push_back(r.p.periods.size() > 1 ? "(" + any + ")" : any);
  }
  if (r.p.share && r.p.group_by.empty() && share_cond.empty()
      && r.p.time_group == time_grain::none)
    return refuse(plan_refusal::ambiguous,
                  understood_text()
                    + "A share needs a part (a channel, a country, a "
                      "category...) or a breakdown to divide. "
                    + examples_text());

  std::string from = "FROM " + grain->from;
  for (auto* j : joins)
    from += " " + j->sql;
  auto where_sql = where.empty() ? std::string{} : " WHERE " + [&] {
    std::string w;
    for (size_t i = 0; i < where.size(); ++i)
      w += (i > 0 ? " AND " : "") + where[i];
    return w;
  }();
  auto join_list = [](const std::vector<std::string>& xs) {
    std::string o;
    for (size_t i = 0; i < xs.size(); ++i)
      o += (i > 0 ? ", " : "") + xs[i];
    return o;
  };
  std::string sql;
  if (!share_cond.empty()) {
    // share of the part in the whole: one row.
    auto& m = *r.p.metrics.front();
    auto found = std::find_if(m.at.begin(), m.at.end(), [&](auto& kv) {
      return kv.first == grain->name;
    });
    std::string inner
      = "SELECT "
        + (bucket.empty()
             ? ""
             : bucket + " AS " + std::string{to_string(r.p.time_group)} + ", ")
        + "(" + share_cond + ") AS part, " + found->second + " AS v " + from
        + where_sql + " GROUP BY " + (bucket.empty() ? "1" : "1, 2");
    r.p.columns.clear();
    if (!bucket.empty()) {
      r.p.columns.emplace_back(to_string(r.p.time_group));
      sql = "SELECT " + std::string{to_string(r.p.time_group)}
            + ", 1.0 * SUM(CASE WHEN part THEN v ELSE 0 END) / SUM(v) AS share "
              "FROM ("
            + inner + ") GROUP BY 1 ORDER BY 1";
    } else {
      sql = "SELECT 1.0 * SUM(CASE WHEN part THEN v ELSE 0 END) / SUM(v) AS "
            "share FROM ("
            + inner + ")";
    }
    r.p.columns.emplace_back("share");
  } else {
    sql = "SELECT " + join_list(select) + " " + from + where_sql;
    if (!group.empty())
      sql += " GROUP BY " + join_list(group);
    if (r.p.average_over != time_grain::none) {
      std::string outer;
      std::vector<std::string> cols;
      for (auto* d : r.p.group_by)
        cols.push_back(d->name);
      std::string avgs;
      for (auto* m : r.p.metrics)
        avgs += (avgs.empty() ? "" : ", ")
                + ("AVG(" + column_name(*m) + ") AS " + column_name(*m));
      sql = "SELECT " + (cols.empty() ? "" : join_list(cols) + ", ") + avgs
            + " FROM (" + sql + ")"
            + (cols.empty() ? "" : " GROUP BY " + join_list(cols));
      r.p.columns.erase(r.p.columns.begin());
      r.p.notes.push_back("The average is taken over the "
                          + std::string{to_string(r.p.average_over)}
                          + "s of the period.");
    } else if (r.p.share) {
      // share of each group in the total of its time bucket (or overall).
      std::vector<std::string> keys;
      if (r.p.time_group != time_grain::none)
        keys.emplace_back(to_string(r.p.time_group));
      for (auto* d : r.p.group_by)
        keys.push_back(d->name);
      auto mcol = column_name(*r.p.metrics.front());
      std::string part
        = r.p.time_group != time_grain::none
            ? " PARTITION BY " + std::string{to_string(r.p.time_group)}
            : "";
      sql = "SELECT " + join_list(keys) + ", 1.0 * " + mcol + " / SUM(" + mcol
            + ") OVER (" + part + ") AS share FROM (" + sql + ")";
      r.p.columns = keys;
      r.p.columns.emplace_back("share");
      sql += " ORDER BY "
             + (r.p.time_group != time_grain::none ? std::string{"1, "}
                                                   : std::string{})
             + "share DESC";
    } else if (r.p.sorted) {
      sql += " ORDER BY " + std::to_string(first_metric)
             + (r.p.ascending ? " ASC" : " DESC");
    } else if (r.p.labelled_periods) {
      sql += " ORDER BY 1";
    } else if (r.p.top_n > 0) {
      sql += " ORDER BY " + std::to_string(first_metric)
             + (r.p.ascending ? " ASC" : " DESC");
      if (r.p.time_group != time_grain::none && !r.p.group_by.empty()) {
        // top N within each period would need a window; rank the pairs.
      }
      sql += " LIMIT " + std::to_string(r.p.top_n);
    } else if (r.p.time_group != time_grain::none) {
      sql += " ORDER BY 1"
             + std::string{r.p.group_by.empty()
                             ? ""
                             : ", " + std::to_string(first_metric) + " DESC"};
    } else if (!r.p.group_by.empty()) {
      sql += " ORDER BY " + std::to_string(first_metric) + " DESC";
    }
  }
  r.p.sql = std::move(sql);
  out.p = std::move(r.p);
  return std::move(out);
}

} // namespace candor::data
