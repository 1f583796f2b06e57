#include "data/sales/catalog.hpp"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <utility>

#include <boost/json.hpp>

#include "data/sqlite.hpp"
#include "domain/build_info.hpp"

namespace candor::data {

namespace {

namespace json = boost::json;
using domain::ec;

// -- helpers ------------------------------------------------------------------

std::string lower(std::string_view text) {
  std::string out{text};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// A lower-case SQL identifier: [a-z_][a-z0-9_]*, at most 64 bytes.
bool is_identifier(std::string_view text) {
  if (text.empty() || text.size() > 64)
    return false;
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = text[i];
    bool ok = (c >= 'a' && c <= 'z') || c == '_'
              || (i > 0 && c >= '0' && c <= '9');
    if (!ok)
      return false;
  }
  return true;
}

domain::error field_error(const std::string& path, std::string message) {
  auto err = domain::make_error(ec::config_invalid,
                                "catalog: " + path + ": " + message);
  err.issues.push_back({path, std::move(message)});
  return err;
}

std::string join_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string{key} : parent + "." + std::string{key};
}

std::string index_path(const std::string& parent, size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

// -- JSON field readers (each names the field it rejects) ---------------------

domain::error check_keys(const json::object& obj, const std::string& path,
                         std::initializer_list<std::string_view> allowed) {
  for (auto& kv : obj) {
    auto key = std::string_view{kv.key()};
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return field_error(join_path(path, key), "unknown field");
  }
  return {};
}

domain::error read_string(const json::object& obj, const std::string& path,
                          std::string_view key, bool required,
                          std::string& out) {
  auto* v = obj.if_contains(key);
  auto field = join_path(path, key);
  if (v == nullptr)
    return required ? field_error(field, "missing") : domain::error{};
  auto* s = v->if_string();
  if (s == nullptr)
    return field_error(field, "expected a string");
  if (s->empty())
    return field_error(field, "must not be empty");
  out.assign(s->data(), s->size());
  return {};
}

domain::error read_name(const json::object& obj, const std::string& path,
                        std::string& out) {
  if (auto err = read_string(obj, path, "name", true, out))
    return err;
  if (!is_identifier(out))
    return field_error(join_path(path, "name"),
                       "'" + out
                         + "' is not a lower-case SQL identifier "
                           "([a-z_][a-z0-9_]*)");
  return {};
}

domain::error read_strings(const json::object& obj, const std::string& path,
                           std::string_view key,
                           std::vector<std::string>& out) {
  auto* v = obj.if_contains(key);
  auto field = join_path(path, key);
  if (v == nullptr)
    return {};
  auto* arr = v->if_array();
  if (arr == nullptr || arr->empty())
    return field_error(field, "expected a non-empty array of strings");
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < arr->size(); ++i) {
    auto* s = (*arr)[i].if_string();
    if (s == nullptr || s->empty())
      return field_error(index_path(field, i), "expected a non-empty string");
    std::string text{s->data(), s->size()};
    if (!seen.insert(text).second)
      return field_error(index_path(field, i), "duplicate '" + text + "'");
    out.push_back(std::move(text));
  }
  return {};
}

/// Iterates over a required (or optional) array of objects.
template <class F>
domain::error for_each_object(const json::object& obj, const std::string& path,
                              std::string_view key, bool required, F&& f) {
  auto* v = obj.if_contains(key);
  auto field = join_path(path, key);
  if (v == nullptr)
    return required ? field_error(field, "missing") : domain::error{};
  auto* arr = v->if_array();
  if (arr == nullptr || (required && arr->empty()))
    return field_error(field, required ? "expected a non-empty array"
                                       : "expected an array");
  for (size_t i = 0; i < arr->size(); ++i) {
    auto item_path = index_path(field, i);
    auto* item = (*arr)[i].if_object();
    if (item == nullptr)
      return field_error(item_path, "expected an object");
    if (auto err = f(*item, item_path))
      return err;
  }
  return {};
}

domain::error read_denial(const json::object& obj, const std::string& path,
                          catalog_denial& out) {
  if (auto err = check_keys(obj, path, {"name", "reason"}))
    return err;
  if (auto err = read_name(obj, path, out.name))
    return err;
  return read_string(obj, path, "reason", true, out.reason);
}

// -- introspection ------------------------------------------------------------

struct db_column {
  std::string name;
  std::string type;
  bool not_null = false;
  int64_t pk = 0;
};

struct db_object {
  std::string name;
  std::string type; ///< "table" or "view"
};

domain::outcome<std::vector<db_object>> schema_objects(database& db) {
  auto stmt = db.prepare("SELECT name, type FROM sqlite_schema "
                         "WHERE type IN ('table', 'view') "
                         "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                         "ORDER BY name");
  if (!stmt)
    return stmt.err();
  std::vector<db_object> out;
  if (auto err = for_each_row(*stmt, [&out](statement& row) {
        out.push_back({row.column_text(0), row.column_text(1)});
      }))
    return err;
  return out;
}

domain::outcome<std::vector<db_column>> table_columns(database& db,
                                                      std::string_view table) {
  auto stmt = db.prepare("SELECT name, type, \"notnull\", pk "
                         "FROM pragma_table_info(?) ORDER BY cid");
  if (!stmt)
    return stmt.err();
  if (auto err = stmt->bind_text(1, table))
    return err;
  std::vector<db_column> out;
  if (auto err = for_each_row(*stmt, [&out](statement& row) {
        out.push_back({row.column_text(0), row.column_text(1),
                       row.column_int64(2) != 0, row.column_int64(3)});
      }))
    return err;
  return out;
}

struct db_reference {
  std::string from;
  std::string table;
  std::string to; ///< empty: the target's primary key
};

domain::outcome<std::vector<db_reference>>
table_references(database& db, std::string_view table) {
  auto stmt = db.prepare("SELECT \"from\", \"table\", \"to\" "
                         "FROM pragma_foreign_key_list(?) ORDER BY id, seq");
  if (!stmt)
    return stmt.err();
  if (auto err = stmt->bind_text(1, table))
    return err;
  std::vector<db_reference> out;
  if (auto err = for_each_row(*stmt, [&out](statement& row) {
        out.push_back(
          {row.column_text(0), row.column_text(1), row.column_text(2)});
      }))
    return err;
  return out;
}

void append_list(std::string& out, const std::vector<std::string>& items,
                 bool quoted) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += quoted ? quote_literal(items[i]) : items[i];
  }
}

