// `candor catalog check` (see check.hpp): the catalog's own checks, its
// check against the database, and the compilation of every metric, join and
// expression under an authorizer that lists the columns each one reads.

#include "data/catalog/check.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <boost/json.hpp>
#include <sqlite3.h>

#include "data/local/planner.hpp"
#include "data/sales/catalog.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace {

// -- where each field of the text starts --------------------------------------

/// Walks valid JSON text and records the line of every field and element
/// by its path (`tables[2].columns[0].name`), and, for an element with a
/// "name", the same path by name (`semantic.metrics.revenue`), which is how
/// some messages name it.
struct locator {
  std::string_view s;
  size_t i = 0;
  size_t line = 1;
  std::map<std::string, size_t> lines;
  std::map<std::string, std::string> by_name; // "x.name" -> "x[3]"

  void ws() {
    while (i < s.size()
           && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) {
      if (s[i] == '\n')
        ++line;
      ++i;
    }
  }

  std::string string() {
    std::string out;
    ++i; // the opening quote
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size())
        ++i;
      out += s[i++];
    }
    ++i;
    return out;
  }

  /// Reads one value at `path`; returns its "name" when it is an object
  /// with a string "name".
  std::string value(const std::string& path) {
    ws();
    lines.emplace(path, line);
    if (i >= s.size())
      return {};
    std::string name;
    if (s[i] == '{') {
      ++i;
      for (;;) {
        ws();
        if (i >= s.size() || s[i] == '}') {
          ++i;
          break;
        }
        if (s[i] == ',') {
          ++i;
          continue;
        }
        auto key = string();
        ws();
        ++i; // ':'
        auto child = path.empty() ? key : path + "." + key;
        ws();
        bool is_string = i < s.size() && s[i] == '"';
        size_t at = i;
        value(child);
        if (key == "name" && is_string) {
          auto saved = i;
          i = at;
          auto l = line;
          name = string();
          i = saved;
          line = l;
        }
      }
    } else if (s[i] == '[') {
      ++i;
      size_t n = 0;
      for (;;) {
        ws();
        if (i >= s.size() || s[i] == ']') {
          ++i;
          break;
        }
        if (s[i] == ',') {
          ++i;
          continue;
        }
        auto child = path + "[" + std::to_string(n++) + "]";
        auto named = value(child);
        if (!named.empty())
          by_name.emplace(path + "." + named, child);
      }
    } else if (s[i] == '"') {
      string();
    } else {
      while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']'
             && s[i] != '\n')
        ++i;
    }
    return name;
  }

  size_t find(std::string path) const {
    // By name first: the longest prefix with a by-name form.
    for (auto& [named, indexed] : by_name)
      if (path == named || path.rfind(named + ".", 0) == 0) {
        path = indexed + path.substr(named.size());
        break;
      }
    while (!path.empty()) {
      if (auto it = lines.find(path); it != lines.end())
        return it->second;
      auto cut = path.find_last_of(".[");
      if (cut == std::string::npos)
        break;
      path.resize(cut);
    }
    return 1;
  }
};

// -- compiling under an authorizer --------------------------------------------

struct reads {
  std::set<std::pair<std::string, std::string>> columns; // table, column
};

int record_reads(void* ctx, int action, const char* a, const char* b,
                 const char*, const char*) {
  if (action == SQLITE_READ && a != nullptr && b != nullptr && *b != '\0') {
    std::string t{a};
    std::string c{b};
    for (auto* x : {&t, &c})
      for (auto& ch : *x)
        if (ch >= 'A' && ch <= 'Z')
          ch = static_cast<char>(ch - 'A' + 'a');
    static_cast<reads*>(ctx)->columns.emplace(t, c);
  }
  return SQLITE_OK;
}

/// Prepares `sql` on `db`; the columns it reads, or SQLite's message.
std::optional<std::string> compile(database& db, const std::string& sql,
                                   reads& out) {
  sqlite3_set_authorizer(db.handle(), record_reads, &out);
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(),
                              static_cast<int>(sql.size()), &stmt, &tail);
  sqlite3_set_authorizer(db.handle(), nullptr, nullptr);
  std::optional<std::string> problem;
  if (rc != SQLITE_OK)
    problem = sqlite3_errmsg(db.handle());
  else if (stmt == nullptr)
    problem = "no statement";
  else if (tail != nullptr
           && std::string_view{tail}.find_first_not_of(" \t\r\n;")
                != std::string_view::npos)
    problem = "more than one statement";
  else if (sqlite3_stmt_readonly(stmt) == 0)
    problem = "not a read-only statement";
  sqlite3_finalize(stmt);
  return problem;
}

