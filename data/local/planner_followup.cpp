// Follow-up questions: "and in 2024?", "break that down by channel", "what
// about e-bikes?" read against the previous question into a standalone one,
// with the planner's own lexicon. Nothing is guessed: a follow-up that names
// nothing the planner knows is left as said (and refused by the planner).

#include "data/local/planner.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "data/local/planner_detail.hpp"

namespace candor::data {

namespace {

using namespace plan_detail;

/// What a piece of a question does to a plan.
enum class part {
  function, ///< a function word, or talk ("and", "what about", "pls")
  metric,   ///< what is measured, with its cues ("how many")
  period,   ///< when
  grouping, ///< "by channel", "monthly", "per quarter"
  value,    ///< a filter: a dimension's value
  ranking,  ///< "top 5", "lowest", "sorted"
  other,    ///< anything else the planner reads (unknown words included)
};

/// Words of talk that carry nothing in a follow-up ("ok, and what about
/// ...", "break that down by ..."); only dropped when the lexicon does not
/// read them as something else.
const std::set<std::string>& talk_words() {
  static const std::set<std::string> words{
    "and",  "what", "about", "how",  "break", "that",   "down", "it",
    "this", "those", "these", "same", "now",  "then",   "instead", "only",
    "just", "ok",   "okay", "pls",  "please", "also", "split", "show",
    "me",   "again", "but", "hm",   "hmm",  "so",     "whats", "what's",
    "hows", "thing", "too", "as",   "well",   "do",   "can", "you",
    "give", "broken", "out", "versus", "vs", "flip", "reverse",
    "unrelated", "btw", "anyway", "oh", "hey", "actually", "other", "way",
    "round", "around", "let", "lets", "let's", "see", "look", "at", "then",
    "compare", "instead"};
  return words;
}

part classify(const std::vector<item>& items, size_t i) {
  const auto& it = items[i];
  // "and" closes a range only after "between" or "from".
  if (it.is(lx::range_to) && it.said == "and") {
    bool opened = false;
    for (size_t j = 0; j < i; ++j)
      opened = opened || items[j].is(lx::range_from);
    if (!opened)
      return part::function;
  }
  if (it.year != 0 || it.month != 0 || it.quarter != 0 || !it.date.empty())
    return part::period;
  if (it.unknown)
    return talk_words().count(it.said) > 0 ? part::function : part::other;
  if (it.function)
    return part::function;
  if (it.number >= 0 && it.entries.empty()) {
    // "top 5", "last 6 months": the number goes with its neighbour.
    if (i > 0 && (items[i - 1].is(lx::top) || items[i - 1].is(lx::rank_desc)
                  || items[i - 1].is(lx::rank_asc)))
      return part::ranking;
    return part::period;
  }
  for (auto& e : it.entries) {
    switch (e.kind) {
      case lx::metric:
      case lx::how_many:
      case lx::how_much:
      case lx::sell:
      case lx::share:
      case lx::average: return part::metric;
      case lx::value: return part::value;
      case lx::dimension:
      case lx::group_cue:
      case lx::grain: return part::grouping;
      case lx::unit_word:
        // "months" after "last 6" is a period; "month" after "by" groups.
        return i > 0 && (items[i - 1].number >= 0
                         || items[i - 1].is(lx::relative))
                 ? part::period
                 : part::grouping;
      case lx::relative:
      case lx::ytd:
      case lx::range_from:
      case lx::range_to:
      case lx::since:
      case lx::before:
      case lx::after:
      case lx::ordinal:
      case lx::half:
      case lx::prior: return part::period;
      case lx::top:
      case lx::rank_desc:
      case lx::rank_asc:
      case lx::sort: return part::ranking;
      case lx::filler: return part::function;
      default: break;
    }
  }
  return part::other;
}

/// The dimension a value item filters on, or -1.
int value_dimension(const item& it) {
  if (const auto* e = it.get(lx::value))
    return e->index;
  return -1;
}

/// Prepositions that belong to the piece they stand before.
bool leads(const item& it) {
  static const std::set<std::string> words{"in", "for", "during", "of",
                                           "from", "since", "on", "at",
                                           "between", "by", "per", "over"};
  return it.function && words.count(it.said) > 0;
}

struct piece {
  part kind = part::other;
  size_t begin = 0, end = 0; ///< item positions, leading prepositions in
  int dimension = -1;        ///< for a value
};

/// The question's pieces: runs of items of one part, each with the
/// prepositions right before it.
std::vector<piece> pieces_of(const std::vector<item>& items) {
  std::vector<piece> out;
  for (size_t i = 0; i < items.size(); ++i) {
    auto k = classify(items, i);
    if (k == part::function)
      continue;
    size_t b = i;
    while (b > 0 && leads(items[b - 1])
           && (out.empty() || out.back().end <= b - 1))
      --b;
    int dim = k == part::value ? value_dimension(items[i]) : -1;
    // "by" followed by a dimension, "and" between values of one dimension
    // and a period's pieces stay one piece.
    if (!out.empty() && out.back().kind == k && out.back().dimension == dim
        && out.back().end >= b) {
      out.back().end = i + 1;
      continue;
    }
    out.push_back({k, b, i + 1, dim});
  }
  return out;
}

/// An item as the planner reads it: a misspelt word as corrected.
const std::string& text_of(const item& it) {
  return it.corrected.empty() ? it.said : it.corrected;
}

std::string words_of(const std::vector<item>& items, size_t b, size_t e) {
  std::string out;
  for (size_t i = b; i < e; ++i)
    out += (out.empty() ? "" : " ") + text_of(items[i]);
  return out;
}

/// The year a question's period names, or 0.
int year_in(const std::vector<item>& items) {
  for (auto& it : items)
    if (it.year != 0)
      return it.year;
  return 0;
}

/// True when the pieces name a month or quarter but no year.
bool needs_year(const std::vector<item>& items, const std::vector<piece>& ps) {
  bool part_of_year = false;
  for (auto& p : ps)
    if (p.kind == part::period)
      for (size_t i = p.begin; i < p.end; ++i) {
        if (items[i].year != 0 || !items[i].date.empty()
            || items[i].is(lx::relative) || items[i].is(lx::ytd))
          return false;
        part_of_year = part_of_year || items[i].month != 0
                       || items[i].quarter != 0 || items[i].is(lx::half);
      }
  return part_of_year;
}

} // namespace

std::string_view to_string(follow_up_kind k) {
  switch (k) {
    case follow_up_kind::standalone: return "standalone";
    case follow_up_kind::period: return "period";
    case follow_up_kind::breakdown: return "breakdown";
    case follow_up_kind::filter: return "filter";
    case follow_up_kind::metric: return "metric";
    case follow_up_kind::ranking: return "ranking";
    case follow_up_kind::combined: return "combined";
  }
  return "standalone";
}

follow_up planner::resolve_follow_up(std::string_view previous,
                                     std::string_view said) const {
  follow_up out;
  auto f_items = read_items(*lex_, tokenize(said));
  auto f = pieces_of(f_items);
  bool f_metric = false, f_other = false;
  std::set<part> changes;
  for (auto& p : f) {
    f_metric = f_metric || p.kind == part::metric;
    if (p.kind != part::metric)
      changes.insert(p.kind);
    f_other = f_other || p.kind == part::other;
  }
  // A question of its own (what it measures and how it is sliced), or one
  // that names nothing to change: taken as said.
  bool own = f_metric && (changes.count(part::period) > 0
                          || changes.count(part::value) > 0
                          || changes.count(part::grouping) > 0);
  if (own || f.empty() || previous.empty()) {
    // Taken as said, without the talk before it ("unrelated, but ...").
    size_t first = 0;
    while (first < f_items.size() && classify(f_items, first) == part::function
           && talk_words().count(f_items[first].said) > 0)
      ++first;
    out.standalone = own ? words_of(f_items, first, f_items.size())
                         : std::string{said};
    out.kind = follow_up_kind::standalone;
    return out;
  }
  bool instead = false;
  for (auto& it : f_items)
    instead = instead || it.said == "instead";
  auto p_items = read_items(*lex_, tokenize(previous));
  auto p = pieces_of(p_items);
  // What the follow-up replaces: the period, the metric, the ranking, the
  // values of the dimensions it names; a time grouping replaces a time
  // grouping. Groupings by dimensions add up.
  std::set<int> dims_said;
  bool time_grouping = false;
  for (auto& x : f) {
    if (x.kind == part::value)
      dims_said.insert(x.dimension);
    if (x.kind == part::grouping)
      for (size_t i = x.begin; i < x.end; ++i)
        time_grouping = time_grouping || f_items[i].is(lx::grain)
                        || f_items[i].is(lx::unit_word);
  }
  auto replaced = [&](const piece& x) {
    switch (x.kind) {
      case part::period: return changes.count(part::period) > 0;
      case part::metric: return f_metric;
      case part::ranking: return changes.count(part::ranking) > 0;
      case part::value: return dims_said.count(x.dimension) > 0;
      case part::grouping: {
        // "by country instead": the new grouping replaces the old.
        if (instead && changes.count(part::grouping) > 0)
          return true;
        // A filter on the dimension grouped by leaves one group: the
        // grouping goes.
        for (size_t i = x.begin; i < x.end; ++i)
          if (const auto* e = p_items[i].get(lx::dimension);
              e != nullptr && dims_said.count(e->index) > 0)
            return true;
        if (!time_grouping)
          return false;
        for (size_t i = x.begin; i < x.end; ++i)
          if (p_items[i].is(lx::grain) || p_items[i].is(lx::unit_word))
            return true;
        return false;
      }
      default: return false;
    }
  };
  // A month, quarter or half said alone ("h2", "just december") replaces
  // the previous question's part of a year in place and keeps its years.
  bool part_only = changes.count(part::period) > 0 && needs_year(f_items, f);
  auto part_of_year = [&](const item& it) {
    return it.month != 0 || it.quarter != 0 || it.is(lx::half)
           || it.is(lx::ordinal);
  };
  bool previous_has_part = false;
  for (auto& it : p_items)
    previous_has_part = previous_has_part || part_of_year(it);
  // The previous question with the replaced pieces left out, then the
  // follow-up's pieces: a metric first, the rest at the end.
  std::vector<bool> keep(p_items.size(), true);
  size_t insert_at = p_items.size();
  std::string inserted;
  for (auto& x : p) {
    if (x.kind == part::period && part_only && previous_has_part) {
      for (size_t i = x.begin; i < x.end; ++i)
        if (part_of_year(p_items[i])) {
          keep[i] = false;
          insert_at = std::min(insert_at, i);
        }
      continue;
    }
    if (replaced(x))
      for (size_t i = x.begin; i < x.end; ++i)
        keep[i] = false;
  }
  std::string head, tail;
  for (auto& x : f) {
    if (x.kind == part::period && part_only && previous_has_part) {
      // Without its prepositions: it takes the old part's place.
      size_t b = x.begin;
      while (b < x.end && f_items[b].function)
        ++b;
      inserted += (inserted.empty() ? "" : " ") + words_of(f_items, b, x.end);
      continue;
    }
    auto text = words_of(f_items, x.begin, x.end);
    if (x.kind == part::metric)
      head += (head.empty() ? "" : " ") + text;
    else
      tail += (tail.empty() ? "" : " ") + text;
  }
  // "just december" after "... in 2025": the year stays.
  if (part_only && !previous_has_part)
    if (int y = year_in(p_items); y != 0)
      tail += " " + std::to_string(y);
  std::string body;
  for (size_t i = 0; i < p_items.size(); ++i) {
    if (i == insert_at)
      body += (body.empty() ? "" : " ") + inserted;
    if (keep[i])
      body += (body.empty() ? "" : " ") + text_of(p_items[i]);
  }
  out.standalone = head;
  for (auto* s : {&body, &tail})
    if (!s->empty())
      out.standalone += (out.standalone.empty() ? "" : " ") + *s;
  size_t kinds = changes.size() - changes.count(part::other) + (f_metric ? 1 : 0);
  if (kinds > 1)
    out.kind = follow_up_kind::combined;
  else if (f_metric)
    out.kind = follow_up_kind::metric;
  else if (changes.count(part::period))
    out.kind = follow_up_kind::period;
  else if (changes.count(part::grouping))
    out.kind = follow_up_kind::breakdown;
  else if (changes.count(part::value))
    out.kind = follow_up_kind::filter;
  else if (changes.count(part::ranking))
    out.kind = follow_up_kind::ranking;
  else
    out.kind = follow_up_kind::combined; // only words it does not know
  (void)f_other;
  return out;
}

} // namespace candor::data
