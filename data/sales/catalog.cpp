// The sales catalog: parsing conf/catalog.json (tables, columns, value
// domains, sensitive columns) into the allowlist the SQL guard uses.

#include "data/sales/catalog.hpp"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <utility>

#include <boost/json.hpp>

#include "data/sales/catalog_detail.hpp"
#include "domain/build_info.hpp"

namespace candor::data {

namespace {

namespace json = boost::json;
using domain::ec;
using namespace catalog_detail;

// -- helpers ------------------------------------------------------------------

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
    return field_error(
      "(document)", "invalid JSON at line " + std::to_string(line) + " (offset "
                      + std::to_string(used) + "): " + jec.message());
  }
  auto doc = parser.release();
  auto* root = doc.if_object();
  if (root == nullptr)
    return field_error("(document)", "expected a JSON object");
  if (auto err = check_keys(*root, "",
                            {"version", "description", "tables",
                             "denied_tables", "metrics", "guidance",
                             "semantic"}))
    return err;
  auto* version = root->if_contains("version");
  if (version == nullptr)
    return field_error("version", "missing");
  if (!version->is_int64() || version->as_int64() != 1)
    return field_error("version", "expected 1");

  catalog out;
  if (auto err = read_string(*root, "", "description", false, out.description_))
    return err;
  std::set<std::string, std::less<>> table_names;

  auto err = for_each_object(
    *root, "", "tables", true,
    [&](const json::object& obj, const std::string& path) -> domain::error {
      if (auto e = check_keys(
            obj, path,
            {"name", "description", "synonyms", "columns", "denied_columns"}))
        return e;
      catalog_table table;
      if (auto e = read_name(obj, path, table.name))
        return e;
      if (!table_names.insert(table.name).second)
        return field_error(join_path(path, "name"),
                           "duplicate table '" + table.name + "'");
      if (auto e
          = read_string(obj, path, "description", true, table.description))
        return e;
      if (auto e = read_strings(obj, path, "synonyms", table.synonyms))
        return e;
      std::set<std::string, std::less<>> column_names;
      auto add_column
        = [&](const std::string& name, const std::string& at) -> domain::error {
        if (!column_names.insert(name).second)
          return field_error(join_path(at, "name"), "duplicate column '" + name
                                                      + "' in table '"
                                                      + table.name + "'");
        return {};
      };
      if (auto e = for_each_object(
            obj, path, "columns", true,
            [&](const json::object& cobj,
                const std::string& cpath) -> domain::error {
              if (auto e2 = check_keys(
                    cobj, cpath, {"name", "description", "synonyms", "values"}))
                return e2;
              catalog_column column;
              if (auto e2 = read_name(cobj, cpath, column.name))
                return e2;
              if (auto e2 = add_column(column.name, cpath))
                return e2;
              if (auto e2 = read_string(cobj, cpath, "description", true,
                                        column.description))
                return e2;
              if (auto e2
                  = read_strings(cobj, cpath, "synonyms", column.synonyms))
                return e2;
              if (auto e2 = read_strings(cobj, cpath, "values", column.values))
                return e2;
              table.columns.push_back(std::move(column));
              return {};
            }))
        return e;
      if (auto e
          = for_each_object(obj, path, "denied_columns", false,
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
      if (auto e
          = check_keys(obj, path,
                       {"name", "description", "synonyms", "sql", "draft"}))
        return e;
      catalog_metric metric;
      if (auto e = read_name(obj, path, metric.name))
        return e;
      if (!metric_names.insert(metric.name).second)
        return field_error(join_path(path, "name"),
                           "duplicate metric '" + metric.name + "'");
      if (auto e
          = read_string(obj, path, "description", true, metric.description))
        return e;
      if (auto e = read_strings(obj, path, "synonyms", metric.synonyms))
        return e;
      if (auto e = read_string(obj, path, "sql", true, metric.sql))
        return e;
      if (auto* d = obj.if_contains("draft"); d != nullptr) {
        if (!d->is_bool())
          return field_error(join_path(path, "draft"), "expected true or false");
        metric.draft = d->as_bool();
      }
      out.metrics_.push_back(std::move(metric));
      return {};
    });
  if (err)
    return err;

  if (auto* g = root->if_contains("guidance"); g != nullptr) {
    if (auto e = read_strings(*root, "", "guidance", out.guidance_))
      return e;
  }
  // The planner's semantic layer is read and checked by the planner
  // (data/local/semantic.hpp); the catalog keeps it as text.
  if (auto* sem = root->if_contains("semantic"); sem != nullptr) {
    if (!sem->is_object())
      return field_error("semantic", "expected an object");
    out.semantic_ = json::serialize(*sem);
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

} // namespace candor::data
