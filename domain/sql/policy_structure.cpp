// The SQL policy checker's structural rules: joins and their conditions,
// sizes (tables, nesting, selects, IN lists, CTE expansion), LIMIT and its
// rewrite
// (domain/sql/checker.hpp).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "domain/sql/checker.hpp"

namespace candor::domain::sql::detail {

bool checker::check_joins() {
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    if (x.is_keyword("natural"))
      return block("natural_join",
                   "NATURAL joins are not allowed: write JOIN ... ON "
                   "a.col = b.col",
                   x);
    if (x.is_keyword("using"))
      return block("using_join",
                   "JOIN ... USING (...) is not allowed: write JOIN ... ON "
                   "a.col = b.col",
                   x);
    if (x.is_keyword("cross"))
      return block("cross_join",
                   "CROSS JOIN is not allowed: join on a condition with "
                   "JOIN ... ON",
                   x);
  }
  // Track, per parenthesis depth, whether tokens are in a FROM clause and
  // which FROM clause they count towards.
  struct level {
    bool in_from = false;
    int scope = -1;
  };
  std::vector<level> levels(1);
  std::vector<int> sources; // per FROM clause
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    auto d = static_cast<size_t>(x.depth);
    if (levels.size() <= d + 1)
      levels.resize(d + 2);
    auto& lv = levels[d];
    if (x.is_symbol("(")) {
      // A parenthesised join group continues the enclosing FROM clause;
      // a subquery starts afresh.
      bool group = lv.in_from && i > 0
                   && (is_kw(i - 1, "from") || is_kw(i - 1, "join")
                       || is_sym(i - 1, "(") || is_sym(i - 1, ","))
                   && !is_kw(i + 1, "select") && !is_kw(i + 1, "with")
                   && !is_kw(i + 1, "values");
      levels[d + 1] = group ? lv : level{};
      continue;
    }
    if (x.is_keyword("from")) {
      if (is_kw(i - 1, "distinct"))
        continue; // IS [NOT] DISTINCT FROM
      lv.in_from = true;
      lv.scope = static_cast<int>(sources.size());
      sources.push_back(1);
      continue;
    }
    if (!lv.in_from)
      continue;
    if (is_clause_end(x)) {
      lv = level{};
      continue;
    }
    if (x.is_symbol(","))
      return block("comma_join",
                   "comma joins are not allowed: write JOIN ... ON "
                   "a.col = b.col",
                   x);
    if (x.is_keyword("join")) {
      ++sources[static_cast<size_t>(lv.scope)];
      if (!check_join_condition(i))
        return false;
    }
  }
  int total = 0;
  for (int n : sources) {
    total += n;
    if (n > cfg_.max_tables)
      return fail(verdict_kind::block, "too_many_tables",
                  "a FROM clause joins " + std::to_string(n)
                    + " sources; at most " + std::to_string(cfg_.max_tables)
                    + " are allowed");
  }
  if (total > cfg_.max_table_refs)
    return fail(verdict_kind::block, "too_many_tables",
                "the query reads " + std::to_string(total)
                  + " table sources; at most "
                  + std::to_string(cfg_.max_table_refs) + " are allowed");
  return true;
}

bool checker::check_join_condition(size_t j) {
  int d = t_[j]->depth;
  size_t on = size();
  size_t end = size();
  for (size_t k = j + 1; k < size(); ++k) {
    auto& x = *t_[k];
    if (x.depth < d) {
      end = k;
      break;
    }
    if (x.depth != d)
      continue;
    if (on == size() && x.is_keyword("on")) {
      on = k;
      continue;
    }
    if (is_join_op(x) || is_clause_end(x)) {
      end = k;
      break;
    }
  }
  if (on == size())
    return block("join_without_on",
                 "every JOIN needs an ON condition (JOIN t ON a.col = "
                 "t.col)",
                 *t_[j]);
  for (size_t k = on + 1; k < end; ++k) {
    auto& x = *t_[k];
    if ((x.kind == token_kind::identifier
         || x.kind == token_kind::quoted_identifier)
        && x.name != "true" && x.name != "false" && !is_sym(k + 1, "("))
      return true;
  }
  return block("trivial_join_condition",
               "the ON condition of this JOIN names no column, so it joins "
               "every row with every row",
               *t_[on]);
}

