// The data planner's words: a question cut into tokens, time words and
// numbers, dates, and the reading of a question into items (longest phrase
// of the lexicon first; planner_lexicon.cpp builds the lexicon).

#include <algorithm>
#include <cstdio>
#include <set>

#include "data/local/planner_detail.hpp"

namespace candor::data {

using namespace plan_detail;

namespace plan_detail {

// -- words ------------------------------------------------------------------

/// Lower-case ASCII words and numbers; an ISO date stays one token;
/// apostrophes vanish ("children's" -> "childrens"); '%' is "percent";
/// everything else separates.
std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty())
      out.push_back(std::move(cur));
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (std::isdigit(c) && cur.empty() && i + 10 <= text.size()) {
      auto s = text.substr(i, 10);
      bool iso = s[4] == '-' && s[7] == '-';
      for (size_t k : {0, 1, 2, 3, 5, 6, 8, 9})
        iso = iso && std::isdigit(static_cast<unsigned char>(s[k]));
      if (iso
          && (i + 10 == text.size()
              || !std::isalnum(static_cast<unsigned char>(text[i + 10])))) {
        out.emplace_back(s);
        i += 9;
        continue;
      }
    }
    if (std::isalnum(c)) {
      cur.push_back(static_cast<char>(std::tolower(c)));
    } else if (c == '\'') {
      // drop
    } else if (c == 0xE2 && i + 2 < text.size()
               && static_cast<unsigned char>(text[i + 1]) == 0x80
               && static_cast<unsigned char>(text[i + 2]) == 0x99) {
      i += 2; // ’
    } else if (c == ',' && !cur.empty() && std::isdigit(cur.back())
               && i + 3 < text.size() + 0
               && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      // 3,000: keep the digits together
    } else if (c == '%') {
      flush();
      out.emplace_back("percent");
    } else {
      flush();
    }
  }
  flush();
  return out;
}

