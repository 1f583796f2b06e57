#pragma once

// The data planner's internals: the words of a question (planner_words.cpp:
// tokens, dates, reading against the phrase lexicon of planner_lexicon.cpp),
// used by the stages that interpret and compile them (planner_reading.hpp).
// Internal to data/local.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
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
  ordinal,   ///< arg: 1..4 (first..fourth)
  half,      ///< arg: 1, 2 ("first half", "h1")
  filler,    ///< a phrase that is a function word
  sort,      ///< arg: 0 descending, 1 ascending; order every row
  prior,     ///< arg: time_grain; "the quarter before", "previous year"
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

namespace candor::data {

/// The phrase lexicon: every phrase of the semantic layer and the
/// planner's own words, with what each can mean (built by
/// plan_detail::build_lexicon, planner_lexicon.cpp).
struct planner::lexicon {
  std::unordered_map<std::string, std::vector<plan_detail::entry>> phrases;
  size_t longest = 1;
  /// First word of a phrase -> the most words of a phrase starting with it
  /// (a word that starts none is looked up alone).
  std::unordered_map<std::string, size_t> longest_from;
  /// Per dimension: a value as stored, lower-cased -> its index; for
  /// short codes ("zones d and e") that are no phrase of their own.
  std::vector<std::unordered_map<std::string, int>> raw;

  int raw_value(int dimension, const std::string& word) const {
    if (dimension < 0 || static_cast<size_t>(dimension) >= raw.size())
      return -1;
    auto& m = raw[static_cast<size_t>(dimension)];
    auto found = m.find(word);
    return found == m.end() ? -1 : found->second;
  }

  /// Every word of a phrase with at least five letters, for corrections.
  std::unordered_set<std::string> vocabulary;
  /// Each vocabulary word and each of its one-letter deletions -> the
  /// words it comes from: two words one slip apart share a key (a changed
  /// letter or two swapped neighbours: a deletion of each; a letter added
  /// or dropped: one word and a deletion of the other).
  std::unordered_map<std::string, std::vector<const std::string*>> deletions;

  static std::vector<std::string> deletes(const std::string& w) {
    std::vector<std::string> out;
    for (size_t i = 0; i < w.size(); ++i)
      out.push_back(w.substr(0, i) + w.substr(i + 1));
    return out;
  }

  void index_deletions() {
    for (auto& c : vocabulary) {
      deletions[c].push_back(&c);
      for (auto& d : deletes(c))
        deletions[d].push_back(&c);
    }
  }

  /// The word of a phrase that `word` is a slip of (one letter added,
  /// dropped, changed, or two neighbours swapped), when there is exactly
  /// one such word and both have at least five letters; else null.
  const std::string* correction(const std::string& word) const {
    if (word.size() < 5 || vocabulary.count(word) > 0)
      return nullptr;
    const std::string* found = nullptr;
    auto keys = deletes(word);
    keys.push_back(word);
    for (auto& k : keys) {
      auto hit = deletions.find(k);
      if (hit == deletions.end())
        continue;
      for (auto* c : hit->second) {
        if (c == found || !one_slip(word, *c))
          continue;
        if (found != nullptr)
          return nullptr; // two readings: not a correction
        found = c;
      }
    }
    return found;
  }

  static bool one_slip(const std::string& a, const std::string& b) {
    if (a == b)
      return false;
    if (a.size() == b.size()) {
      size_t i = 0;
      while (i < a.size() && a[i] == b[i])
        ++i;
      if (a.compare(i + 1, std::string::npos, b, i + 1, std::string::npos) == 0)
        return true; // one letter changed
      return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i]
             && a.compare(i + 2, std::string::npos, b, i + 2,
                          std::string::npos)
                  == 0; // two neighbours swapped
    }
    const auto& longer = a.size() > b.size() ? a : b;
    const auto& shorter = a.size() > b.size() ? b : a;
    size_t i = 0;
    while (i < shorter.size() && longer[i] == shorter[i])
      ++i;
    return longer.compare(i + 1, std::string::npos, shorter, i,
                          std::string::npos)
           == 0; // one letter added or dropped
  }

  void add(const std::string& phrase, plan_detail::entry e) {
    auto words = plan_detail::tokenize(phrase);
    // "the web shop" is "web shop": articles are function words.
    if (words.size() > 1 && (words[0] == "the" || words[0] == "a"))
      words.erase(words.begin());
    if (words.empty())
      return;
    auto key = plan_detail::join_words(words, 0, words.size());
    auto& v = phrases[key];
    for (auto& x : v)
      if (x.kind == e.kind && x.index == e.index && x.arg == e.arg)
        return;
    v.push_back(e);
    longest = std::max(longest, words.size());
    auto& from = longest_from[words[0]];
    from = std::max(from, words.size());
    for (auto& word : words)
      if (word.size() >= 5
          && !std::all_of(word.begin(), word.end(),
                          [](char c) { return c >= '0' && c <= '9'; }))
        vocabulary.insert(word);
  }
};

} // namespace candor::data
