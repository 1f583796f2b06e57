// The catalog against the sales database: introspection of its tables,
// columns and references, `catalog::check_against` (does the database match
// the catalog) and `catalog::schema_prompt` (the model's schema text).

#include "data/sales/catalog.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "data/sales/catalog_detail.hpp"
#include "data/sales/schema.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace {

using namespace catalog_detail;
using domain::ec;

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
      problem(key, o.type
                     + " in the database is neither allowed nor denied "
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
        auto stmt
          = db.prepare("SELECT DISTINCT CAST(" + column + " AS TEXT) FROM "
                       + quote_identifier(it->second.name) + " WHERE " + column
                       + " IS NOT NULL LIMIT 1001");
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
  auto message = "catalog and sales database disagree: " + issues[0].path + ": "
                 + issues[0].message;
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
