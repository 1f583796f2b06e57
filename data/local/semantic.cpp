// Reads and checks the catalog's semantic layer (the `semantic` object of
// conf/catalog.json) for the data planner.

#include <algorithm>
#include <optional>
#include <set>

#include <boost/json.hpp>

#include "data/local/planner.hpp"
#include "data/sales/catalog.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace json = boost::json;

namespace {

using domain::ec;

domain::error bad(const std::string& path, const std::string& what) {
  auto e = domain::make_error(ec::config_invalid,
                              "catalog: semantic." + path + ": " + what);
  e.issues.push_back({"semantic." + path, what});
  return e;
}

bool is_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-')
    return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/// Reads `obj[key]` as a string (required unless `optional`).
domain::error get_string(const json::object& obj, std::string_view key,
                         const std::string& path, std::string& out,
                         bool optional = false) {
  auto* v = obj.if_contains(key);
  if (v == nullptr) {
    if (optional)
      return {};
    return bad(path + "." + std::string{key}, "missing");
  }
  if (!v->is_string() || v->as_string().empty())
    return bad(path + "." + std::string{key}, "expected a non-empty string");
  out = std::string{v->as_string()};
  return {};
}

domain::error get_strings(const json::object& obj, std::string_view key,
                          const std::string& path,
                          std::vector<std::string>& out,
                          bool optional = false) {
  auto* v = obj.if_contains(key);
  if (v == nullptr) {
    if (optional)
      return {};
    return bad(path + "." + std::string{key}, "missing");
  }
  if (!v->is_array())
    return bad(path + "." + std::string{key}, "expected an array of strings");
  for (auto& x : v->as_array()) {
    if (!x.is_string() || x.as_string().empty())
      return bad(path + "." + std::string{key},
                 "expected an array of non-empty strings");
    out.emplace_back(x.as_string());
  }
  return {};
}

const json::array* get_array(const json::object& obj, std::string_view key) {
  auto* v = obj.if_contains(key);
  return v != nullptr && v->is_array() ? &v->as_array() : nullptr;
}

} // namespace

