#pragma once

// Declares the local provider's data planner: a question mapped word by
// word onto the catalog's semantic layer, compiled to one SELECT, or
// refused with what was understood and what was not.

#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"
#include "domain/types.hpp"

namespace candor::data {

class catalog;

/// How a metric's values read: euros, a count, or a share from 0 to 1.
enum class metric_unit { eur, count, ratio };

/// A measure of the semantic layer (`semantic.metrics[]`).
struct semantic_metric {
  std::string name;
  std::string label; ///< in words, e.g. "net revenue"
  metric_unit unit = metric_unit::count;
  /// Sums of parts give the whole (shares of total make sense).
  bool additive = false;
  std::vector<std::string> phrases;
  /// The filter the metric applies unless the question filters or groups
  /// by that dimension itself (e.g. captured orders only).
  std::string default_dimension;
  std::vector<std::string> default_values;
  /// Grain name -> aggregate expression, in the catalog's order
  /// (preferred grain first).
  std::vector<std::pair<std::string, std::string>> at;
};

/// A named value of a dimension, or a phrase standing for several.
struct semantic_value {
  std::vector<std::string> values;
  std::vector<std::string> phrases;
};

/// A dimension of the semantic layer (`semantic.dimensions[]`).
struct semantic_dimension {
  std::string name;
  std::vector<std::string> phrases;
  /// Expressions in order of preference; the first reachable at the
  /// chosen grain is used.
  std::vector<std::string> exprs;
  bool numeric = false;
  /// "table.column" whose distinct values are read from the database at
  /// startup (`values_from`), e.g. product names; empty: none.
  std::string values_from;
  /// The metric "how many <a value of this dimension>" counts (e.g. club
  /// members are counted as customers); empty: the usual defaults.
  std::string how_many;
  /// Each declared value (with its phrases), then the groups.
  std::vector<semantic_value> values;
};

/// A grain: the FROM clause a metric is computed over.
struct semantic_grain {
  std::string name;
  std::string from;
  std::string time; ///< the date column (TEXT 'YYYY-MM-DD')
  std::vector<std::string> provides;
};

/// A many-to-one join that brings `alias` in once `needs` is there.
struct semantic_join {
  std::string alias;
  std::string needs;
  std::string sql;
};

/// The `semantic` object of the catalog, checked: every name unique,
/// every grain a metric names declared, every expression's aliases
/// reachable, every value of a dimension whose column has a declared
/// domain inside that domain.
struct semantic_layer {
  std::string coverage_from; ///< first day of data, 'YYYY-MM-DD'
  std::string coverage_to;   ///< last day of data
  std::vector<semantic_grain> grains;
  std::vector<semantic_join> joins;
  std::vector<semantic_metric> metrics;
  std::vector<semantic_dimension> dimensions;
  /// The metric a bare "how much ... sell" asks for, and "how many ...
  /// sold" of products.
  std::string default_amount;
  std::string default_count_sold;
  /// Phrases that ask for personal data, and what the refusal says.
  std::vector<std::string> restricted_phrases;
  std::string restricted_reason;
  /// Phrases that carry no meaning for this database (the company's own
  /// name, "our shop"): read as function words.
  std::vector<std::string> filler_phrases;
  /// Verbs that say the counted thing happened, read like "sold": "how
  /// many vaccinations were given" counts `default_count_sold` by the
  /// vaccination value ("sold", "bought", "ordered" are built in).
  std::vector<std::string> measure_verbs;

  static domain::outcome<semantic_layer> parse(const catalog& cat);

  const semantic_metric* metric(std::string_view name) const;
  const semantic_dimension* dimension(std::string_view name) const;
  const semantic_grain* grain(std::string_view name) const;
};

/// The aliases of `known` that `expr` uses (identifiers directly before a
/// '.'), e.g. {"o", "oi"} for "SUM(oi.quantity) ... o.status".
std::set<std::string> expression_aliases(std::string_view expr,
                                         const std::set<std::string>& known);

/// Time buckets a plan groups by.
enum class time_grain { none, day, week, month, quarter, year };

std::string_view to_string(time_grain g);

/// A filter: the dimension's expression in one of `values`.
struct plan_filter {
  const semantic_dimension* dim = nullptr;
  std::vector<std::string> values;
  std::string said; ///< the words of the question
};

/// A closed date range, inclusive.
struct plan_period {
  std::string from;
  std::string to;
  std::string label; ///< e.g. "2025", "2025-Q4", "December 2025"
};

/// What a question asks, in the semantic layer's terms.
struct query_plan {
  std::vector<const semantic_metric*> metrics;
  const semantic_grain* grain = nullptr;
  std::vector<const semantic_dimension*> group_by;
  time_grain time_group = time_grain::none;
  std::vector<plan_filter> filters;
  /// The periods asked for (none: the whole coverage). Several periods
  /// are compared side by side (one row each).
  std::vector<plan_period> periods;
  /// Top/bottom N by the first metric; 0: no ranking.
  int32_t top_n = 0;
  bool ascending = false;
  /// Every row, ordered by the first metric (`ascending` or not).
  bool sorted = false;
  /// Several periods that are not calendar buckets (halves, date ranges):
  /// one row each, labelled with the period.
  bool labelled_periods = false;
  /// Share of the total instead of the value.
  bool share = false;
  /// Average of the metric over these buckets ("average monthly ...").
  time_grain average_over = time_grain::none;
  /// How relative dates or defaults were read, said in the answer.
  std::vector<std::string> notes;
  /// The question's terms mapped to the catalog, e.g. "'web shop' ->
  /// channel web".
  std::vector<std::string> understood;
  /// The SELECT it compiles to.
  std::string sql;
  /// Output columns and how to read each: time or dimension name, or a
  /// metric.
  std::vector<std::string> columns;

