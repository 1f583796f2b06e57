#pragma once

// The data planner's internals shared by its two files: the words of a
// question (planner_words.cpp: tokens, dates, the phrase lexicon, reading)
// and their interpretation and compilation (planner.cpp). Internal to
// data/local.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/local/planner.hpp"

namespace candor::data::plan_detail {

std::vector<std::string> tokenize(std::string_view text);
std::string join_words(const std::vector<std::string>& w, size_t b, size_t e);
bool is_function_word(std::string_view w);

// -- dates ------------------------------------------------------------------

struct ymd {
  int y = 0, m = 0, d = 0;
};

ymd parse_date(std::string_view s);
int days_in_month(int y, int m);
std::string date_text(int y, int m, int d);
std::string month_start(int y, int m);
std::string month_end(int y, int m);
std::string add_days(std::string_view date, int64_t n);

// -- the lexicon ------------------------------------------------------------

enum class lx {
  metric,
  dimension,
  value,
  restricted,
  how_many,
  how_much,
  sell,
  rank_desc,
  rank_asc,
  top,
  share,
  compare,
  average,
  group_cue,
  grain,     ///< arg: time_grain; "monthly", "per month"
  unit_word, ///< arg: time_grain; "month", "months"
  which,
  relative, ///< arg: 0 last, 1 this
  ytd,
  range_from, ///< between, from
  range_to,   ///< and (after between), to, until, through
  since,
  before,
  after,
  ordinal, ///< arg: 1..4 (first..fourth)
  half,    ///< arg: 1, 2 ("first half", "h1")
  filler,  ///< a phrase that is a function word
  sort,    ///< arg: 0 descending, 1 ascending; order every row
  prior,   ///< arg: time_grain; "the quarter before", "previous year"
  including, ///< "including cancelled ones": values counted too, not filters
  combine,   ///< "combined", "together": named values summed, not side by side
};

struct entry {
  lx kind;
  int index = -1; ///< metric, dimension index
  int arg = 0;    ///< value index, grain, ...
};

/// One piece of the question: a lexicon match, a time atom or a number.
struct item {
  size_t begin = 0, end = 0; ///< word positions
  std::string said;
  std::vector<entry> entries; ///< lexicon readings (empty for others)
  int year = 0;               ///< a year
  int month = 0;              ///< a month name (1..12)
  int quarter = 0;            ///< q1..q4
  std::string date;           ///< an ISO date
  int number = -1;            ///< a small number
  bool function = false;      ///< a function word
  bool unknown = false;
  std::string corrected; ///< a misspelt word read as this one

  bool is(lx k) const {
    for (auto& e : entries)
      if (e.kind == k)
        return true;
    return false;
  }
  const entry* get(lx k) const {
    for (auto& e : entries)
      if (e.kind == k)
        return &e;
    return nullptr;
  }
};

std::shared_ptr<const planner::lexicon> build_lexicon(const semantic_layer& s);

std::vector<item> read_items(const planner::lexicon& lex,
                             const std::vector<std::string>& w);

/// The one metric a word of `phrase` names ("cancelled orders" -> orders),
/// or -1 (none, or several).
int metric_in_phrase(const planner::lexicon& lex, std::string_view phrase);

/// "zones D and E", "shipping zone C": a dimension followed by values as
/// stored that are no phrase of their own (short codes) names those values.
void read_raw_values(const planner::lexicon& lex, std::vector<item>& items);

} // namespace candor::data::plan_detail