domain::outcome<semantic_layer> semantic_layer::parse(const catalog& cat) {
  if (cat.semantic_json().empty())
    return domain::make_error(ec::config_invalid,
                              "catalog: no 'semantic' object: the data "
                              "planner needs the semantic layer");
  boost::system::error_code jec;
  auto doc = json::parse(cat.semantic_json(), jec);
  if (jec || !doc.is_object())
    return bad("(object)", "expected an object");
  auto& root = doc.as_object();
  semantic_layer out;
  if (auto* cov = root.if_contains("coverage"); cov && cov->is_object()) {
    if (auto e
        = get_string(cov->as_object(), "from", "coverage", out.coverage_from))
      return e;
    if (auto e
        = get_string(cov->as_object(), "to", "coverage", out.coverage_to))
      return e;
    if (!is_date(out.coverage_from) || !is_date(out.coverage_to)
        || out.coverage_to < out.coverage_from)
      return bad("coverage", "expected 'from' <= 'to', both 'YYYY-MM-DD'");
  } else {
    return bad("coverage", "expected an object {from, to}");
  }
  std::set<std::string> aliases;
  auto* grains = get_array(root, "grains");
  if (grains == nullptr || grains->empty())
    return bad("grains", "expected a non-empty array");
  for (size_t i = 0; i < grains->size(); ++i) {
    auto path = "grains[" + std::to_string(i) + "]";
    if (!(*grains)[i].is_object())
      return bad(path, "expected an object");
    auto& o = (*grains)[i].as_object();
    semantic_grain g;
    if (auto e = get_string(o, "name", path, g.name))
      return e;
    if (auto e = get_string(o, "from", path, g.from))
      return e;
    if (auto e = get_string(o, "time", path, g.time))
      return e;
    if (auto e = get_strings(o, "provides", path, g.provides))
      return e;
    if (out.grain(g.name) != nullptr)
      return bad(path + ".name", "duplicate grain '" + g.name + "'");
    aliases.insert(g.provides.begin(), g.provides.end());
    out.grains.push_back(std::move(g));
  }
  if (auto* joins = get_array(root, "joins")) {
    for (size_t i = 0; i < joins->size(); ++i) {
      auto path = "joins[" + std::to_string(i) + "]";
      if (!(*joins)[i].is_object())
        return bad(path, "expected an object");
      auto& o = (*joins)[i].as_object();
      semantic_join j;
      if (auto e = get_string(o, "alias", path, j.alias))
        return e;
      if (auto e = get_string(o, "needs", path, j.needs))
        return e;
      if (auto e = get_string(o, "sql", path, j.sql))
        return e;
      if (j.sql.rfind("JOIN ", 0) != 0)
        return bad(path + ".sql", "expected 'JOIN <table> <alias> ON ...'");
      aliases.insert(j.alias);
      out.joins.push_back(std::move(j));
    }
  }
  auto* metrics = get_array(root, "metrics");
  if (metrics == nullptr || metrics->empty())
    return bad("metrics", "expected a non-empty array");
  for (size_t i = 0; i < metrics->size(); ++i) {
    auto path = "metrics[" + std::to_string(i) + "]";
    if (!(*metrics)[i].is_object())
      return bad(path, "expected an object");
    auto& o = (*metrics)[i].as_object();
    semantic_metric m;
    if (auto e = get_string(o, "name", path, m.name))
      return e;
    if (auto e = get_string(o, "label", path, m.label))
      return e;
    std::string unit;
    if (auto e = get_string(o, "unit", path, unit))
      return e;
    if (unit == "eur")
      m.unit = metric_unit::eur;
    else if (unit == "count")
      m.unit = metric_unit::count;
    else if (unit == "ratio")
      m.unit = metric_unit::ratio;
    else
      return bad(path + ".unit", "expected eur, count or ratio");
    if (auto* a = o.if_contains("additive"); a && a->is_bool())
      m.additive = a->as_bool();
    if (auto e = get_strings(o, "phrases", path, m.phrases))
      return e;
    if (auto* f = o.if_contains("filter"); f && f->is_object()) {
      if (auto e = get_string(f->as_object(), "dimension", path + ".filter",
                              m.default_dimension))
        return e;
      if (auto e = get_strings(f->as_object(), "values", path + ".filter",
                               m.default_values))
        return e;
    }
    auto* at = o.if_contains("at");
    if (at == nullptr || !at->is_object() || at->as_object().empty())
      return bad(path + ".at", "expected an object grain -> expression");
    for (auto& kv : at->as_object()) {
      if (out.grain(kv.key()) == nullptr)
        return bad(path + ".at",
                   "unknown grain '" + std::string{kv.key()} + "'");
      if (!kv.value().is_string())
        return bad(path + ".at." + std::string{kv.key()},
                   "expected an expression");
      m.at.emplace_back(std::string{kv.key()},
                        std::string{kv.value().as_string()});
    }
    if (out.metric(m.name) != nullptr)
      return bad(path + ".name", "duplicate metric '" + m.name + "'");
    out.metrics.push_back(std::move(m));
  }
  auto* dims = get_array(root, "dimensions");
  if (dims == nullptr)
    return bad("dimensions", "expected an array");
  for (size_t i = 0; i < dims->size(); ++i) {
    auto path = "dimensions[" + std::to_string(i) + "]";
    if (!(*dims)[i].is_object())
      return bad(path, "expected an object");
    auto& o = (*dims)[i].as_object();
    semantic_dimension d;
    if (auto e = get_string(o, "name", path, d.name))
      return e;
    if (auto e = get_strings(o, "phrases", path, d.phrases))
      return e;
    if (auto e = get_strings(o, "expr", path, d.exprs))
      return e;
    if (d.exprs.empty())
      return bad(path + ".expr", "expected at least one expression");
    if (auto* n = o.if_contains("numeric"); n && n->is_bool())
      d.numeric = n->as_bool();
    if (auto e = get_string(o, "values_from", path, d.values_from, true))
      return e;
    if (auto e = get_string(o, "how_many", path, d.how_many, true))
      return e;
    if (!d.how_many.empty() && out.metric(d.how_many) == nullptr)
      return bad(path + ".how_many", "unknown metric '" + d.how_many + "'");
    if (!d.values_from.empty()) {
      auto dot = d.values_from.find('.');
      if (dot == std::string::npos
          || !cat.column_allowed(d.values_from.substr(0, dot),
                                 d.values_from.substr(dot + 1)))
        return bad(path + ".values_from",
                   "expected 'table.column' of an allowed column");
    }
    auto read_values = [&](const json::array& arr, const std::string& vpath,
                           bool group) -> domain::error {
      for (size_t k = 0; k < arr.size(); ++k) {
        auto p = vpath + "[" + std::to_string(k) + "]";
        if (!arr[k].is_object())
          return bad(p, "expected an object");
        auto& vo = arr[k].as_object();
        semantic_value v;
        if (group) {
          if (auto e = get_strings(vo, "values", p, v.values))
            return e;
        } else {
          std::string one;
          if (auto e = get_string(vo, "value", p, one))
            return e;
          v.values.push_back(std::move(one));
        }
        if (auto e = get_strings(vo, "phrases", p, v.phrases, true))
          return e;
        if (d.numeric)
          for (auto& x : v.values)
            if (x.empty() || !std::all_of(x.begin(), x.end(), [](char c) {
                  return c >= '0' && c <= '9';
                }))
              return bad(p, "a numeric dimension takes digits only");
        d.values.push_back(std::move(v));
      }
      return {};
    };
    if (auto* vs = get_array(o, "values"))
      if (auto e = read_values(*vs, path + ".values", false))
        return e;
    if (auto* gs = get_array(o, "groups"))
      if (auto e = read_values(*gs, path + ".groups", true))
        return e;
    if (out.dimension(d.name) != nullptr)
      return bad(path + ".name", "duplicate dimension '" + d.name + "'");
    out.dimensions.push_back(std::move(d));
  }
  if (auto* defs = root.if_contains("defaults"); defs && defs->is_object()) {
    auto& o = defs->as_object();
    if (auto e = get_string(o, "amount", "defaults", out.default_amount))
      return e;
    if (auto e
        = get_string(o, "count_sold", "defaults", out.default_count_sold))
      return e;
    for (auto* name : {&out.default_amount, &out.default_count_sold})
      if (out.metric(*name) == nullptr)
        return bad("defaults", "unknown metric '" + *name + "'");
  } else {
    return bad("defaults", "expected an object {amount, count_sold}");
  }
  if (auto* r = root.if_contains("restricted"); r && r->is_object()) {
    if (auto e = get_strings(r->as_object(), "phrases", "restricted",
                             out.restricted_phrases))
      return e;
    if (auto e = get_string(r->as_object(), "reason", "restricted",
                            out.restricted_reason))
      return e;
  }
  if (auto e = get_strings(root, "verbs", "verbs", out.measure_verbs, true))
    return e;
  if (auto e = get_strings(root, "filler", "filler", out.filler_phrases, true))
    return e;
  // Cross-checks: default filters name dimensions, every expression's
  // aliases are declared, values of a column with a domain are in it.
  for (auto& m : out.metrics) {
    if (!m.default_dimension.empty()
        && out.dimension(m.default_dimension) == nullptr)
      return bad("metrics." + m.name + ".filter",
                 "unknown dimension '" + m.default_dimension + "'");
  }
  for (auto& d : out.dimensions) {
    for (auto& e : d.exprs) {
      if (expression_aliases(e, aliases).empty())
        return bad("dimensions." + d.name + ".expr",
                   "'" + e + "' uses no declared alias");
      // alias.column: check the column's domain when it has one.
      auto dot = e.find('.');
      auto alias = e.substr(0, dot);
      auto column = e.substr(dot + 1);
      std::string table;
      auto owner = [&](std::string_view sql) {
        // "<table> <alias>" inside a FROM or JOIN clause.
        auto key = " " + alias;
        for (size_t pos = sql.find(key); pos != std::string_view::npos;
             pos = sql.find(key, pos + 1)) {
          auto end = pos + key.size();
          if (end < sql.size() && sql[end] != ' ')
            continue;
          auto b = sql.rfind(' ', pos - 1);
          b = b == std::string_view::npos ? 0 : b + 1;
          return std::string{sql.substr(b, pos - b)};
        }
        return std::string{};
      };
      for (auto& g : out.grains)
        if (table.empty())
          table = owner(" " + g.from);
      for (auto& j : out.joins)
        if (table.empty() && j.alias == alias)
          table = owner(j.sql);
      if (table.empty() || !cat.column_allowed(table, column))
        return bad("dimensions." + d.name + ".expr",
                   "'" + e + "' is not an allowed column of the catalog");
      if (auto* domain = cat.value_domain(table, column))
        for (auto& v : d.values)
          for (auto& x : v.values)
            if (std::find(domain->begin(), domain->end(), x) == domain->end())
              return bad("dimensions." + d.name + ".values",
                         "'" + x + "' is not in the domain of " + table + "."
                           + column);
    }
  }
  return out;
}