  /// One line, e.g. "net revenue by channel, 2025".
  std::string summary() const;
};

/// Why a question was not planned.
enum class plan_refusal {
  none,
  not_understood, ///< a word maps to nothing in the catalog
  no_metric,      ///< nothing says what to measure
  ambiguous,      ///< several readings and nothing to choose between them
  unsupported,    ///< understood, but not a shape the planner compiles
  restricted,     ///< asks for personal data
  out_of_period,  ///< asks for a period the data do not cover
};

std::string_view to_string(plan_refusal r);

struct plan_result {
  plan_refusal refusal = plan_refusal::none;
  query_plan p;
  /// With a refusal: the reply to the user (what was understood, what was
  /// not, what can be asked).
  std::string message;
  /// The words that were not understood.
  std::vector<std::string> unknown;

  bool planned() const noexcept {
    return refusal == plan_refusal::none;
  }
};

/// What a follow-up changed in the question before it.
enum class follow_up_kind : uint8_t {
  standalone, ///< a question of its own: taken as said
  period,     ///< another period
  breakdown,  ///< grouped by a dimension or another time grain
  filter,     ///< another value of a dimension
  metric,     ///< another measure, the same slicing
  ranking,    ///< top or bottom N, another order
  combined,   ///< several of these
};

std::string_view to_string(follow_up_kind k);

/// A follow-up read against the question before it.
struct follow_up {
  /// The question it stands for, in the planner's words ("net revenue by
  /// channel in 2024" for "and in 2024?" after "net revenue by channel in
  /// 2025").
  std::string standalone;
  follow_up_kind kind = follow_up_kind::standalone;
};

/// The SQL dialect a plan compiles to.
enum class sql_dialect : uint8_t { sqlite, postgres };

/// Dimension name -> values read from the database (`values_from`).
using dimension_values = std::map<std::string, std::vector<std::string>>;

/// Reads the distinct values of every dimension with `values_from` from
/// the SQLite database at `db_path` (read-only). A dimension with more than
/// `max_values` values, or a value longer than 120 bytes, is an error: a
/// lexicon of every order number would be neither small nor useful.
/// Runs one `SELECT DISTINCT` of `load_dimension_values` and returns the
/// first column as text.
using distinct_reader = std::function<domain::outcome<std::vector<std::string>>(
  const std::string& sql)>;

/// The same, read through `read` (the PostgreSQL warehouse).
domain::outcome<dimension_values>
load_dimension_values(const catalog& cat, const distinct_reader& read,
                      size_t max_values = 2000);

domain::outcome<dimension_values>
load_dimension_values(const catalog& cat, const std::string& db_path,
                      size_t max_values = 2000);

/// The data planner of the local provider. Knows nothing of one database:
/// everything comes from the catalog's semantic layer. Immutable after
/// construction; safe from any thread.
class planner {
public:
  /// `loaded`: the values of `values_from` dimensions (each becomes a value
  /// with its own name and plural as phrases).
  /// `dialect`: the SQL it writes, for SQLite or PostgreSQL (the same
  /// statements but for the week bucket).
  static domain::outcome<planner> make(const catalog& cat,
                                       const dimension_values& loaded = {},
                                       sql_dialect dialect
                                       = sql_dialect::sqlite);

  sql_dialect dialect() const noexcept {
    return dialect_;
  }

  /// Plans `question`: every word must map to the semantic layer, a known
  /// time expression or a function word, and the mapping must be
  /// unambiguous; otherwise a refusal that says why.
  plan_result plan(std::string_view question) const;

  /// Reads `said` as a follow-up of `previous` (a standalone question):
  /// the pieces it names (a period, a grouping, a dimension's values, a
  /// metric, a ranking) replace those of the same kind in `previous`, or
  /// are added; talk ("and", "what about", "break that down") is dropped.
  /// A follow-up with its own metric and slicing, or naming nothing the
  /// lexicon reads, stands alone. Words it does not know are kept, so the
  /// planner refuses the result naming them. Deterministic; no model.
  follow_up resolve_follow_up(std::string_view previous,
                              std::string_view said) const;

  /// The answer in words to `p` from its result (`columns`, `rows` as
  /// the executor returned them), with the notes on how the question was
  /// read. Empty rows give an empty string (the caller says "no rows").
  std::string word(const query_plan& p, const std::vector<std::string>& columns,
                   const std::vector<std::vector<domain::cell>>& rows) const;

  /// Up to three follow-up questions derived from `p`: another period, a
  /// breakdown, the top item.
  std::vector<std::string> follow_ups(const query_plan& p) const;

  /// A few questions this catalog answers, for refusals.
  std::vector<std::string> examples() const;

  const semantic_layer& layer() const noexcept {
    return *layer_;
  }

  /// Implementation detail (the phrase lexicon), public for planner.cpp.
  struct lexicon;

private:
  std::shared_ptr<const semantic_layer> layer_;
  std::shared_ptr<const lexicon> lex_;
  sql_dialect dialect_ = sql_dialect::sqlite;
};

} // namespace candor::data