/// A description, synonyms and domain as one comment line's text.
std::string annotation(const std::string& description,
                       const std::vector<std::string>& synonyms,
                       const std::vector<std::string>& values) {
  std::string out = description;
  if (!values.empty()) {
    out += " Values: ";
    append_list(out, values, true);
    out += ".";
  }
  if (!synonyms.empty()) {
    out += " Also called: ";
    append_list(out, synonyms, false);
    out += ".";
  }
  return out;
}

} // namespace

// -- parsing ------------------------------------------------------------------

domain::outcome<catalog> catalog::parse(std::string_view text) {
  json::stream_parser parser;
  boost::system::error_code jec;
  auto used = parser.write(text.data(), text.size(), jec);
  if (!jec)
    parser.finish(jec);
  if (jec) {
    auto line = 1 + std::count(text.begin(), text.begin() + used, '\n');
    return field_error("(document)", "invalid JSON at line "
                                       + std::to_string(line) + " (offset "
                                       + std::to_string(used)
                                       + "): " + jec.message());
  }
  auto doc = parser.release();
  auto* root = doc.if_object();
  if (root == nullptr)
    return field_error("(document)", "expected a JSON object");
  if (auto err = check_keys(*root, "", {"version", "description", "tables",
                                        "denied_tables", "metrics",
                                        "guidance"}))
    return err;
  auto* version = root->if_contains("version");
  if (version == nullptr)
    return field_error("version", "missing");
  if (!version->is_int64() || version->as_int64() != 1)
    return field_error("version", "expected 1");

  catalog out;
  if (auto err = read_string(*root, "", "description", false,
                             out.description_))
    return err;
  std::set<std::string, std::less<>> table_names;

  auto err = for_each_object(
    *root, "", "tables", true,
    [&](const json::object& obj, const std::string& path) -> domain::error {
      if (auto e = check_keys(obj, path, {"name", "description", "synonyms",
                                          "columns", "denied_columns"}))
        return e;
      catalog_table table;
      if (auto e = read_name(obj, path, table.name))
        return e;
      if (!table_names.insert(table.name).second)
        return field_error(join_path(path, "name"),
                           "duplicate table '" + table.name + "'");
      if (auto e = read_string(obj, path, "description", true,
                               table.description))
        return e;
      if (auto e = read_strings(obj, path, "synonyms", table.synonyms))
        return e;
      std::set<std::string, std::less<>> column_names;
      auto add_column = [&](const std::string& name,
                            const std::string& at) -> domain::error {
        if (!column_names.insert(name).second)
          return field_error(join_path(at, "name"),
                             "duplicate column '" + name + "' in table '"
                               + table.name + "'");
        return {};
      };
      if (auto e = for_each_object(
            obj, path, "columns", true,
            [&](const json::object& cobj,
                const std::string& cpath) -> domain::error {
              if (auto e2 = check_keys(cobj, cpath, {"name", "description",
                                                     "synonyms", "values"}))
                return e2;
              catalog_column column;
              if (auto e2 = read_name(cobj, cpath, column.name))
                return e2;
              if (auto e2 = add_column(column.name, cpath))
                return e2;
              if (auto e2 = read_string(cobj, cpath, "description", true,
                                        column.description))
                return e2;
              if (auto e2 = read_strings(cobj, cpath, "synonyms",
                                         column.synonyms))
                return e2;
              if (auto e2 = read_strings(cobj, cpath, "values",
                                         column.values))
                return e2;
              table.columns.push_back(std::move(column));
              return {};
            }))
        return e;
      if (auto e = for_each_object(
            obj, path, "denied_columns", false,
            [&](const json::object& dobj,
                const std::string& dpath) -> domain::error {
              catalog_denial denial;
              if (auto e2 = read_denial(dobj, dpath, denial))
                return e2;
              if (auto e2 = add_column(denial.name, dpath))
                return e2;
              table.denied_columns.push_back(std::move(denial));
              return {};
            }))
        return e;
      out.table_index_.emplace(table.name, out.tables_.size());
      out.tables_.push_back(std::move(table));
      return {};
    });
  if (err)
    return err;

  err = for_each_object(
    *root, "", "denied_tables", false,
    [&](const json::object& obj, const std::string& path) -> domain::error {
      catalog_denial denial;
      if (auto e = read_denial(obj, path, denial))
        return e;
      if (!table_names.insert(denial.name).second)
        return field_error(join_path(path, "name"),
                           "table '" + denial.name
                             + "' is both allowed and denied, or denied "
                               "twice");
      out.denied_tables_.push_back(std::move(denial));
      return {};
    });
  if (err)
    return err;

  std::set<std::string, std::less<>> metric_names;
  err = for_each_object(
    *root, "", "metrics", false,
    [&](const json::object& obj, const std::string& path) -> domain::error {
      if (auto e = check_keys(obj, path,
                              {"name", "description", "synonyms", "sql"}))
        return e;
      catalog_metric metric;
      if (auto e = read_name(obj, path, metric.name))
        return e;
      if (!metric_names.insert(metric.name).second)
        return field_error(join_path(path, "name"),
                           "duplicate metric '" + metric.name + "'");
      if (auto e = read_string(obj, path, "description", true,
                               metric.description))
        return e;
      if (auto e = read_strings(obj, path, "synonyms", metric.synonyms))
        return e;
      if (auto e = read_string(obj, path, "sql", true, metric.sql))
        return e;
      out.metrics_.push_back(std::move(metric));
      return {};
    });
  if (err)
    return err;

  if (auto* g = root->if_contains("guidance"); g != nullptr) {
    if (auto e = read_strings(*root, "", "guidance", out.guidance_))
      return e;
  }
  return out;
}