bool checker::check_sizes() {
  if (lexed_.max_depth > cfg_.max_depth)
    return fail(verdict_kind::block, "nesting_too_deep",
                "parentheses nest " + std::to_string(lexed_.max_depth)
                  + " deep; at most " + std::to_string(cfg_.max_depth)
                  + " levels are allowed");
  int selects = 0;
  for (auto* x : t_)
    if (x->is_keyword("select"))
      ++selects;
  if (selects > cfg_.max_selects)
    return fail(verdict_kind::block, "too_many_selects",
                "the query has " + std::to_string(selects)
                  + " SELECTs; at most " + std::to_string(cfg_.max_selects)
                  + " are allowed");
  for (size_t i = 0; i + 1 < size(); ++i) {
    auto& x = *t_[i];
    if (x.is_keyword("in") && is_sym(i + 1, "(")) {
      if (is_kw(i + 2, "select") || is_kw(i + 2, "with")
          || is_kw(i + 2, "values"))
        continue;
      size_t close = matching(i + 1);
      int d = t_[i + 1]->depth + 1;
      int n = close > i + 2 ? 1 : 0;
      for (size_t k = i + 2; k < close; ++k)
        if (t_[k]->depth == d && t_[k]->is_symbol(","))
          ++n;
      if (n > cfg_.max_in_list)
        return block("in_list_too_long",
                     "an IN list has " + std::to_string(n)
                       + " elements; at most "
                       + std::to_string(cfg_.max_in_list)
                       + " are allowed (use a range or a join)",
                     x);
    }
    if (x.is_keyword("values")) {
      int d = x.depth;
      int rows = 0;
      for (size_t k = i + 1; k < size(); ++k) {
        if (t_[k]->depth < d || (t_[k]->depth == d && is_clause_end(*t_[k])))
          break;
        if (t_[k]->depth == d && t_[k]->is_symbol("(")
            && ++rows > cfg_.max_in_list)
          break;
      }
      if (rows > cfg_.max_in_list)
        return block("in_list_too_long",
                     "a VALUES list has " + std::to_string(rows)
                       + " rows; at most " + std::to_string(cfg_.max_in_list)
                       + " are allowed",
                     x);
    }
  }
  return true;
}

bool checker::check_cte_expansion() {
  auto defs = ctes();
  if (defs.empty())
    return true;
  // Which CTE body each token is directly in (the innermost one), so
  // that a nested CTE counts only where it is read. Names, column lists
  // and AS [NOT] MATERIALIZED of a definition are no references.
  constexpr size_t main_query = static_cast<size_t>(-1);
  constexpr size_t definition = static_cast<size_t>(-2);
  std::vector<size_t> owner(size(), main_query);
  for (size_t d = 0; d < defs.size(); ++d) {
    for (size_t k = defs[d].name; k < defs[d].open; ++k)
      owner[k] = definition;
    for (size_t k = defs[d].open + 1; k < defs[d].close; ++k)
      owner[k] = d;
  }
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t d = 0; d < defs.size(); ++d)
    by_name[t_[defs[d].name]->name].push_back(d);
  // Every word spelled like a CTE counts as a reference, wherever it is:
  // FROM, JOIN, `x IN c`, scalar subqueries. A column or alias spelled the
  // same counts too, which only overestimates.
  std::vector<std::vector<size_t>> refs(defs.size());
  std::vector<size_t> main_refs;
  for (size_t k = 0; k < size(); ++k) {
    if (owner[k] == definition || !t_[k]->is_word())
      continue;
    if (by_name.count(t_[k]->name) == 0)
      continue;
    (owner[k] == main_query ? main_refs : refs[owner[k]]).push_back(k);
  }
  // cost(c) = 1 + the costs of the CTEs its body names. A name defined
  // more than once costs its dearest definition; a name being costed
  // further up (itself, or a cycle SQLite reports as circular) costs 0.
  auto add = [](int64_t a, int64_t b) {
    constexpr int64_t cap = int64_t{1} << 40;
    return std::min(cap, a + b);
  };
  std::vector<int64_t> cost(defs.size(), -1);
  std::vector<bool> busy(defs.size(), false);
  std::function<int64_t(size_t)> cost_of;
  auto name_cost = [&](const std::string& name) {
    int64_t best = 0;
    for (auto d : by_name[name])
      best = std::max(best, busy[d] ? 0 : cost_of(d));
    return best;
  };
  cost_of = [&](size_t d) {
    if (cost[d] >= 0)
      return cost[d];
    busy[d] = true;
    int64_t c = 1;
    for (auto k : refs[d])
      c = add(c, name_cost(t_[k]->name));
    busy[d] = false;
    return cost[d] = c;
  };
  int64_t total = 0;
  const token* dearest = t_[defs.front().name];
  int64_t dearest_cost = 0;
  for (auto k : main_refs) {
    auto c = name_cost(t_[k]->name);
    total = add(total, c);
    if (c > dearest_cost) {
      dearest_cost = c;
      dearest = t_[k];
    }
  }
  if (total <= cfg_.max_cte_expansion)
    return true;
  return block("cte_expansion_too_large",
               "the query expands to " + std::to_string(total)
                 + " copies of common table expression bodies (SQLite "
                   "compiles a CTE's body again for every reference to "
                   "it: FROM, JOIN, x IN name, subqueries and other CTEs; "
                 + dearest->name + " alone is " + std::to_string(dearest_cost)
                 + "); at most " + std::to_string(cfg_.max_cte_expansion)
                 + " are allowed: read each CTE once and join it",
               *dearest);
}