class checker {
public:
  checker(std::string_view text, database& db) : text_(text), db_(db) {
    loc_.s = text;
  }

  std::vector<catalog_finding> run();

private:
  void add(const std::string& path, std::string message, bool error = true) {
    findings_.push_back({loc_.find(path), path, std::move(message), error});
  }

  /// Adds a validation error's issues (each names its field), or its
  /// message when it has none.
  void add_error(const domain::error& e) {
    for (auto& is : e.issues)
      add(is.path, is.message);
    if (e.issues.empty())
      add("", e.message);
  }

  /// Adds an error for each column `r` reads that the catalog does not
  /// allow; true when there was none.
  bool allowed(const std::string& path, const reads& r);
  void check_database();
  void check_metrics();
  void check_semantic();
  /// The FROM clause of `g` with the joins that bring in `need`, or a
  /// message naming the alias no join reaches.
  std::string reach(const semantic_grain& g, const std::set<std::string>& need,
                    std::string& missing) const;
  void check_join(size_t i, const semantic_join& j,
                  const std::map<std::string, std::string>& tables);

  std::string_view text_;
  database& db_;
  locator loc_;
  catalog cat_;
  std::optional<semantic_layer> layer_;
  std::vector<catalog_finding> findings_;
};

std::vector<catalog_finding> checker::run() {
  boost::json::stream_parser p;
  boost::system::error_code ec;
  auto used = p.write_some(text_.data(), text_.size(), ec);
  if (!ec)
    p.finish(ec);
  if (ec) {
    auto line
      = 1
        + static_cast<size_t>(std::count(
          text_.begin(), text_.begin() + static_cast<long>(used), '\n'));
    findings_.push_back({line, "", "not valid JSON: " + ec.message(), true});
    return findings_;
  }
  loc_.value("");
  auto parsed = catalog::parse(text_);
  if (!parsed) {
    add_error(parsed.err());
    return findings_;
  }
  cat_ = std::move(*parsed);
  check_database();
  if (!findings_.empty())
    return findings_; // the rest would only repeat the mismatch
  check_metrics();
  check_semantic();
  return findings_;
}

bool checker::allowed(const std::string& path, const reads& r) {
  bool ok = true;
  for (auto& [t, c] : r.columns) {
    if (cat_.column_allowed(t, c))
      continue;
    ok = false;
    if (cat_.column_denied(t, c))
      add(path, "reads " + t + "." + c
                  + ", which the catalog restricts: a metric or expression "
                    "must not use a denied column");
    else
      add(path, "reads " + t + "." + c + ", which the catalog does not allow");
  }
  return ok;
}

void checker::check_database() {
  auto err = cat_.check_against(db_);
  if (!err)
    return;
  if (err.issues.empty()) {
    add("", err.message);
    return;
  }
  for (auto& is : err.issues) {
    // `table` or `table.column` -> the catalog entry that names it.
    auto dot = is.path.find('.');
    auto table = is.path.substr(0, dot);
    auto column = dot == std::string::npos ? "" : is.path.substr(dot + 1);
    std::string path = "tables";
    auto& ts = cat_.tables();
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].name != table)
        continue;
      path = "tables[" + std::to_string(i) + "]";
      for (size_t j = 0; j < ts[i].columns.size(); ++j)
        if (ts[i].columns[j].name == column)
          path += ".columns[" + std::to_string(j) + "]";
      for (size_t j = 0; j < ts[i].denied_columns.size(); ++j)
        if (ts[i].denied_columns[j].name == column)
          path += ".denied_columns[" + std::to_string(j) + "]";
    }
    auto& ds = cat_.denied_tables();
    for (size_t i = 0; i < ds.size(); ++i)
      if (ds[i].name == table)
        path = "denied_tables[" + std::to_string(i) + "]";
    add(path, is.path + ": " + is.message);
  }
}

