#pragma once

// One question's reading by the data planner, and the stages that build it
// (planner::plan, planner.cpp, runs them in this order; a stage that
// refuses returns false and the rest do not run; the first never refuses):
//
//   read_question    planner_read.cpp     every word to a cue, a value, a
//                                         metric, a dimension or a time atom
//   settle_periods   planner_periods.cpp  atoms waiting for a year, "the
//                                         quarter before", ranges
//   check_words      planner_periods.cpp  durations, personal data, unknown
//                                         and ambiguous words refuse
//   check_periods    planner_periods.cpp  inside the data, like with like
//   choose_groups    planner_measures.cpp filters and groupings
//   choose_metrics   planner_measures.cpp what is measured
//   choose_ranking   planner_measures.cpp top N, ordering
//   choose_grain     planner_compile.cpp  the table and joins that compute
//                                         it all
//   compile_sql      planner_compile.cpp  the SELECT
//
// Internal to data/local.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "data/local/planner_detail.hpp"

namespace candor::data::plan_detail {

/// What a period type a plan_period is, for comparing like with like.
enum class period_kind { year, quarter, month, half, day, range };

struct period_atom {
  plan_period period;
  period_kind kind = period_kind::range;
};

period_atom year_period(int y);
period_atom month_period(int y, int m);
period_atom quarter_period(int y, int q);
period_atom half_period(int y, int h);
/// A day of a month (`md` = month * 100 + day), the day clamped to the
/// month's length ("29 february" of a common year is the 28th).
period_atom day_period(int y, int md);
/// A month, quarter, half or day said without its year, in year `y`.
period_atom partial_period(int y, period_kind kind, int n);
/// "last 6 months", "this quarter": `n` units of `g` ending with the
/// latest complete one on or before `latest` ("last"), or up to `latest`
/// itself ("this").
period_atom relative_period(const ymd& latest, const std::string& latest_text,
                            bool last, int n, time_grain g);

/// Every alias a grain provides or a join brings in.
std::set<std::string> known_aliases(const semantic_layer& s);
/// The joins that bring `need` in at grain `g`, in order; nullopt when an
/// alias cannot be reached.
std::optional<std::vector<const semantic_join*>>
joins_for(const semantic_layer& s, const semantic_grain& g,
          const std::set<std::string>& need);

/// "a, b or c".
std::string list_or(const std::vector<std::string>& xs);
/// The values of `d` as a user would type them.
std::vector<std::string> value_names(const semantic_dimension& d);

/// The state of one question's reading, shared by the stages.
struct reading {
  reading(const planner& pl, const semantic_layer& layer,
          const planner::lexicon& lexicon)
      : owner(pl), s(layer), lex(lexicon) {}

  const planner& owner;
  const semantic_layer& s;
  const planner::lexicon& lex;
  ymd latest;   ///< the latest date of the data
  ymd earliest; ///< the earliest date of the data

  std::vector<std::string> words;
  std::vector<item> items;

  query_plan p;
  plan_result result;
  std::vector<std::string> unknown;

  // -- cues said ------------------------------------------------------------
  bool how_many = false, how_much = false, sell = false, sell_rank = false;
  bool rank = false, compare = false, average = false, sort = false;
  time_grain prior = time_grain::none;
  int rank_n = -1;
  bool rank_plural = false;
  bool restricted = false;
  bool combine = false;
  bool including = false; ///< values said now are counted too
  std::vector<time_grain> grains_said;
  /// dimension index -> values (value indices) said.
  std::map<int, std::vector<std::pair<int, std::string>>> values;
  std::vector<int> dims_grouped;
  /// Values said after "including": counted too, not filtered on.
  std::map<int, std::vector<std::pair<int, std::string>>> included;
  /// "how many products ...": the dimension whose members are counted.
  std::string counted_members;
  /// "how many days ...": the unit of a duration asked for.
  std::string duration;
  /// The dimension of the value said right after "how many", or -1.
  int counted_dim = -1;

  // -- time said ------------------------------------------------------------
  std::vector<period_atom> atoms;
  std::vector<int> pending_years; ///< years not attached to a month/quarter
  /// A month, quarter, half or day waiting for a year.
  struct partial {
    period_kind kind;
    int n;
  };
  std::vector<partial> partials;
  size_t partial_item = 0; ///< the item of the last partial
  int range_state = 0;     ///< 1: after between/from, 2: after its 'to'
  size_t range_atom = 0;
  int since_before_after = 0; ///< 1 since, 2 before, 3 after
  size_t sba_atom = 0;

  // -- chosen by choose_grain -----------------------------------------------
  const semantic_grain* grain = nullptr;
  std::vector<const semantic_join*> joins;
  /// Per dimension: the expression chosen for it at `grain`.
  std::vector<std::string> dim_exprs;

  /// Item `i`, or null past the end.
  const item* at(size_t i) const {
    return i < items.size() ? &items[i] : nullptr;
  }

  void understood(std::string what);

  /// Records the refusal; returns false, for `return r.refuse(...)`.
  bool refuse(plan_refusal why, std::string message);

  /// `refuse` with `what` between what was understood and the questions
  /// that can be asked: the shape of most refusals.
  bool refuse_explained(plan_refusal why, const std::string& what) {
    return refuse(why, understood_text() + what + examples_text());
  }

  /// "I understood ...; ... . " or empty.
  std::string understood_text() const;
  /// "Questions I can answer look like: ...".
  std::string examples_text() const;
};

void read_question(reading& r);
bool settle_periods(reading& r);
bool check_words(reading& r);
bool check_periods(reading& r);
bool choose_groups(reading& r);
bool choose_metrics(reading& r);
bool choose_ranking(reading& r);
bool choose_grain(reading& r);
bool compile_sql(reading& r);

} // namespace candor::data::plan_detail