/// The aliases `expr` uses: identifiers directly before a '.'.
std::set<std::string> expression_aliases(std::string_view expr,
                                         const std::set<std::string>& known) {
  std::set<std::string> out;
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '.')
      continue;
    size_t b = i;
    while (b > 0
           && (std::isalnum(static_cast<unsigned char>(expr[b - 1]))
               || expr[b - 1] == '_'))
      --b;
    std::string a{expr.substr(b, i - b)};
    if (known.count(a) > 0)
      out.insert(a);
  }
  return out;
}

domain::outcome<dimension_values>
load_dimension_values(const catalog& cat, const distinct_reader& read,
                      size_t max_values) {
  dimension_values out;
  if (cat.semantic_json().empty())
    return out;
  auto layer = semantic_layer::parse(cat);
  if (!layer)
    return layer.err();
  for (auto& d : layer->dimensions) {
    if (d.values_from.empty())
      continue;
    // Names checked against the catalog's allowlist at parse time, and
    // quoted as identifiers here. The same text runs on SQLite and
    // PostgreSQL; the values are put in byte order here, not by the
    // database's collation.
    auto dot = d.values_from.find('.');
    auto ident = [](std::string_view name) {
      std::string q = "\"";
      for (char c : name)
        q += c == '"' ? std::string{"\"\""} : std::string{c};
      return q + "\"";
    };
    auto column = ident(d.values_from.substr(dot + 1));
    auto sql = "SELECT DISTINCT " + column + " FROM "
               + ident(d.values_from.substr(0, dot)) + " WHERE " + column
               + " IS NOT NULL ORDER BY 1 LIMIT "
               + std::to_string(max_values + 1);
    auto got = read(sql);
    if (!got)
      return got.err();
    if (got->size() > max_values)
      return bad("dimensions." + d.name + ".values_from",
                 "more than " + std::to_string(max_values)
                   + " distinct values in " + d.values_from);
    std::sort(got->begin(), got->end());
    auto& values = out[d.name];
    for (auto& v : *got)
      if (!v.empty() && v.size() <= 120) // else not something one would type
        values.push_back(std::move(v));
  }
  return out;
}

