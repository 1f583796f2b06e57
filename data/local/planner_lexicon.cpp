// The data planner's lexicon: the phrases of the catalog's semantic layer
// (metrics, dimensions, values, restricted and filler phrases) and the
// planner's own words (counting, ranking, comparing, time), each with what
// it can mean.

#include "data/local/planner_detail.hpp"

namespace candor::data::plan_detail {

// -- the lexicon ------------------------------------------------------------

std::shared_ptr<const planner::lexicon> build_lexicon(const semantic_layer& s) {
  using lexicon = planner::lexicon;

  auto lex = std::make_shared<lexicon>();
  for (size_t i = 0; i < s.metrics.size(); ++i) {
    auto& m = s.metrics[i];
    entry e{lx::metric, static_cast<int>(i)};
    lex->add(m.name, e);
    lex->add(m.label, e);
    for (auto& p : m.phrases)
      lex->add(p, e);
  }
  lex->raw.resize(s.dimensions.size());
  for (size_t i = 0; i < s.dimensions.size(); ++i) {
    auto& d = s.dimensions[i];
    entry e{lx::dimension, static_cast<int>(i)};
    lex->add(d.name, e);
    for (auto& p : d.phrases)
      lex->add(p, e);
    for (size_t k = 0; k < d.values.size(); ++k) {
      entry v{lx::value, static_cast<int>(i), static_cast<int>(k)};
      auto& val = d.values[k];
      // A value is its own phrase unless it is a digit or a word of the
      // sentence ("it", "be": country codes).
      if (val.values.size() == 1 && !d.numeric) {
        auto words = tokenize(val.values[0]);
        if (words.size() == 1)
          lex->raw[i].emplace(words[0], static_cast<int>(k));
        if (words.size() > 1
            || (words.size() == 1 && !is_function_word(words[0])
                && words[0].size() > 2))
          lex->add(val.values[0], v);
      }
      for (auto& p : val.phrases)
        lex->add(p, v);
    }
  }
  for (auto& p : s.restricted_phrases)
    lex->add(p, {lx::restricted});
  for (auto& p : s.filler_phrases)
    lex->add(p, {lx::filler});
  for (auto& p : s.measure_verbs)
    lex->add(p, {lx::sell});
  auto add = [&](const std::vector<std::string_view>& ps, lx k, int arg = 0) {
    for (auto p : ps)
      lex->add(std::string{p}, {k, -1, arg});
  };
  add({"how many", "number of", "count of"}, lx::how_many);
  add({"how much", "what amount", "how much money"}, lx::how_much);
  add({"sell", "sold", "sells", "selling", "sale", "bought", "buy", "ordered",
       "popular", "moved", "shifted"},
      lx::sell);
  add({"best selling", "top selling", "best seller", "best sellers",
       "bestseller", "bestsellers", "bestselling", "most popular",
       "sold the most", "sells the most", "sell the most", "sold best",
       "sells best", "sell best"},
      lx::rank_desc, 1);
  add({"most", "best", "highest", "biggest", "largest", "greatest", "strongest",
       "leading", "max", "maximum", "peak", "more"},
      lx::rank_desc);
  add({"least", "worst", "lowest", "smallest", "fewest", "weakest", "min",
       "minimum", "least popular", "sold the least", "worst selling",
       "slowest"},
      lx::rank_asc);
  add({"highest first", "largest first", "biggest first", "most first",
       "from highest to lowest", "highest to lowest", "descending", "sorted",
       "sort", "ranked", "rank", "ranking", "in order", "from most to least",
       "best to worst", "from best to worst", "largest to smallest",
       "biggest to smallest"},
      lx::sort, 0);
  add({"lowest first", "smallest first", "least first",
       "from lowest to highest", "lowest to highest", "ascending",
       "from least to most", "worst to best", "smallest to largest"},
      lx::sort, 1);
  for (auto [u, g] : {std::pair{"year", time_grain::year},
                      {"quarter", time_grain::quarter},
                      {"month", time_grain::month},
                      {"week", time_grain::week}}) {
    std::string unit{u};
    for (auto& phrase :
         {"the " + unit + " before", unit + " before", "the " + unit + " prior",
          "a " + unit + " earlier", "one " + unit + " earlier",
          "the " + unit + " earlier", "a " + unit + " before",
          "the preceding " + unit, "preceding " + unit})
      lex->add(phrase, {lx::prior, -1, static_cast<int>(g)});
  }
  add({"top"}, lx::top);
  add({"bottom"}, lx::top, 1);
  add({"share", "percentage", "percent", "pct", "proportion", "fraction",
       "portion", "what part", "split of", "mix"},
      lx::share);
  add({"vs",          "versus",         "compare",    "compared",
       "comparison",  "against",        "difference", "change",
       "changed",     "grow",           "grew",       "growth",
       "trend",       "develop",        "developed",  "evolve",
       "evolved",     "year over year", "yoy",        "side by side",
       "compared to", "compared with",  "relative to"},
      lx::compare);
  add({"average", "avg", "mean", "typical"}, lx::average);
  add({"by", "per", "each", "every", "across", "broken down by", "split by",
       "breakdown by", "breakdown", "break down", "grouped by", "for each",
       "for every", "in each", "in every", "by each"},
      lx::group_cue);
  add({"which", "what", "in which", "in what", "for which"}, lx::which);
  const std::vector<std::pair<time_grain, std::vector<std::string_view>>> grains
    = {{time_grain::day, {"daily", "day by day", "per day", "a day"}},
       {time_grain::week, {"weekly", "week by week", "per week", "a week"}},
       {time_grain::month,
        {"monthly", "month by month", "per month", "a month", "month on month",
         "mom"}},
       {time_grain::quarter,
        {"quarterly", "quarter by quarter", "per quarter", "a quarter"}},
       {time_grain::year,
        {"yearly", "annual", "annually", "per year", "a year", "year by year",
         "year on year"}}};
  for (auto& [g, ps] : grains)
    add(ps, lx::grain, static_cast<int>(g));
  add({"day", "days", "date", "dates"}, lx::unit_word,
      static_cast<int>(time_grain::day));
  add({"week", "weeks"}, lx::unit_word, static_cast<int>(time_grain::week));
  add({"month", "months"}, lx::unit_word, static_cast<int>(time_grain::month));
  add({"quarter", "quarters"}, lx::unit_word,
      static_cast<int>(time_grain::quarter));
  add({"year", "years"}, lx::unit_word, static_cast<int>(time_grain::year));
  add({"last", "past", "previous", "prior", "latest", "most recent", "the last",
       "the past", "over the last", "over the past", "in the last",
       "in the past", "during the last", "for the last"},
      lx::relative, 0);
  add({"this", "current", "the current", "so far this"}, lx::relative, 1);
  add({"ytd", "year to date", "so far this year", "this year so far"}, lx::ytd);
  add({"between"}, lx::range_from);
  add({"from"}, lx::range_from, 1);
  add({"to", "until", "till", "through", "thru", "up to", "and"}, lx::range_to);
  add({"since", "starting", "starting from", "from the start of"}, lx::since);
  add({"before", "prior to", "earlier than"}, lx::before);
  add({"after", "later than"}, lx::after);
  add({"first", "1st", "second", "2nd", "third", "3rd", "fourth", "4th"},
      lx::ordinal);
  // ordinal args
  for (auto [p, n] : {std::pair{"first", 1},
                      {"1st", 1},
                      {"second", 2},
                      {"2nd", 2},
                      {"third", 3},
                      {"3rd", 3},
                      {"fourth", 4},
                      {"4th", 4}}) {
    auto& v = lex->phrases[p];
    for (auto& e : v)
      if (e.kind == lx::ordinal)
        e.arg = n;
  }
  add({"including", "incl", "inclusive of", "also counting", "counting also",
       "together with"},
      lx::including);
  add({"combined", "together", "altogether", "all together", "taken together",
       "jointly", "summed", "added up", "in total", "put together"},
      lx::combine);
  add({"h1", "first half", "1st half"}, lx::half, 1);
  add({"h2", "second half", "2nd half"}, lx::half, 2);
  add({"paid with",     "paid by",      "paid via",        "pay with",
       "paying with",   "paid using",   "using",           "used",
       "use",           "all in all",   "because of",      "due to",
       "owing to",      "caused by",    "in euros",        "in eur",
       "so far",        "to date",      "of all time",     "all time",
       "ever",          "overall",      "the data",        "in the data",
       "our data",      "the database", "each of",         "went to",
       "came from",     "come from",    "made up",         "make up",
       "accounted for", "account for",  "did we do",       "do we have",
       "did we have",   "were there",   "are there",       "was there",
       "there were",    "in terms of",  "with respect to", "when it comes to",
       "as well as",    "along with",   "how did",         "how does",
       "how do",        "what was",     "what were",       "what is",
       "what are",      "whats the"},
      lx::filler);
  lex->index_deletions();
  return lex;
}

} // namespace candor::data::plan_detail
