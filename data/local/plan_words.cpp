// The data planner's words: an answer written from a plan's rows (euros,
// counts, shares, periods), follow-up questions from the plan, and example
// questions for refusals.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "data/local/planner.hpp"

namespace candor::data {

namespace {

using domain::cell;

std::string grouped(std::string digits) {
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n > 0 && n % 3 == 0)
      out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return out;
}

std::string format_number(double v, metric_unit unit) {
  char buf[64];
  if (unit == metric_unit::ratio) {
    std::snprintf(buf, sizeof buf, "%.1f %%", v * 100.0);
    return buf;
  }
  bool neg = v < 0;
  v = std::fabs(v);
  if (unit == metric_unit::eur) {
    auto cents = static_cast<long long>(std::llround(v * 100.0));
    std::snprintf(buf, sizeof buf, "%02lld", cents % 100);
    return std::string{neg ? "-" : ""} + "EUR "
           + grouped(std::to_string(cents / 100)) + "." + buf;
  }
  if (std::fabs(v - std::round(v)) < 1e-9)
    return std::string{neg ? "-" : ""}
           + grouped(std::to_string(std::llround(v)));
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return std::string{neg ? "-" : ""} + buf;
}

std::string cell_text(const cell& c) {
  switch (c.kind) {
    case cell::integer: return std::to_string(c.i);
    case cell::real: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", c.r);
      return buf;
    }
    case cell::text:
    case cell::blob: return c.s;
    default: return "(none)";
  }
}

bool cell_number(const cell& c, double& out) {
  if (c.kind == cell::integer) {
    out = static_cast<double>(c.i);
    return true;
  }
  if (c.kind == cell::real) {
    out = c.r;
    return true;
  }
  return false;
}

/// The unit of output column `name` of `p`.
metric_unit unit_of(const query_plan& p, const std::string& name) {
  if (name == "share")
    return metric_unit::ratio;
  for (auto* m : p.metrics)
    if (name == m->name || name == m->name + "_eur")
      return m->unit;
  return metric_unit::count;
}

bool is_metric_column(const query_plan& p, const std::string& name) {
  if (name == "share")
    return true;
  for (auto* m : p.metrics)
    if (name == m->name || name == m->name + "_eur")
      return true;
  return false;
}

std::string label_of(const query_plan& p, const std::string& name) {
  if (name == "share")
    return "share of " + p.metrics.front()->label;
  for (auto* m : p.metrics)
    if (name == m->name || name == m->name + "_eur")
      return m->label;
  return name;
}

std::string period_text(const query_plan& p) {
  if (p.periods.empty())
    return "";
  std::string out;
  for (size_t i = 0; i < p.periods.size(); ++i)
    out += (i == 0                      ? ""
            : i + 1 == p.periods.size() ? " and "
                                        : ", ")
           + p.periods[i].label;
  return " in " + out;
}

std::string filter_text(const query_plan& p) {
  std::string out;
  for (auto& f : p.filters)
    out += (out.empty() ? " for " : ", ") + f.said;
  return out;
}

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z')
    s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

} // namespace