domain::outcome<catalog> catalog::load(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return domain::make_error(ec::config_invalid,
                              "catalog: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  auto result = parse(text.str());
  if (!result.ok()) {
    auto e = result.err();
    e.message = path + ": " + e.message;
    return e;
  }
  return result;
}

std::string catalog::default_path() {
  return std::string{CANDOR_SOURCE_DIR} + "/conf/catalog.json";
}

domain::outcome<catalog> catalog::load_default() {
  return load(default_path());
}

// -- lookups ------------------------------------------------------------------

const catalog_table* catalog::lookup(std::string_view table) const {
  auto i = table_index_.find(lower(table));
  return i == table_index_.end() ? nullptr : &tables_[i->second];
}

const catalog_table* catalog::find_table(std::string_view table) const {
  return lookup(table);
}

const catalog_column* catalog::find_column(std::string_view table,
                                           std::string_view column) const {
  auto* t = lookup(table);
  if (t == nullptr)
    return nullptr;
  auto key = lower(column);
  for (auto& c : t->columns)
    if (c.name == key)
      return &c;
  return nullptr;
}

bool catalog::table_allowed(std::string_view table) const {
  return lookup(table) != nullptr;
}

bool catalog::column_allowed(std::string_view table,
                             std::string_view column) const {
  return find_column(table, column) != nullptr;
}

bool catalog::table_denied(std::string_view table) const {
  auto key = lower(table);
  return std::any_of(denied_tables_.begin(), denied_tables_.end(),
                     [&](const catalog_denial& d) { return d.name == key; });
}

bool catalog::column_denied(std::string_view table,
                            std::string_view column) const {
  if (table_denied(table))
    return true;
  auto* t = lookup(table);
  if (t == nullptr)
    return false;
  auto key = lower(column);
  return std::any_of(t->denied_columns.begin(), t->denied_columns.end(),
                     [&](const catalog_denial& d) { return d.name == key; });
}

std::map<std::string, std::set<std::string>> catalog::allowed_columns() const {
  std::map<std::string, std::set<std::string>> out;
  for (auto& t : tables_) {
    auto& cols = out[t.name];
    for (auto& c : t.columns)
      cols.insert(c.name);
  }
  return out;
}

const std::vector<std::string>*
catalog::value_domain(std::string_view table, std::string_view column) const {
  auto* c = find_column(table, column);
  return c != nullptr && !c->values.empty() ? &c->values : nullptr;
}

// -- the database -------------------------------------------------------------

domain::error catalog::check_against(database& db) const {
  std::vector<domain::issue> issues;
  auto problem = [&](std::string path, std::string message) {
    issues.push_back({std::move(path), std::move(message)});
  };
  auto objects = schema_objects(db);
  if (!objects)
    return objects.err();
  std::map<std::string, db_object, std::less<>> present;
  for (auto& o : *objects)
    present.emplace(lower(o.name), o);

  // What the catalog names must exist.
  for (auto& t : tables_) {
    auto it = present.find(t.name);
    if (it == present.end()) {
      problem(t.name, "allowed table is missing from the database");
      continue;
    }
    auto cols = table_columns(db, it->second.name);
    if (!cols)
      return cols.err();
    std::set<std::string, std::less<>> have;
    for (auto& c : *cols)
      have.insert(lower(c.name));
    for (auto& c : t.columns)
      if (!have.contains(c.name))
        problem(t.name + "." + c.name,
                "catalog column is missing from the database");
    for (auto& d : t.denied_columns)
      if (!have.contains(d.name))
        problem(t.name + "." + d.name,
                "denied column is missing from the database");
    // And every column of the table must be allowed or denied.
    for (auto& c : *cols) {
      auto key = lower(c.name);
      if (!column_allowed(t.name, key) && !column_denied(t.name, key))
        problem(t.name + "." + key,
                "column in the database is neither allowed nor denied by "
                "the catalog");
    }
  }
  for (auto& d : denied_tables_)
    if (!present.contains(d.name))
      problem(d.name, "denied table is missing from the database");

  // Every table or view must be known.
  for (auto& [key, o] : present)
    if (!table_allowed(key) && !table_denied(key))
      problem(key, o.type + " in the database is neither allowed nor denied "
                   "by the catalog");

  // Stored values must lie inside the declared domains.
  for (auto& t : tables_) {
    auto it = present.find(t.name);
    if (it == present.end())
      continue;
    for (auto& c : t.columns) {
      if (c.values.empty())
        continue;
      auto path = t.name + "." + c.name;
      if (std::none_of(issues.begin(), issues.end(),
                       [&](auto& i) { return i.path == path; })) {
        auto column = quote_identifier(c.name);
        auto stmt = db.prepare("SELECT DISTINCT CAST(" + column
                               + " AS TEXT) FROM "
                               + quote_identifier(it->second.name) + " WHERE "
                               + column + " IS NOT NULL LIMIT 1001");
        if (!stmt)
          return stmt.err();
        for (;;) {
          auto res = stmt->step();
          if (!res)
            return res.err();
          if (*res == step_result::done)
            break;
          auto value = stmt->column_text(0);
          if (std::find(c.values.begin(), c.values.end(), value)
              == c.values.end()) {
            problem(path, "value " + quote_literal(value)
                            + " is outside the declared domain");
            break;
          }
        }
      }
    }
  }
  if (issues.empty())
    return {};
  auto message = "catalog and sales database disagree: " + issues[0].path
                 + ": " + issues[0].message;
  if (issues.size() > 1)
    message += " (and " + std::to_string(issues.size() - 1) + " more)";
  domain::error err{ec::config_invalid, std::move(message), std::move(issues),
                    std::nullopt};
  return err;
}

domain::outcome<std::string> catalog::schema_prompt(database& db) const {
  auto objects = schema_objects(db);
  if (!objects)
    return objects.err();
  std::map<std::string, std::string, std::less<>> present;
  for (auto& o : *objects)
    present.emplace(lower(o.name), o.name);

  std::string out;
  out += "-- ";
  out += description_.empty() ? "Sales database (SQLite)." : description_;
  out += "\n-- Only the tables and columns below exist for your queries.\n";
  for (auto& t : tables_) {
    auto it = present.find(t.name);
    if (it == present.end())
      return domain::make_error(ec::config_invalid,
                                "catalog table '" + t.name
                                  + "' is missing from the sales database");
    auto cols = table_columns(db, it->second);
    if (!cols)
      return cols.err();
    auto refs = table_references(db, it->second);
    if (!refs)
      return refs.err();
    std::vector<std::string> keys;
    for (auto& c : *cols)
      if (c.pk > 0 && column_allowed(t.name, c.name))
        keys.push_back(lower(c.name));
    out += "\n-- ";
    out += t.name;
    out += ": ";
    out += annotation(t.description, t.synonyms, {});
    out += "\nCREATE TABLE ";
    out += t.name;
    out += " (\n";
    std::vector<std::pair<std::string, std::string>> lines;
    for (auto& c : *cols) {
      auto* info = find_column(t.name, c.name);
      if (info == nullptr)
        continue; // denied (check_against refuses unknown columns)
      std::string def = "  " + info->name;
      if (!c.type.empty())
        def += " " + c.type;
      if (c.pk > 0 && keys.size() == 1)
        def += " PRIMARY KEY";
      else if (c.not_null)
        def += " NOT NULL";
      for (auto& r : *refs) {
        if (lower(r.from) != info->name || !table_allowed(r.table))
          continue;
        if (!r.to.empty() && !column_allowed(r.table, r.to))
          continue;
        def += " REFERENCES " + lower(r.table);
        if (!r.to.empty())
          def += " (" + lower(r.to) + ")";
      }
      lines.emplace_back(
        std::move(def),
        annotation(info->description, info->synonyms, info->values));
    }
    if (keys.size() > 1) {
      std::string def = "  PRIMARY KEY (";
      append_list(def, keys, false);
      def += ")";
      lines.emplace_back(std::move(def), "");
    }
    for (size_t i = 0; i < lines.size(); ++i) {
      out += lines[i].first;
      if (i + 1 < lines.size())
        out += ",";
      if (!lines[i].second.empty()) {
        out += " -- ";
        out += lines[i].second;
      }
      out += "\n";
    }
    out += ");\n";
  }
  if (!metrics_.empty()) {
    out += "\n-- Metrics: use these definitions when a question asks for "
           "them.\n";
    for (auto& m : metrics_) {
      out += "-- ";
      out += m.name;
      out += ": ";
      out += annotation(m.description, m.synonyms, {});
      out += "\n";
      out += m.sql;
      out += ";\n";
    }
  }
  if (!guidance_.empty()) {
    out += "\n-- Notes:\n";
    for (auto& g : guidance_) {
      out += "-- ";
      out += g;
      out += "\n";
    }
  }
  return out;
}

} // namespace candor::data
