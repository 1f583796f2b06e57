// The data planner's last stages: the grain (the table and the joins where
// every measure, grouping and filter of the plan can be computed), then
// the one SELECT, its clauses built from the plan alone.

#include "data/local/planner_reading.hpp"

#include <algorithm>
#include <functional>

#include "data/sales/catalog.hpp"
#include "data/sqlite.hpp"

namespace candor::data::plan_detail {

std::set<std::string> known_aliases(const semantic_layer& s) {
  std::set<std::string> out;
  for (auto& g : s.grains)
    out.insert(g.provides.begin(), g.provides.end());
  for (auto& j : s.joins)
    out.insert(j.alias);
  return out;
}

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

namespace {

bool said_dimension(const query_plan& p, const semantic_dimension* d) {
  return std::find(p.group_by.begin(), p.group_by.end(), d) != p.group_by.end()
         || std::any_of(p.filters.begin(), p.filters.end(),
                        [&](auto& f) { return f.dim == d; });
}

/// The expression of `m` at grain `g`, or null.
const std::string* metric_at(const semantic_metric& m, const std::string& g) {
  auto found = std::find_if(m.at.begin(), m.at.end(),
                            [&](auto& kv) { return kv.first == g; });
  return found == m.at.end() ? nullptr : &found->second;
}

/// Whether every part of the plan can be computed at `g`; on success the
/// joins and each dimension's expression are kept in `r`.
bool try_grain(reading& r, const semantic_grain& g,
               const std::set<std::string>& known) {
  auto& s = r.s;
  std::set<std::string> need;
  for (auto* m : r.p.metrics) {
    auto* x = metric_at(*m, g.name);
    if (x == nullptr)
      return false;
    auto a = expression_aliases(*x, known);
    need.insert(a.begin(), a.end());
  }
  std::vector<std::string> exprs(s.dimensions.size());
  // The first expression of `d` whose aliases join in with the rest.
  auto pick = [&](const semantic_dimension* d) -> bool {
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    for (auto& x : d->exprs) {
      auto a = expression_aliases(x, known);
      auto trial = need;
      trial.insert(a.begin(), a.end());
      if (joins_for(s, g, trial)) {
        need = std::move(trial);
        exprs[idx] = x;
        return true;
      }
    }
    return false;
  };
  bool ok = true;
  for (auto* d : r.p.group_by)
    ok = ok && pick(d);
  for (auto& f : r.p.filters)
    ok = ok && pick(f.dim);
  for (auto* m : r.p.metrics) {
    if (m->default_dimension.empty())
      continue;
    auto* d = s.dimension(m->default_dimension);
    if (!said_dimension(r.p, d))
      ok = ok && pick(d);
  }
  if (!ok)
    return false;
  auto j = joins_for(s, g, need);
  if (!j)
    return false;
  r.grain = &g;
  r.joins = std::move(*j);
  r.dim_exprs = std::move(exprs);
  return true;
}

std::string bucket_sql(time_grain g, const std::string& col,
                       sql_dialect dialect) {
  if (g == time_grain::week && dialect == sql_dialect::postgres) {
    // SQLite's %W: the week of the year, weeks starting on Monday, days
    // before the first Monday in week 00.
    auto d = "CAST(" + col + " AS DATE)";
    auto part = [&](const char* field) {
      return "CAST(EXTRACT(" + std::string{field} + " FROM " + d
             + ") AS INTEGER)";
    };
    return "to_char(" + d + ", 'YYYY') || '-W' || lpad(CAST((" + part("DOY")
           + " + 7 - " + part("ISODOW") + ") / 7 AS TEXT), 2, '0')";
  }
  if (dialect == sql_dialect::postgres) {
    // The dates are ISO text ("2025-03-14"): the buckets are its prefixes.
    switch (g) {
      case time_grain::month: return "substr(" + col + ", 1, 7)";
      case time_grain::quarter:
        return "substr(" + col + ", 1, 4) || '-Q' || ((CAST(substr(" + col
               + ", 6, 2) AS INTEGER) + 2) / 3)";
      case time_grain::year: return "substr(" + col + ", 1, 4)";
      default: break;
    }
  }
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

std::string join_list(const std::vector<std::string>& xs,
                      std::string_view sep = ", ") {
  std::string o;
  for (size_t i = 0; i < xs.size(); ++i)
    o += (i > 0 ? std::string{sep} : std::string{}) + xs[i];
  return o;
}

/// `dim IN (...)` or `dim = v` over values as stored.
std::string in_list(const std::string& expr, const semantic_dimension& d,
                    const std::vector<std::string>& values, bool single_eq) {
  if (single_eq && values.size() == 1)
    return expr + " = " + (d.numeric ? values[0] : quote_literal(values[0]));
  std::string in;
  for (auto& v : values)
    in += (in.empty() ? "" : ", ") + (d.numeric ? v : quote_literal(v));
  return expr + " IN (" + in + ")";
}

/// The clauses of the inner SELECT.
struct clauses {
  std::vector<std::string> select, group, where;
  std::string bucket;     ///< the time bucket expression, or empty
  std::string share_cond; ///< the part whose share of the whole is asked
  std::string from;       ///< "FROM ... JOIN ..."
  size_t first_metric = 0;

  std::string where_sql() const {
    return where.empty() ? std::string{}
                         : " WHERE " + join_list(where, " AND ");
  }
};

/// SELECT and GROUP BY: the time bucket or the labelled periods, the
/// groupings, the measures.
void select_columns(reading& r, clauses& c) {
  auto& s = r.s;
  auto& time_col = r.grain->time;
  auto grain_bucket
    = r.p.average_over != time_grain::none ? r.p.average_over : r.p.time_group;
  if (grain_bucket != time_grain::none) {
    c.bucket = bucket_sql(grain_bucket, time_col, r.owner.dialect());
    c.select.push_back(c.bucket + " AS "
                       + std::string{to_string(grain_bucket)});
    r.p.columns.emplace_back(to_string(grain_bucket));
    c.group.push_back(std::to_string(c.select.size()));
  } else if (r.p.labelled_periods) {
    std::string cases = "CASE";
    for (auto& pp : r.p.periods)
      cases += " WHEN " + time_col + " BETWEEN " + quote_literal(pp.from)
               + " AND " + quote_literal(pp.to) + " THEN "
               + quote_literal(pp.label);
    c.select.push_back(cases + " END AS period");
    r.p.columns.emplace_back("period");
    c.group.push_back(std::to_string(c.select.size()));
  }
  for (auto* d : r.p.group_by) {
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    c.select.push_back(r.dim_exprs[idx] + " AS " + d->name);
    r.p.columns.push_back(d->name);
    c.group.push_back(std::to_string(c.select.size()));
  }
  c.first_metric = c.select.size() + 1;
  for (auto* m : r.p.metrics) {
    c.select.push_back(*metric_at(*m, r.grain->name) + " AS "
                       + column_name(*m));
    r.p.columns.push_back(column_name(*m));
  }
}

/// WHERE: the measures' default filters, the groups' "has a value", the
/// question's filters (one kept aside as the part of a share), the
/// periods.
void where_conditions(reading& r, clauses& c) {
  auto& s = r.s;
  for (auto* m : r.p.metrics) {
    if (m->default_dimension.empty())
      continue;
    auto* d = s.dimension(m->default_dimension);
    if (said_dimension(r.p, d))
      continue;
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    auto cond = in_list(r.dim_exprs[idx], *d, m->default_values, false);
    if (std::find(c.where.begin(), c.where.end(), cond) == c.where.end())
      c.where.push_back(cond);
  }
  // A group with no value (e.g. no store: not a store sale) is not a group.
  for (auto* d : r.p.group_by) {
    auto idx = static_cast<size_t>(d - s.dimensions.data());
    bool filtered = std::any_of(r.p.filters.begin(), r.p.filters.end(),
                                [&](auto& f) { return f.dim == d; });
    if (!filtered)
      c.where.push_back(r.dim_exprs[idx] + " IS NOT NULL");
  }
  for (auto& f : r.p.filters) {
    auto idx = static_cast<size_t>(f.dim - s.dimensions.data());
    auto cond = in_list(r.dim_exprs[idx], *f.dim, f.values, true);
    if (r.p.share && r.p.group_by.empty() && c.share_cond.empty()
        && &f == &r.p.filters.back()) {
      c.share_cond = cond;
      continue;
    }
    c.where.push_back(cond);
  }
  if (!r.p.periods.empty()) {
    std::vector<std::string> any;
    auto& time_col = r.grain->time;
    for (auto& pp : r.p.periods)
      any.push_back(pp.from == pp.to
                      ? time_col + " = " + quote_literal(pp.from)
                      : time_col + " BETWEEN " + quote_literal(pp.from)
                          + " AND " + quote_literal(pp.to));
    auto cond = join_list(any, " OR ");
    c.where.push_back(r.p.periods.size() > 1 ? "(" + cond + ")" : cond);
  }
}

/// The share of one part in the whole: one row, or one per time bucket.
std::string share_of_part(reading& r, const clauses& c) {
  auto time = std::string{to_string(r.p.time_group)};
  std::string inner
    = "SELECT " + (c.bucket.empty() ? "" : c.bucket + " AS " + time + ", ")
      + "(" + c.share_cond + ") AS part, "
      + *metric_at(*r.p.metrics.front(), r.grain->name) + " AS v " + c.from
      + c.where_sql() + " GROUP BY " + (c.bucket.empty() ? "1" : "1, 2");
  std::string ratio = "1.0 * SUM(CASE WHEN part THEN v ELSE 0 END) / SUM(v)";
  r.p.columns.clear();
  std::string sql;
  if (!c.bucket.empty()) {
    r.p.columns.push_back(time);
    sql = "SELECT " + time + ", " + ratio + " AS share FROM (" + inner
          + ") AS parts GROUP BY 1 ORDER BY 1";
  } else {
    sql = "SELECT " + ratio + " AS share FROM (" + inner + ") AS parts";
  }
  r.p.columns.emplace_back("share");
  return sql;
}

/// The inner SELECT wrapped for an average or a share of each group, or
/// ordered (and limited) as the plan asks.
std::string shape(reading& r, const clauses& c, std::string sql) {
  auto metric_order = [&] {
    return " ORDER BY " + std::to_string(c.first_metric)
           + (r.p.ascending ? " ASC" : " DESC");
  };
  std::vector<std::string> dims;
  for (auto* d : r.p.group_by)
    dims.push_back(d->name);
  if (r.p.average_over != time_grain::none) {
    std::vector<std::string> avgs;
    for (auto* m : r.p.metrics)
      avgs.push_back("AVG(" + column_name(*m) + ") AS " + column_name(*m));
    r.p.columns.erase(r.p.columns.begin());
    r.p.notes.push_back("The average is taken over the "
                        + std::string{to_string(r.p.average_over)}
                        + "s of the period.");
    return "SELECT " + (dims.empty() ? "" : join_list(dims) + ", ")
           + join_list(avgs) + " FROM (" + sql + ") AS buckets"
           + (dims.empty() ? "" : " GROUP BY " + join_list(dims));
  }
  bool by_time = r.p.time_group != time_grain::none;
  if (r.p.share) {
    // The share of each group in the total of its time bucket (or overall).
    std::vector<std::string> keys;
    if (by_time)
      keys.emplace_back(to_string(r.p.time_group));
    keys.insert(keys.end(), dims.begin(), dims.end());
    auto mcol = column_name(*r.p.metrics.front());
    std::string part
      = by_time ? " PARTITION BY " + std::string{to_string(r.p.time_group)}
                : "";
    r.p.columns = keys;
    r.p.columns.emplace_back("share");
    return "SELECT " + join_list(keys) + ", 1.0 * " + mcol + " / SUM(" + mcol
           + ") OVER (" + part + ") AS share FROM (" + sql + ") AS totals ORDER BY "
           + (by_time ? "1, " : "") + "share DESC";
  }
  if (r.p.sorted)
    return sql + metric_order();
  if (r.p.labelled_periods)
    return sql + " ORDER BY 1";
  if (r.p.top_n > 0)
    // By time and group too: the pairs are ranked, not N within each period.
    return sql + metric_order() + " LIMIT " + std::to_string(r.p.top_n);
  if (by_time)
    return sql + " ORDER BY 1"
           + (r.p.group_by.empty()
                ? std::string{}
                : ", " + std::to_string(c.first_metric) + " DESC");
  if (!r.p.group_by.empty())
    return sql + " ORDER BY " + std::to_string(c.first_metric) + " DESC";
  return sql;
}

} // namespace

bool choose_grain(reading& r) {
  auto& s = r.s;
  // The first of the metrics' grains where every expression's aliases can
  // be joined in.
  auto known = known_aliases(s);
  for (auto& [gname, expr] : r.p.metrics.front()->at)
    if (try_grain(r, *s.grain(gname), known))
      break;
  if (r.grain != nullptr) {
    r.p.grain = r.grain;
    return true;
  }
  std::vector<std::string> what;
  for (auto* d : r.p.group_by)
    what.push_back(d->name);
  for (auto& f : r.p.filters)
    what.push_back(f.dim->name);
  return r.refuse_explained(
    plan_refusal::unsupported,
    "The catalog cannot compute " + r.p.metrics.front()->label
      + (what.empty() ? "" : " by " + join_list(what))
      + (r.p.metrics.size() > 1 ? " together with the other measures" : "")
      + ". ");
}

bool compile_sql(reading& r) {
  clauses c;
  select_columns(r, c);
  where_conditions(r, c);
  if (r.p.share && r.p.group_by.empty() && c.share_cond.empty()
      && r.p.time_group == time_grain::none)
    return r.refuse_explained(plan_refusal::ambiguous,
                              "A share needs a part (a channel, a country, a "
                              "category...) or a breakdown to divide. ");
  c.from = "FROM " + r.grain->from;
  for (auto* j : r.joins)
    c.from += " " + j->sql;
  if (!c.share_cond.empty()) {
    r.p.sql = share_of_part(r, c);
    return true;
  }
  auto sql = "SELECT " + join_list(c.select) + " " + c.from + c.where_sql();
  if (!c.group.empty())
    sql += " GROUP BY " + join_list(c.group);
  r.p.sql = shape(r, c, std::move(sql));
  return true;
}

} // namespace candor::data::plan_detail
