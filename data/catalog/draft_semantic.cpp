// The catalog draft's semantic layer (grains from tables with a date
// column, joins from foreign keys, counts and sums as metrics, text columns
// as dimensions) and the draft's indented JSON text.

#include <algorithm>
#include <map>
#include <set>

#include <boost/json.hpp>

#include "data/catalog/draft_detail.hpp"
#include "data/sales/catalog_detail.hpp"
#include "data/sqlite.hpp"

namespace candor::data::draft_detail {

namespace json = boost::json;

namespace {

using catalog_detail::lower;

std::string spoken(std::string_view name) {
  std::string out;
  for (auto& w : name_words(name))
    out += (out.empty() ? "" : " ") + w;
  return out;
}

bool has_word(std::string_view name, std::initializer_list<const char*> any) {
  auto words = name_words(name);
  for (auto* w : any)
    if (std::find(words.begin(), words.end(), w) != words.end())
      return true;
  return false;
}

/// Short aliases that are SQL keywords.
const std::set<std::string> keywords{"as",  "at",  "by",  "do",  "if",  "in",
                                     "is",  "no",  "of",  "on",  "or",  "to",
                                     "and", "asc", "end", "for", "key", "not",
                                     "row", "set", "all", "any", "add", "use"};

/// A short alias for the table, made unique: its initials ("order_items"
/// -> "oi"), else the first two or three letters of its first word, else
/// the initials and a number.
std::string make_alias(std::string_view table, std::set<std::string>& used) {
  auto words = name_words(table);
  std::string initials;
  for (auto& w : words)
    if (!w.empty() && w[0] >= 'a' && w[0] <= 'z')
      initials += w[0];
  if (initials.empty())
    initials = "t";
  std::vector<std::string> tries{initials};
  if (!words.empty() && words[0][0] >= 'a' && words[0][0] <= 'z')
    for (size_t n : {2, 3})
      if (words[0].size() > n)
        tries.push_back(words[0].substr(0, n) + initials.substr(1));
  for (int n = 2; n < 100; ++n)
    tries.push_back(initials + std::to_string(n));
  for (auto& alias : tries)
    if (keywords.count(alias) == 0 && used.insert(alias).second)
      return alias;
  return initials + "_";
}

/// The column that dates a row of `t`, or nullptr: a date column, one
/// whose name says date or day first, a created/updated stamp last.
const draft_column* time_column(const draft_table& t) {
  const draft_column* best = nullptr;
  int best_rank = 99;
  for (auto& c : t.columns) {
    if (!c.is_date || c.personal || !c.skip.empty())
      continue;
    int rank = has_word(c.name, {"date", "day", "on"}) ? 0 : 1;
    if (has_word(c.name, {"updated", "modified", "deleted", "changed"}))
      rank = 2;
    if (rank < best_rank) {
      best = &c;
      best_rank = rank;
    }
  }
  return best;
}

bool column_allowed(const draft_column& c) {
  return !c.personal && c.skip.empty();
}

json::array strings(std::initializer_list<std::string> xs) {
  json::array out;
  std::set<std::string> seen;
  for (auto& x : xs)
    if (!x.empty() && seen.insert(x).second)
      out.emplace_back(x);
  return out;
}

/// "city" -> "cities", "status" -> "statuses", "species" -> "species":
/// good enough for phrases, never for SQL.
std::string plural(const std::string& s) {
  if (s.ends_with("species") || s.ends_with("series"))
    return s;
  if (s.size() > 2 && s.ends_with("y")
      && std::string_view{"aeiou"}.find(s[s.size() - 2]) == std::string::npos)
    return s.substr(0, s.size() - 1) + "ies";
  if (s.ends_with("s") || s.ends_with("x") || s.ends_with("ch")
      || s.ends_with("sh"))
    return s + "es";
  return s + "s";
}

/// "orders" -> "order"; good enough for phrases, never for SQL.
std::string singular(const std::string& s) {
  if (s.size() > 3 && s.ends_with("ies"))
    return s.substr(0, s.size() - 3) + "y";
  if (s.size() > 3 && s.ends_with("s") && !s.ends_with("ss"))
    return s.substr(0, s.size() - 1);
  return s;
}

void print(const json::value& v, std::string& out, int indent);

/// Scalars, arrays of scalars, and objects of those (one level down).
bool flat(const json::value& v, int depth = 0) {
  if (v.is_object()) {
    if (depth > 1)
      return false;
    for (auto& kv : v.as_object())
      if (!flat(kv.value(), depth + 1))
        return false;
    return true;
  }
  if (v.is_array()) {
    for (auto& x : v.as_array())
      if (x.is_object() || x.is_array())
        return false;
    return true;
  }
  return true;
}

void print_flat(const json::value& v, std::string& out) {
  if (v.is_object()) {
    out += "{";
    bool first = true;
    for (auto& kv : v.as_object()) {
      out += first ? "" : ", ";
      first = false;
      out += json::serialize(json::string{kv.key()}) + ": ";
      print_flat(kv.value(), out);
    }
    out += "}";
  } else if (v.is_array()) {
    out += "[";
    bool first = true;
    for (auto& x : v.as_array()) {
      out += first ? "" : ", ";
      first = false;
      print_flat(x, out);
    }
    out += "]";
  } else {
    out += json::serialize(v);
  }
}

void print(const json::value& v, std::string& out, int indent) {
  if (flat(v)) {
    print_flat(v, out);
    return;
  }
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  std::string close(static_cast<size_t>(indent), ' ');
  bool first = true;
  if (v.is_object()) {
    out += "{\n";
    for (auto& kv : v.as_object()) {
      out += first ? "" : ",\n";
      first = false;
      out += pad + json::serialize(json::string{kv.key()}) + ": ";
      print(kv.value(), out, indent + 2);
    }
    out += "\n" + close + "}";
    return;
  }
  out += "[\n";
  for (auto& x : v.as_array()) {
    out += first ? "" : ",\n";
    first = false;
    out += pad;
    print(x, out, indent + 2);
  }
  out += "\n" + close + "]";
}

/// The phrases a reader may use for each kind of personal data, so the
/// planner refuses a question about it instead of answering around it.
std::vector<std::string> restricted_phrases(const std::string& kind) {
  if (kind == "e-mail addresses")
    return {"email", "emails", "e-mail", "email address", "email addresses"};
  if (kind == "telephone numbers")
    return {"phone", "phone number", "phone numbers", "telephone", "mobile"};
  if (kind == "postal addresses")
    return {"address", "addresses", "postal address", "street"};
  if (kind == "IBANs")
    return {"iban", "ibans", "bank account", "bank accounts"};
  if (kind == "birth dates")
    return {"birth date", "date of birth", "birthday", "birthdays"};
  if (kind == "national identity numbers")
    return {"national id", "social security number", "passport number"};
  return {"name", "names", "who", "whose", "full name"};
}

} // namespace

/// A number worth summing: not a key, a 0/1 flag, a position or a
/// calendar part.
bool is_measure(const draft_column& c) {
  return c.is_numeric && !c.is_key && !c.is_flag && column_allowed(c)
         && !has_word(c.name, {"number", "no", "num", "position", "rank", "seq",
                               "sequence", "index", "year", "month", "day",
                               "version", "zip", "code"});
}

json::object draft_semantic(database& db,
                            const std::vector<draft_table>& tables,
                            std::vector<std::string>& notes) {
  std::set<std::string> used;
  std::map<std::string, std::string> alias; // table -> alias
  for (auto& t : tables)
    if (!t.denied)
      alias[lower(t.name)] = make_alias(lower(t.name), used);
  // Joins: each foreign key brings its target in once its table is there.
  struct edge {
    const draft_table* from_table;
    std::string from_column;
    const draft_table* to_table;
    std::string to_column;
    std::string sql;
  };
  std::vector<edge> edges;
  json::array joins;
  std::set<std::pair<std::string, std::string>> joined;
  std::map<std::string, const draft_table*> by_name;
  for (auto& t : tables)
    by_name[lower(t.name)] = &t;
  auto allowed_column = [](const draft_table& tt, const std::string& cn) {
    for (auto& c : tt.columns)
      if (lower(c.name) == cn)
        return column_allowed(c);
    return false;
  };
  for (auto& t : tables) {
    auto name = lower(t.name);
    if (t.denied)
      continue;
    for (auto& r : t.refs) {
      auto target = lower(r.table);
      auto it = by_name.find(target);
      if (it == by_name.end() || it->second->denied || target == name)
        continue;
      auto to = lower(r.to);
      if (to.empty()) {
        int pks = 0;
        for (auto& c : it->second->columns)
          if (c.pk) {
            to = lower(c.name);
            ++pks;
          }
        if (pks != 1)
          continue;
      }
      if (!allowed_column(t, lower(r.from)) || !allowed_column(*it->second, to))
        continue;
      if (!joined.insert({alias[target], alias[name]}).second)
        continue;
      auto sql = "JOIN " + target + " " + alias[target] + " ON " + alias[target]
                 + "." + to + " = " + alias[name] + "." + lower(r.from);
      edges.push_back({&t, lower(r.from), it->second, to, sql});
      joins.push_back(json::object{
        {"alias", alias[target]}, {"needs", alias[name]}, {"sql", sql}});
    }
  }
  // Grains: a table with a date column, or one whose foreign key leads to
  // such a table (order lines dated by their order).
  json::array grains;
  json::array metrics;
  std::set<std::string> metric_names;
  std::string from;
  std::string to;
  std::string amount;
  int amount_rank = 2; // 0: a sum of money, 1: another sum, 2: a count
  std::string count_sold;
  bool count_sold_is_count = true;
  for (auto& t : tables) {
    auto name = lower(t.name);
    if (t.denied)
      continue;
    auto& a = alias[name];
    auto* dated = &t;
    auto* tc = time_column(t);
    std::string from_sql = name + " " + a;
    json::array provides{json::value(a)};
    if (tc == nullptr) {
      // Of the dated tables it references, the one with the most rows: the
      // event it belongs to (an order), not a thing it names (a product).
      const edge* best = nullptr;
      for (auto& e : edges)
        if (e.from_table == &t && time_column(*e.to_table) != nullptr
            && (best == nullptr || e.to_table->rows > best->to_table->rows))
          best = &e;
      if (best != nullptr) {
        dated = best->to_table;
        tc = time_column(*dated);
        from_sql += " " + best->sql;
        provides.emplace_back(alias[lower(dated->name)]);
      }
    }
    if (tc == nullptr)
      continue;
    auto col = alias[lower(dated->name)] + "." + lower(tc->name);
    bool stamp
      = std::any_of(tc->sample.values.begin(), tc->sample.values.end(),
                    [](const std::string& v) { return v.size() > 10; });
    auto time = stamp ? "substr(" + col + ", 1, 10)" : col;
    auto column = quote_identifier(tc->name);
    auto range = db.prepare("SELECT MIN(substr(" + column
                            + ", 1, 10)), "
                              "MAX(substr("
                            + column + ", 1, 10)) FROM "
                            + quote_identifier(dated->name));
    if (range)
      (void)for_each_row(*range, [&](statement& row) {
        auto lo = row.column_text(0);
        auto hi = row.column_text(1);
        if (!lo.empty() && (from.empty() || lo < from))
          from = lo;
        if (!hi.empty() && (to.empty() || hi > to))
          to = hi;
      });
    grains.push_back(json::object{{"name", name},
                                  {"from", from_sql},
                                  {"time", time},
                                  {"provides", std::move(provides)}});
    auto words = spoken(name);
    if (metric_names.insert(name).second) {
      metrics.push_back(json::object{
        {"name", name},
        {"label", words},
        {"unit", "count"},
        {"additive", true},
        {"phrases", strings({words, "number of " + words,
                             singular(words) + " count", "how many " + words})},
        {"at", json::object{{name, "COUNT(*)"}}}});
      if (amount.empty())
        amount = name;
      if (count_sold.empty())
        count_sold = name;
    }
    for (auto& c : t.columns) {
      if (!is_measure(c))
        continue;
      auto cname = lower(c.name);
      auto cw = spoken(cname);
      auto mname = cw.rfind("total", 0) == 0 ? cname : "total_" + cname;
      if (!metric_names.insert(mname).second)
        continue;
      auto label = cw.rfind("total", 0) == 0 ? cw : "total " + cw;
      metrics.push_back(json::object{
        {"name", mname},
        {"label", label},
        {"unit", "count"},
        {"additive", true},
        {"phrases", strings({cw, label})},
        {"at", json::object{{name, "SUM(" + a + "." + cname + ")"}}}});
      if (amount_rank > 0) {
        int rank = has_word(cname, {"amount", "total", "revenue", "sales",
                                    "price", "value", "cents", "eur", "usd",
                                    "cost", "fee", "paid"})
                     ? 0
                     : 1;
        if (rank < amount_rank) {
          amount = mname;
          amount_rank = rank;
        }
      }
      if (has_word(cname, {"quantity", "qty", "units", "pieces"})
          && count_sold_is_count) {
        count_sold = mname;
        count_sold_is_count = false;
      }
    }
  }
  if (grains.empty()) {
    notes.push_back("no semantic layer: no allowed table has a date column, "
                    "and the local planner needs one; data questions need a "
                    "model (llm.provider openai)");
    return {};
  }
  // Dimensions: text columns with a value list (the same name and values
  // in several tables is one dimension), and named things read from the
  // data at startup.
  json::array dims;
  std::map<std::string, size_t> dim_index;
  std::set<std::string> kinds;
  std::vector<std::string> restricted;
  for (auto& t : tables) {
    auto name = lower(t.name);
    for (auto& c : t.columns)
      if (c.personal && !t.denied) {
        kinds.insert(c.personal->kind);
        restricted.push_back(name + "." + lower(c.name));
      }
    if (t.denied)
      continue;
    for (auto& c : t.columns) {
      // Text codes with a value list are dimensions even as keys
      // (orders.channel referencing channels).
      if (!column_allowed(c) || c.is_date || !c.is_text)
        continue;
      auto cname = lower(c.name);
      auto expr = alias[name] + "." + cname;
      auto cw = spoken(cname);
      if (!c.values.empty()) {
        json::array values;
        for (auto& v : c.values) {
          json::object one{{"value", v}};
          auto said = spoken(v);
          if (said != v && !said.empty())
            one["phrases"] = json::array{json::value(said)};
          values.push_back(std::move(one));
        }
        auto found = dim_index.find(cname);
        if (found != dim_index.end()) {
          auto& d = dims[found->second].as_object();
          if (d.at("values") == json::value(values)) {
            d["expr"].as_array().emplace_back(expr);
            continue;
          }
        }
        auto dname = found == dim_index.end() ? cname : name + "_" + cname;
        dim_index.emplace(dname, dims.size());
        dims.push_back(json::object{{"name", dname},
                                    {"phrases", strings({cw, plural(cw)})},
                                    {"expr", json::array{json::value(expr)}},
                                    {"values", std::move(values)}});
      } else if (c.distinct > 0 && c.distinct <= 500) {
        auto dname = dim_index.count(cname) > 0 ? name + "_" + cname : cname;
        if (dim_index.count(dname) > 0)
          continue;
        dim_index.emplace(dname, dims.size());
        dims.push_back(json::object{{"name", dname},
                                    {"phrases", strings({cw, plural(cw)})},
                                    {"expr", json::array{json::value(expr)}},
                                    {"values_from", name + "." + cname},
                                    {"values", json::array{}}});
      }
    }
  }
  json::object sem;
  sem["description"] = "Drafted: how metrics and dimensions are computed, at "
                       "which grain, and the phrases users say for them.";
  sem["coverage"] = json::object{{"from", from}, {"to", to}};
  sem["grains"] = std::move(grains);
  sem["joins"] = std::move(joins);
  sem["metrics"] = std::move(metrics);
  sem["defaults"]
    = json::object{{"amount", amount}, {"count_sold", count_sold}};
  sem["dimensions"] = std::move(dims);
  if (!kinds.empty()) {
    json::array phrases;
    std::set<std::string> seen;
    for (auto& k : kinds)
      for (auto& p : restricted_phrases(k))
        if (seen.insert(p).second)
          phrases.emplace_back(p);
    for (const char* p : {"personal data", "contact details"})
      if (seen.insert(p).second)
        phrases.emplace_back(p);
    std::string reason = "personal data is not available: the catalog "
                         "restricts ";
    for (size_t i = 0; i < restricted.size(); ++i)
      reason += (i == 0 ? "" : ", ") + restricted[i];
    sem["restricted"]
      = json::object{{"phrases", std::move(phrases)}, {"reason", reason}};
  }
  notes.push_back(
    "semantic layer: " + std::to_string(sem["grains"].as_array().size())
    + " grains, " + std::to_string(sem["metrics"].as_array().size())
    + " metrics, " + std::to_string(sem["dimensions"].as_array().size())
    + " dimensions; add the phrases your users say");
  return sem;
}

std::string catalog_json_text(const json::object& doc) {
  std::string out;
  print(json::value(doc), out, 0);
  return out + "\n";
}

} // namespace candor::data::draft_detail