void checker::check_metrics() {
  auto& ms = cat_.metrics();
  for (size_t i = 0; i < ms.size(); ++i) {
    auto path = "metrics[" + std::to_string(i) + "]";
    reads r;
    if (auto problem = compile(db_, ms[i].sql, r)) {
      add(path + ".sql",
          "metric '" + ms[i].name + "' does not compile: " + *problem);
      continue;
    }
    allowed(path + ".sql", r);
    if (ms[i].draft)
      add(path,
          "metric '" + ms[i].name
            + "' is a draft: check its meaning, then remove \"draft\"",
          false);
  }
}

/// "JOIN products p ON ..." or "order_items oi JOIN orders o ON ...":
/// alias -> table.
void alias_tables(const std::string& sql,
                  std::map<std::string, std::string>& out) {
  std::vector<std::string> words;
  std::string w;
  for (char c : sql + " ") {
    if (c == ' ') {
      if (!w.empty())
        words.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  // "<table> <alias>" opens the FROM clause and follows each JOIN.
  for (size_t k = 0; k + 1 < words.size(); ++k) {
    bool start = k == 0 ? words[0] != "JOIN" : words[k - 1] == "JOIN";
    if (start)
      out.emplace(words[k + 1], words[k]);
  }
}

std::string checker::reach(const semantic_grain& g,
                           const std::set<std::string>& need,
                           std::string& missing) const {
  std::string from = g.from;
  std::set<std::string> have(g.provides.begin(), g.provides.end());
  for (auto& target : need) {
    if (have.count(target) > 0)
      continue;
    // Breadth-first over the joins from what the FROM clause has.
    std::map<std::string, const semantic_join*> via;
    std::deque<std::string> queue(have.begin(), have.end());
    std::set<std::string> seen = have;
    while (!queue.empty() && seen.count(target) == 0) {
      auto at = queue.front();
      queue.pop_front();
      for (auto& j : layer_->joins)
        if (j.needs == at && seen.insert(j.alias).second) {
          via[j.alias] = &j;
          queue.push_back(j.alias);
        }
    }
    if (seen.count(target) == 0) {
      missing = target;
      return {};
    }
    std::vector<const semantic_join*> path;
    for (auto a = target; have.count(a) == 0; a = via[a]->needs)
      path.push_back(via[a]);
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      from += " " + (*it)->sql;
      have.insert((*it)->alias);
    }
  }
  return from;
}

void checker::check_join(size_t i, const semantic_join& j,
                         const std::map<std::string, std::string>& tables) {
  auto path = "semantic.joins[" + std::to_string(i) + "].sql";
  // Compile it from a grain that has (or reaches) what it needs.
  bool compiled = false;
  for (auto& g : layer_->grains) {
    if (std::find(g.provides.begin(), g.provides.end(), j.alias)
        != g.provides.end())
      continue;
    std::string missing;
    auto from = reach(g, {j.needs}, missing);
    if (from.empty())
      continue;
    reads r;
    if (auto problem = compile(db_, "SELECT 1 FROM " + from + " " + j.sql, r)) {
      add(path, "does not compile: " + *problem);
      return;
    }
    allowed(path, r);
    compiled = true;
    break;
  }
  if (!compiled) {
    add(path, "no grain reaches '" + j.needs + "', which this join needs",
        false);
    return;
  }
  // "... ON a.x = b.y": the side of the joined alias must be unique.
  auto on = j.sql.find(" ON ");
  auto eq = j.sql.find(" = ", on == std::string::npos ? 0 : on);
  if (on == std::string::npos || eq == std::string::npos)
    return;
  auto left = j.sql.substr(on + 4, eq - on - 4);
  auto right = j.sql.substr(eq + 3);
  auto split = [](const std::string& side) {
    auto dot = side.find('.');
    return dot == std::string::npos
             ? std::pair<std::string, std::string>{}
             : std::pair{side.substr(0, dot), side.substr(dot + 1)};
  };
  auto [la, lc] = split(left);
  auto [ra, rc] = split(right);
  if (ra == j.alias) {
    std::swap(la, ra);
    std::swap(lc, rc);
  }
  if (la != j.alias || tables.count(la) == 0 || tables.count(ra) == 0)
    return; // not a plain key equality: compiled is all we can say
  auto key_table = tables.at(la);
  auto dup
    = db_.query_int64("SELECT COUNT(*) - COUNT(DISTINCT " + quote_identifier(lc)
                      + ") FROM " + quote_identifier(key_table) + " WHERE "
                      + quote_identifier(lc) + " IS NOT NULL");
  if (dup && *dup > 0) {
    add(path, key_table + "." + lc + " is not unique (" + std::to_string(*dup)
                + " rows repeat a key): the join would multiply rows");
    return;
  }
  auto other = tables.at(ra);
  auto orphans = db_.query_int64(
    "SELECT COUNT(*) FROM " + quote_identifier(other) + " WHERE "
    + quote_identifier(rc) + " IS NOT NULL AND " + quote_identifier(rc)
    + " NOT IN (SELECT " + quote_identifier(lc) + " FROM "
    + quote_identifier(key_table) + " WHERE " + quote_identifier(lc)
    + " IS NOT NULL)");
  if (orphans && *orphans > 0)
    add(path,
        std::to_string(*orphans) + " rows of " + other + " have a " + rc
          + " with no match in " + key_table + "." + lc
          + ": the join leaves them out",
        false);
}

void checker::check_semantic() {
  if (cat_.semantic_json().empty())
    return;
  auto layer = semantic_layer::parse(cat_);
  if (!layer) {
    add_error(layer.err());
    return;
  }
  layer_ = std::move(*layer);
  std::map<std::string, std::string> tables; // alias -> table
  std::set<std::string> known;
  for (auto& g : layer_->grains)
    alias_tables(g.from, tables);
  for (auto& j : layer_->joins)
    alias_tables(j.sql, tables);
  for (auto& [alias, table] : tables)
    known.insert(alias);
  for (size_t i = 0; i < layer_->grains.size(); ++i) {
    auto& g = layer_->grains[i];
    auto path = "semantic.grains[" + std::to_string(i) + "]";
    reads r;
    if (auto problem
        = compile(db_, "SELECT " + g.time + " FROM " + g.from, r)) {
      add(path, "grain '" + g.name + "' does not compile: " + *problem);
      continue;
    }
    allowed(path, r);
  }
  for (size_t i = 0; i < layer_->joins.size(); ++i)
    check_join(i, layer_->joins[i], tables);
  // An expression at a grain: the joins its aliases need, then compiled.
  auto expression = [&](const std::string& path, const semantic_grain& g,
                        const std::string& expr) {
    std::string missing;
    auto from = reach(g, expression_aliases(expr, known), missing);
    if (from.empty()) {
      add(path, "no join brings '" + missing + "' to grain '" + g.name + "'");
      return false;
    }
    reads r;
    if (auto problem = compile(db_, "SELECT " + expr + " FROM " + from, r)) {
      add(path, "does not compile at grain '" + g.name + "': " + *problem);
      return false;
    }
    return allowed(path, r);
  };
  for (size_t i = 0; i < layer_->metrics.size(); ++i) {
    auto& m = layer_->metrics[i];
    for (auto& [grain, expr] : m.at)
      expression("semantic.metrics[" + std::to_string(i) + "].at." + grain,
                 *layer_->grain(grain), expr);
  }
  for (size_t i = 0; i < layer_->dimensions.size(); ++i) {
    auto& d = layer_->dimensions[i];
    auto path = "semantic.dimensions[" + std::to_string(i) + "].expr";
    for (auto& e : d.exprs) {
      // Some grain must reach it; the first that does compiles it.
      bool reached = false;
      for (auto& g : layer_->grains) {
        std::string missing;
        if (reach(g, expression_aliases(e, known), missing).empty())
          continue;
        reached = true;
        expression(path, g, e);
        break;
      }
      if (!reached)
        add(path, "no grain reaches '" + e + "'");
    }
  }
}

} // namespace

std::vector<catalog_finding> check_catalog(std::string_view text,
                                           database& db) {
  return checker{text, db}.run();
}

std::string format_finding(const std::string& file, const catalog_finding& f) {
  return file + ":" + std::to_string(f.line) + ": "
         + (f.error ? "error" : "warning") + ": "
         + (f.path.empty() ? std::string{} : f.path + ": ") + f.message;
}

size_t line_of(std::string_view text, const std::string& path) {
  locator loc;
  loc.s = text;
  loc.value("");
  return loc.find(path);
}

} // namespace candor::data