domain::outcome<dimension_values>
load_dimension_values(const catalog& cat, const std::string& db_path,
                      size_t max_values) {
  std::optional<database> db;
  return load_dimension_values(
    cat,
    [&](const std::string& sql) -> domain::outcome<std::vector<std::string>> {
      if (!db) {
        auto opened = database::open(db_path, SQLITE_OPEN_READONLY);
        if (!opened)
          return opened.err();
        db.emplace(std::move(*opened));
      }
      auto st = db->prepare(sql);
      if (!st)
        return st.err();
      std::vector<std::string> values;
      for (;;) {
        auto r = st->step();
        if (!r)
          return r.err();
        if (*r != step_result::row)
          break;
        values.push_back(st->column_text(0));
      }
      return values;
    },
    max_values);
}

const semantic_metric* semantic_layer::metric(std::string_view name) const {
  for (auto& m : metrics)
    if (m.name == name)
      return &m;
  return nullptr;
}

const semantic_dimension*
semantic_layer::dimension(std::string_view name) const {
  for (auto& d : dimensions)
    if (d.name == name)
      return &d;
  return nullptr;
}

const semantic_grain* semantic_layer::grain(std::string_view name) const {
  for (auto& g : grains)
    if (g.name == name)
      return &g;
  return nullptr;
}

} // namespace candor::data