bool checker::parse_limit(size_t l, size_t& count, size_t& offset,
                          bool& comma) const {
  int d = t_[l]->depth;
  count = l + 1;
  offset = size();
  comma = false;
  if (!integer_literal(tok(count)))
    return false;
  size_t next = count + 1;
  if (is_kw(next, "offset") || (is_sym(next, ",") && tok(next)->depth == d)) {
    comma = is_sym(next, ",");
    if (!integer_literal(tok(next + 1)))
      return false;
    if (comma) {
      offset = count;
      count = next + 1;
    } else {
      offset = next + 1;
    }
    next += 2;
  }
  // A LIMIT clause ends its (sub)query: nothing but ')' may follow.
  auto* after = tok(next);
  return after == nullptr || (after->is_symbol(")") && after->depth < d);
}

bool checker::check_limits() {
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    if (x.is_keyword("offset") && !is_kw(i - 1, "limit")) {
      // OFFSET is only valid inside a LIMIT clause, checked below.
      bool in_limit = false;
      for (size_t k = i; k-- > 0;)
        if (t_[k]->depth == x.depth) {
          in_limit
            = integer_literal(t_[k]) && k > 0 && t_[k - 1]->is_keyword("limit");
          break;
        }
      if (!in_limit)
        return block("non_literal_limit",
                     "OFFSET must follow LIMIT and both must be integer "
                     "literals",
                     x);
    }
    if (!x.is_keyword("limit"))
      continue;
    size_t count = 0;
    size_t offset = 0;
    bool comma = false;
    if (!parse_limit(i, count, offset, comma))
      return block("non_literal_limit",
                   "LIMIT and OFFSET must be plain integer literals (e.g. "
                   "LIMIT 50 OFFSET 100)",
                   x);
  }
  return true;
}

bool checker::check_correctable() {
  if (!lexed_.balanced)
    return fail(verdict_kind::correctable, "unbalanced_parentheses",
                "the parentheses are unbalanced");
  for (auto* x : t_)
    if (x->kind == token_kind::parameter)
      return fail(verdict_kind::correctable, "parameter",
                  "bound parameters like " + shown(*x)
                    + " are not supported: write literal values",
                  x->offset);
  return true;
}

void checker::rewrite_limit() {
  const auto end = t_.back()->offset + t_.back()->text.size();
  const auto max = std::to_string(cfg_.max_limit);
  size_t l = size();
  for (size_t i = 0; i < size(); ++i)
    if (t_[i]->depth == 0 && t_[i]->is_keyword("limit"))
      l = i;
  if (l == size()) {
    result_.sql = std::string{sql_.substr(0, end)} + " LIMIT " + max;
    result_.limit_applied = true;
    return;
  }
  size_t count = 0;
  size_t offset = 0;
  bool comma = false;
  parse_limit(l, count, offset, comma); // validated by check_limits
  auto n = *integer_literal(t_[count]);
  if (n <= cfg_.max_limit) {
    result_.sql = std::string{sql_.substr(0, end)};
    return;
  }
  result_.limit_applied = true;
  auto& c = *t_[count];
  if (!comma) {
    result_.sql = std::string{sql_.substr(0, c.offset)} + max
                  + std::string{sql_.substr(c.offset + c.text.size(),
                                            end - c.offset - c.text.size())};
    return;
  }
  // LIMIT a, b means OFFSET a: spell it out while rewriting.
  auto& lim = *t_[l];
  result_.sql = std::string{sql_.substr(0, lim.offset)} + "LIMIT " + max
                + " OFFSET " + std::string{t_[offset]->text};
}

} // namespace candor::domain::sql::detail
