// The data planner's first stage: the items of a question (lexicon
// matches, time atoms, numbers) read one by one, each to one meaning by
// its context. Nothing here refuses; what cannot be read is kept in
// `unknown` and refused by check_words.

#include "data/local/planner_reading.hpp"

#include <algorithm>

namespace candor::data::plan_detail {

namespace {

bool day_of_month(const item* it) {
  return it != nullptr && it->number >= 1 && it->number <= 31;
}

bool ranks(const item* it) {
  return it != nullptr
         && (it->is(lx::rank_desc) || it->is(lx::rank_asc) || it->is(lx::top));
}

/// A year, a date, a month or a quarter; false when `it` is none.
bool read_calendar(reading& r, size_t& i) {
  auto& it = r.items[i];
  if (it.year != 0) {
    // Attach to a month/quarter/half said just before ("march 2025",
    // "q1 of 2024"); one said earlier waits for every year named.
    bool adjacent
      = !r.partials.empty() && i > 0
        && (r.partial_item + 1 == i
            || (r.partial_item + 2 == i && r.items[i - 1].function));
    if (adjacent) {
      for (auto& pt : r.partials)
        r.atoms.push_back(partial_period(it.year, pt.kind, pt.n));
      r.partials.clear();
    } else {
      r.pending_years.push_back(it.year);
      r.atoms.push_back(year_period(it.year));
    }
    return true;
  }
  if (!it.date.empty()) {
    r.atoms.push_back({{it.date, it.date, it.date}, period_kind::day});
    return true;
  }
  if (it.month == 0 && it.quarter == 0)
    return false;
  auto kind = it.month != 0 ? period_kind::month : period_kind::quarter;
  int n = it.month != 0 ? it.month : it.quarter;
  auto* after = r.at(i + 2);
  if (i > 0 && r.items[i - 1].year != 0 && !r.atoms.empty()
      && r.atoms.back().kind == period_kind::year
      && r.atoms.back().period.label == std::to_string(r.items[i - 1].year)) {
    // "2024 q1": a year just before takes it.
    int y = r.items[i - 1].year;
    r.atoms.pop_back();
    r.pending_years.pop_back();
    r.atoms.push_back(kind == period_kind::month ? month_period(y, n)
                                                 : quarter_period(y, n));
  } else if (kind == period_kind::month && day_of_month(r.at(i + 1))
             && (after == nullptr
                 || !(after->is(lx::dimension) || after->is(lx::unit_word)))) {
    // "march 15", "december 24 2025": a day of the month.
    r.partials.push_back({period_kind::day, n * 100 + r.items[i + 1].number});
    r.partial_item = ++i;
  } else {
    r.partials.push_back({kind, n});
    r.partial_item = i;
  }
  return true;
}

/// A number: a rank size ("top 5", "5 best", "which 3 countries"), the
/// count of a relative span ("last 6 months", read with "last"), or a day
/// of a month ("15 march", "1-7 december", "24 to 31 december").
void read_number(reading& r, size_t& i) {
  auto& it = r.items[i];
  auto* nx = r.at(i + 1);
  if (nx && nx->is(lx::dimension) && it.number > 0) {
    r.rank_n = it.number;
    return;
  }
  if (ranks(nx) || (i > 0 && ranks(&r.items[i - 1]))) {
    r.rank_n = it.number;
    return;
  }
  if (i > 0 && r.items[i - 1].is(lx::relative) && nx && nx->is(lx::unit_word))
    return; // handled with the relative word
  // The first of two days opens a range up to the second.
  if (day_of_month(&it)) {
    const item* month = nx != nullptr && nx->month != 0 ? nx : nullptr;
    bool span = false;
    auto* second = r.at(i + 2);
    auto* third = r.at(i + 3);
    if (month == nullptr && day_of_month(nx) && second && second->month != 0) {
      month = second;
      span = true;
    } else if (month == nullptr && nx && nx->is(lx::range_to)
               && day_of_month(second) && third && third->month != 0) {
      month = third;
      span = true;
    }
    if (month != nullptr) {
      r.partials.push_back({period_kind::day, month->month * 100 + it.number});
      if (span) {
        if (r.range_state == 0) {
          r.range_state = 2;
          r.range_atom = r.atoms.size();
        }
        r.partial_item = i;
      } else {
        r.partial_item = ++i; // the month is taken
      }
      return;
    }
  }
  r.unknown.push_back(it.said);
}

/// "last quarter", "this year", "last 6 months": a span up to the data's
/// latest date; the number and the unit are consumed.
void read_relative(reading& r, size_t& i) {
  auto& it = r.items[i];
  bool last = it.get(lx::relative)->arg == 0;
  int n = 1;
  size_t k = 1;
  if (auto* nx = r.at(i + 1); nx && nx->number > 0) {
    n = nx->number;
    k = 2;
  }
  auto* unit = r.at(i + k);
  // Without a unit ("the last one"), a function word here.
  auto* ue = unit != nullptr ? unit->get(lx::unit_word) : nullptr;
  if (ue == nullptr)
    return;
  auto atom = relative_period(r.latest, r.s.coverage_to, last, n,
                              static_cast<time_grain>(ue->arg));
  r.p.notes.push_back("'" + join_words(r.words, it.begin, unit->end)
                      + "' is read as " + atom.period.from + " to "
                      + atom.period.to + ": the data end on " + r.s.coverage_to
                      + ".");
  r.atoms.push_back(std::move(atom));
  i += k;
}

/// The words that shape the question rather than name a thing: time cues,
/// "how many", groupings, ranking, share, comparison. False when `it`
/// carries none of them.
bool read_cue(reading& r, size_t& i) {
  auto& it = r.items[i];
  if (it.is(lx::filler))
    return true;
  if (it.is(lx::ytd)) {
    auto from = date_text(r.latest.y, 1, 1);
    r.atoms.push_back(
      {{from, r.s.coverage_to, "year to date " + std::to_string(r.latest.y)},
       period_kind::range});
    r.p.notes.push_back("Year to date is read as " + from + " to "
                        + r.s.coverage_to
                        + ", the latest order date in the data.");
    return true;
  }
  if (it.is(lx::relative)) {
    read_relative(r, i);
    return true;
  }
  if (it.is(lx::half)) {
    r.partials.push_back({period_kind::half, it.get(lx::half)->arg});
    r.partial_item = i;
    return true;
  }
  if (it.is(lx::ordinal)) {
    auto* nx = r.at(i + 1);
    if (nx && nx->is(lx::unit_word)
        && nx->get(lx::unit_word)->arg
             == static_cast<int>(time_grain::quarter)) {
      r.partials.push_back({period_kind::quarter, it.get(lx::ordinal)->arg});
      r.partial_item = ++i;
    }
    return true;
  }
  if (it.is(lx::range_from)) {
    r.range_state = 1;
    r.range_atom = r.atoms.size();
    return true;
  }
  if (it.is(lx::range_to)) {
    if (r.range_state == 1)
      r.range_state = 2;
    return true;
  }
  if (it.is(lx::since) || it.is(lx::before) || it.is(lx::after)) {
    r.since_before_after = it.is(lx::since) ? 1 : it.is(lx::before) ? 2 : 3;
    r.sba_atom = r.atoms.size();
    return true;
  }
  if (it.is(lx::how_many)) {
    // "how many days between an order and its refund": a duration, which
    // no measure of the catalog is.
    if (auto* nx = r.at(i + 1); nx && nx->is(lx::unit_word))
      r.duration = nx->said;
    else
      r.how_many = true;
    return true;
  }
  if (it.is(lx::how_much)) {
    r.how_much = true;
    return true;
  }
  if (it.is(lx::grain)) {
    r.grains_said.push_back(static_cast<time_grain>(it.get(lx::grain)->arg));
    return true;
  }
  if (it.is(lx::unit_word)) {
    // "by month", "which month", "best month": a grouping.
    r.grains_said.push_back(
      static_cast<time_grain>(it.get(lx::unit_word)->arg));
    if (!it.said.empty() && it.said.back() == 's')
      r.rank_plural = true;
    return true;
  }
  if (it.is(lx::sort)) {
    r.sort = true;
    r.p.ascending = it.get(lx::sort)->arg == 1;
    return true;
  }
  if (it.is(lx::prior)) {
    r.prior = static_cast<time_grain>(it.get(lx::prior)->arg);
    return true;
  }
  if (ranks(&it)) {
    r.rank = true;
    if (it.is(lx::rank_asc) || (it.is(lx::top) && it.get(lx::top)->arg == 1))
      r.p.ascending = true;
    if (auto* e = it.get(lx::rank_desc); e && e->arg == 1)
      r.sell_rank = true;
    return true;
  }
  // Flags with nothing more to read.
  for (auto [kind, flag] :
       {std::pair{lx::share, &r.p.share},
        std::pair{lx::including, &r.including},
        std::pair{lx::combine, &r.combine}, std::pair{lx::compare, &r.compare},
        std::pair{lx::average, &r.average}, std::pair{lx::sell, &r.sell}}) {
    if (it.is(kind)) {
      *flag = true;
      return true;
    }
  }
  // "by", "which": the next item, a dimension or a time unit, is grouped
  // by.
  return it.is(lx::group_cue) || it.is(lx::which);
}

/// A metric, a dimension or a value: what is measured, grouped by or
/// filtered on.
void read_content(reading& r, size_t i) {
  auto& it = r.items[i];
  auto& s = r.s;
  auto* me = it.get(lx::metric);
  auto* de = it.get(lx::dimension);
  auto* ve = it.get(lx::value);
  const item* before = i > 0 ? &r.items[i - 1] : nullptr;
  bool after_group
    = before
      && (before->is(lx::group_cue) || before->is(lx::which)
          || before->is(lx::top)
          || (before->number > 0 && i > 1 && r.items[i - 2].is(lx::top)));
  bool after_how_many = before && before->is(lx::how_many);
  if (de && !ve && !me && after_how_many) {
    // "how many products ...": the thing counted, not a breakdown.
    r.counted_members = it.said;
    return;
  }
  if (de && (after_group || (!ve && !me))) {
    r.dims_grouped.push_back(de->index);
    if (!it.said.empty() && it.said.back() == 's')
      r.rank_plural = true;
    r.understood("'" + it.said + "' -> by "
                 + s.dimensions[static_cast<size_t>(de->index)].name);
    return;
  }
  if (me && (!ve || r.p.metrics.empty())) {
    auto* m = &s.metrics[static_cast<size_t>(me->index)];
    if (std::find(r.p.metrics.begin(), r.p.metrics.end(), m)
        == r.p.metrics.end())
      r.p.metrics.push_back(m);
    r.understood("'" + it.said + "' -> " + m->label);
    return;
  }
  if (ve) {
    // Every reading of the phrase as a value (a phrase may name values of
    // two dimensions; that is ambiguous unless one reading alone).
    std::vector<std::string> dims;
    for (auto& e : it.entries)
      if (e.kind == lx::value)
        dims.push_back(s.dimensions[static_cast<size_t>(e.index)].name);
    if (dims.size() > 1) {
      r.result.refusal = plan_refusal::ambiguous;
      r.result.message = "'" + it.said + "' could be a " + list_or(dims)
                         + "; please say which.";
      return;
    }
    (r.including ? r.included : r.values)[ve->index].emplace_back(ve->arg,
                                                                  it.said);
    if (after_how_many)
      r.counted_dim = ve->index; // "how many club members ..."
    return;
  }
  if (de)
    r.dims_grouped.push_back(de->index);
}

} // namespace

void read_question(reading& r) {
  for (size_t i = 0; i < r.items.size(); ++i) {
    auto& it = r.items[i];
    if (!(it.function || it.is(lx::value) || it.said == "and"
          || it.said == "or"))
      r.including = false;
    if (it.unknown) {
      r.unknown.push_back(it.said);
      continue;
    }
    if (it.function)
      continue;
    if (!it.corrected.empty())
      r.p.notes.push_back("'" + it.said + "' is read as '" + it.corrected
                          + "'.");
    if (read_calendar(r, i))
      continue;
    if (it.number >= 0) {
      read_number(r, i);
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
    if (!read_cue(r, i))
      read_content(r, i);
  }
}

} // namespace candor::data::plan_detail