std::string join_words(const std::vector<std::string>& w, size_t b, size_t e) {
  std::string out;
  for (size_t i = b; i < e; ++i) {
    if (i > b)
      out += ' ';
    out += w[i];
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

/// Words that carry no content of their own here.
// clang-format off
constexpr std::string_view function_words[] = {
  "a", "an", "the", "of", "in", "on", "at", "for", "to", "from", "with",
  "and", "or", "is", "are", "was", "were", "be", "been", "being", "do",
  "does", "did", "done", "have", "has", "had", "we", "our", "us", "i", "me",
  "my", "you", "your", "they", "their", "it", "its", "this", "that",
  "these", "those", "what", "whats", "how", "show", "give", "list", "tell",
  "get", "got", "see", "find", "know", "want", "need", "please", "can",
  "could", "would", "will", "should", "there", "here", "all", "total",
  "totals", "overall", "whole", "combined", "altogether", "figure",
  "figures", "number", "amount", "value", "data", "stats", "statistics",
  "period", "so", "far", "up", "out", "about", "over", "during", "within",
  "among", "as", "also", "just", "only", "both", "any", "some", "make",
  "made", "earn", "earned", "bring", "brought", "generate", "generated",
  "come", "came", "go", "went", "into", "report", "summary", "look", "like",
  "looked", "much", "many", "s", "ve", "re", "d", "ll", "t",
  "via", "through", "e", "g", "eg", "ie", "respectively", "each", "every",
  "across", "break", "broken", "down", "breakdown", "split", "grouped",
  "group", "by", "per", "which", "when", "where", "sum", "count", "did",
  "happen", "happened", "thanks", "thank", "quick", "quickly", "roughly",
  "often", "frequently",
  "exactly", "approximately", "approx", "around", "about", "put", "pull",
  "need", "calculate", "compute", "shows", "showing", "including",
  "included", "separately", "side", "result", "results", "table", "chart",
  "graph", "plot", "numbers", "pls", "plz", "hey", "hi", "one", "whole",
  "together", "some", "sold", "sell", "sells", "selling", "sale", "bought",
  "buy", "ordered", "spent", "spend", "paid", "pay", "money", "euros",
  "euro", "eur", "total", "did", "we", "receive", "received", "take",
  "took", "taken", "compare", "compared", "comparison", "versus", "vs",
  "against", "difference", "between", "change", "changed", "grow", "grew",
  "growth", "trend", "develop", "developed", "evolve", "evolved", "since",
  "until", "till", "through", "after", "before", "best", "worst", "most",
  "least", "top", "bottom", "highest", "lowest", "biggest", "smallest",
  "largest", "fewest", "more", "less", "popular", "share", "percentage",
  "percent", "proportion", "fraction", "portion", "average", "avg", "mean",
  "last", "past", "previous", "prior", "this", "current", "year", "years",
  "month", "months", "quarter", "quarters", "week", "weeks", "day", "days",
  "issue", "issued", "placed", "opened", "open", "delivered", "shipped",
  "created", "registered", "signed", "contribute", "contributed",
  "contributes", "different", "distinct", "unique", "ones", "new", "bring",
  "brings", "generated", "generate", "achieve", "achieved", "record",
  "recorded", "register", "booked", "book", "closed", "close", "ended",
  "end", "happen", "going", "went", "come", "coming", "doing", "performed",
  "perform", "performance", "looking", "look", "actually", "currently",
  "something", "anything", "anyone", "somebody", "anybody",
  "really", "only", "still", "then", "than", "vs", "per", "way", "ways"};
// clang-format on

bool is_function_word(std::string_view w) {
  static const std::set<std::string_view> words(std::begin(function_words),
                                                std::end(function_words));
  return words.count(w) > 0;
}

constexpr std::string_view month_names[12][3] = {
  {"january", "jan", ""}, {"february", "feb", ""}, {"march", "mar", ""},
  {"april", "apr", ""},   {"may", "", ""},         {"june", "jun", ""},
  {"july", "jul", ""},    {"august", "aug", ""},   {"september", "sep", "sept"},
  {"october", "oct", ""}, {"november", "nov", ""}, {"december", "dec", ""}};

constexpr std::string_view month_label[12]
  = {"January", "February", "March",     "April",   "May",      "June",
     "July",    "August",   "September", "October", "November", "December"};

int month_of(std::string_view w) {
  for (int m = 0; m < 12; ++m)
    for (auto n : month_names[m])
      if (!n.empty() && n == w)
        return m + 1;
  return 0;
}

int number_of(std::string_view w) {
  constexpr std::string_view words[]
    = {"zero",  "one",   "two",  "three", "four",   "five",  "six",
       "seven", "eight", "nine", "ten",   "eleven", "twelve"};
  for (int i = 0; i < 13; ++i)
    if (words[i] == w)
      return i;
  if (all_digits(w) && w.size() <= 3)
    return std::stoi(std::string{w});
  return -1;
}

int year_of(std::string_view w) {
  if (w.size() == 4 && all_digits(w)) {
    int y = std::stoi(std::string{w});
    if (y >= 1900 && y <= 2099)
      return y;
  }
  return 0;
}

// -- dates ------------------------------------------------------------------

ymd parse_date(std::string_view s) {
  return {std::stoi(std::string{s.substr(0, 4)}),
          std::stoi(std::string{s.substr(5, 2)}),
          std::stoi(std::string{s.substr(8, 2)})};
}

int days_in_month(int y, int m) {
  constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

std::string date_text(int y, int m, int d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, d);
  return buf;
}

std::string month_start(int y, int m) {
  return date_text(y, m, 1);
}

std::string month_end(int y, int m) {
  return date_text(y, m, days_in_month(y, m));
}

/// Days since 1970-01-01 (civil calendar).
int64_t day_number(ymd t) {
  int y = t.y - (t.m <= 2 ? 1 : 0);
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int mp = (t.m + 9) % 12;
  int doy = (153 * mp + 2) / 5 + t.d - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + doe - 719468;
}

ymd from_day_number(int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<int>(y + (m <= 2 ? 1 : 0)), m, d};
}

std::string add_days(std::string_view date, int64_t n) {
  auto t = from_day_number(day_number(parse_date(date)) + n);
  return date_text(t.y, t.m, t.d);
}

/// "zones D and E", "shipping zone C": a dimension followed by values as
/// stored that are no phrase of their own (short codes) names those values;
/// the dimension word then only says whose values they are.
void read_raw_values(const planner::lexicon& lex, std::vector<item>& items) {
  for (size_t i = 0; i + 1 < items.size(); ++i) {
    auto* de = items[i].get(lx::dimension);
    if (de == nullptr || items[i].is(lx::value))
      continue;
    auto raw = [&](size_t j) {
      auto& x = items[j];
      if (x.end - x.begin != 1 || !(x.entries.empty() || x.is(lx::filler))
          || x.year != 0 || x.month != 0 || x.quarter != 0)
        return -1;
      return lex.raw_value(de->index, x.said);
    };
    size_t j = i + 1;
    bool any = false;
    while (j < items.size()) {
      int v = raw(j);
      if (v < 0)
        break;
      items[j] = item{items[j].begin,
                      items[j].end,
                      items[j].said,
                      {entry{lx::value, de->index, v}}};
      any = true;
      ++j;
      if (j + 1 < items.size()
          && (items[j].said == "and" || items[j].said == "or")
          && raw(j + 1) >= 0) {
        items[j].entries.clear();
        items[j].function = true;
        ++j;
        continue;
      }
      break;
    }
    if (any) {
      items[i].entries.clear();
      items[i].function = true;
      i = j - 1;
    }
  }
}

int metric_in_phrase(const planner::lexicon& lex, std::string_view phrase) {
  int found = -1;
  for (auto& word : tokenize(phrase)) {
    auto hit = lex.phrases.find(word);
    if (hit == lex.phrases.end())
      continue;
    for (auto& e : hit->second)
      if (e.kind == lx::metric) {
        if (found >= 0 && found != e.index)
          return -1;
        found = e.index;
      }
  }
  return found;
}

std::vector<item> read_items(const planner::lexicon& lex,
                             const std::vector<std::string>& said) {
  // Misspelt words are corrected before phrases are matched, so that
  // "avarage order value" is the phrase "average order value": a word that
  // is no phrase's, no function word and no number, one slip away from
  // exactly one word of the phrases.
  std::vector<std::string> w = said;
  std::vector<bool> fixed(w.size(), false);
  for (size_t i = 0; i < w.size(); ++i) {
    auto& word = w[i];
    if (lex.phrases.count(word) > 0 || is_function_word(word)
        || number_of(word) >= 0 || year_of(word) != 0 || month_of(word) != 0)
      continue;
    if (auto* fix = lex.correction(word)) {
      word = *fix;
      fixed[i] = true;
    }
  }
  std::vector<item> out;
  for (size_t i = 0; i < w.size();) {
    item it;
    it.begin = i;
    size_t best = 0;
    auto starts = lex.longest_from.find(w[i]);
    size_t most = starts == lex.longest_from.end() ? 0 : starts->second;
    for (size_t n = std::min(most, w.size() - i); n > 0; --n) {
      auto found = lex.phrases.find(join_words(w, i, i + n));
      if (found != lex.phrases.end()) {
        best = n;
        it.entries = found->second;
        break;
      }
    }
    const auto& word = w[i];
    if (best == 0 || best == 1) {
      // Time atoms and numbers win over one-word lexicon readings.
      if (int y = year_of(word); y != 0) {
        it.year = y;
        it.entries.clear();
        best = 1;
      } else if (word.size() == 10 && word[4] == '-') {
        it.date = word;
        best = 1;
      } else if (word.size() == 2 && word[0] == 'q' && word[1] >= '1'
                 && word[1] <= '4') {
        it.quarter = word[1] - '0';
        it.entries.clear();
        best = 1;
      } else if (int m = month_of(word);
                 m != 0
                 && (m != 5 || (i + 1 < w.size() && year_of(w[i + 1]) != 0)
                     || (i > 0 && (w[i - 1] == "in" || w[i - 1] == "of")))) {
        it.month = m;
        it.entries.clear();
        best = 1;
      } else if (best == 0) {
        if (int n = number_of(word); n >= 0) {
          it.number = n;
        } else if (word == "us" && i > 0 && w[i - 1] == "the") {
          it.unknown = true; // "the US", a place, not "us"
        } else if (is_function_word(word)) {
          it.function = true;
        } else {
          it.unknown = true;
        }
        best = 1;
      }
    }
    it.end = i + best;
    it.said = join_words(said, i, i + best);
    if (std::any_of(fixed.begin() + static_cast<ptrdiff_t>(i),
                    fixed.begin() + static_cast<ptrdiff_t>(i + best),
                    [](bool b) { return b; }))
      it.corrected = join_words(w, i, i + best);
    out.push_back(std::move(it));
    i += best;
  }
  return out;
}

} // namespace plan_detail

} // namespace candor::data