std::string planner::word(const query_plan& p,
                          const std::vector<std::string>& columns,
                          const std::vector<std::vector<cell>>& rows) const {
  if (rows.empty() || p.metrics.empty())
    return {};
  std::vector<size_t> keys, values;
  for (size_t c = 0; c < columns.size(); ++c)
    (is_metric_column(p, columns[c]) ? values : keys).push_back(c);
  if (values.empty())
    return {};
  auto describe_values = [&](const std::vector<cell>& row) {
    std::string out;
    for (size_t k = 0; k < values.size(); ++k) {
      auto c = values[k];
      double v = 0;
      auto text = c < row.size() && cell_number(row[c], v)
                    ? format_number(v, unit_of(p, columns[c]))
                    : std::string{"no value"};
      out += (k > 0 ? ", " : "")
             + (values.size() > 1 ? label_of(p, columns[c]) + " " : "") + text;
    }
    return out;
  };
  auto key_text = [&](const std::vector<cell>& row) {
    std::string out;
    for (size_t k = 0; k < keys.size(); ++k)
      out += (k > 0 ? " / " : "")
             + (keys[k] < row.size() ? cell_text(row[keys[k]]) : "");
    return out;
  };
  std::string what
    = capitalised((values.size() == 1 ? label_of(p, columns[values[0]])
                                      : std::string{"The figures"})
                  + filter_text(p) + period_text(p));
  std::string out;
  if (keys.empty()) {
    if (p.average_over != time_grain::none)
      what = "The average " + std::string{to_string(p.average_over)} + "ly "
             + what.substr(0, 1).insert(0, "") + what.substr(1);
    out = what + ": " + describe_values(rows.front()) + ".";
  } else if (p.top_n == 1 && rows.size() >= 1) {
    out = "Top "
          + (p.group_by.empty() ? std::string{to_string(p.time_group)}
                                : p.group_by.front()->name)
          + " by " + p.metrics.front()->label + filter_text(p) + period_text(p)
          + ": " + key_text(rows.front()) + " (" + describe_values(rows.front())
          + ").";
    if (p.ascending)
      out.replace(0, 3, "Bottom");
  } else {
    out = what;
    if (p.time_group != time_grain::none)
      out += " by " + std::string{to_string(p.time_group)};
    for (auto* d : p.group_by)
      out += (p.time_group != time_grain::none || d != p.group_by.front()
                ? " and "
                : " by ")
             + d->name;
    if (p.top_n > 0)
      out += std::string{p.ascending ? " (bottom " : " (top "}
             + std::to_string(p.top_n) + ")";
    out += ": ";
    size_t shown = std::min<size_t>(rows.size(), 12);
    for (size_t i = 0; i < shown; ++i)
      out += (i > 0 ? "; " : "") + key_text(rows[i]) + " "
             + describe_values(rows[i]);
    if (rows.size() > shown)
      out += "; and " + std::to_string(rows.size() - shown)
             + " more rows in the table";
    out += ".";
    // Two periods compared: the change.
    if (p.time_group != time_grain::none && p.group_by.empty()
        && rows.size() == 2 && values.size() == 1 && p.periods.size() == 2) {
      double a = 0, b = 0;
      if (cell_number(rows[0][values[0]], a)
          && cell_number(rows[1][values[0]], b) && a != 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%+.1f %%",
                      (b - a) / std::fabs(a) * 100);
        out += " Change from " + key_text(rows[0]) + " to " + key_text(rows[1])
               + ": " + buf + ".";
      }
    }
  }
  for (auto& n : p.notes)
    out += " " + n;
  return out;
}

std::vector<std::string> planner::follow_ups(const query_plan& p) const {
  std::vector<std::string> out;
  if (p.metrics.empty())
    return out;
  auto label = p.metrics.front()->label;
  auto& s = *layer_;
  // Another period: the other year of the data.
  auto first = std::stoi(s.coverage_from.substr(0, 4));
  auto last = std::stoi(s.coverage_to.substr(0, 4));
  if (p.periods.size() == 1 && p.periods[0].label.size() == 4) {
    int y = std::stoi(p.periods[0].label);
    int other = y > first ? y - 1 : y < last ? y + 1 : 0;
    if (other != 0)
      out.push_back(capitalised(label) + filter_text(p) + " in "
                    + std::to_string(other) + "?");
  } else if (p.periods.empty() && first != last) {
    out.push_back(capitalised(label) + filter_text(p) + " per year?");
  }
  // A breakdown the plan does not have yet.
  if (p.group_by.empty() && p.time_group == time_grain::none) {
    for (auto& d : s.dimensions)
      if (d.name != (p.filters.empty() ? "" : p.filters.front().dim->name)
          && !d.values.empty()) {
        out.push_back(capitalised(label) + " by " + d.name + period_text(p)
                      + "?");
        break;
      }
    out.push_back(capitalised(label) + " per month" + period_text(p) + "?");
  } else if (p.top_n == 0 && !p.group_by.empty()) {
    out.push_back("Top 3 " + p.group_by.front()->name + " by " + label
                  + period_text(p) + "?");
  } else if (p.time_group == time_grain::none) {
    out.push_back(capitalised(label) + " per month" + period_text(p) + "?");
  }
  if (out.size() > 3)
    out.resize(3);
  return out;
}

std::vector<std::string> planner::examples() const {
  auto& s = *layer_;
  std::vector<std::string> out;
  auto year = s.coverage_to.substr(0, 4);
  auto* amount = s.metric(s.default_amount);
  auto* sold = s.metric(s.default_count_sold);
  const semantic_dimension* first_dim = nullptr;
  for (auto& d : s.dimensions)
    if (!d.values.empty()) {
      first_dim = &d;
      break;
    }
  if (amount && first_dim) {
    // As users say it: the dimension's first phrase, not its name.
    auto said = first_dim->name;
    std::replace(said.begin(), said.end(), '_', ' ');
    if (!first_dim->phrases.empty())
      said = first_dim->phrases.front();
    out.push_back("\"" + capitalised(amount->label) + " by " + said + " in "
                  + year + "\"");
  }
  if (sold)
    out.push_back("\"" + capitalised(sold->label) + " per month in " + year
                  + "\"");
  if (amount)
    out.push_back("\"" + capitalised(amount->label) + " in "
                  + s.coverage_from.substr(0, 4) + " vs " + year + "\"");
  return out;
}

} // namespace candor::data
