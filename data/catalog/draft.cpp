// `candor catalog draft`: reads a database's schema and a sample of its
// contents (draft_read), then writes the catalog document (see
// draft.hpp; the semantic layer in draft_semantic.cpp).

#include "data/catalog/draft.hpp"

#include <algorithm>
#include <set>

#include <boost/json.hpp>

#include "data/catalog/draft_detail.hpp"
#include "data/sales/catalog_detail.hpp"
#include "data/catalog/personal_data.hpp"
#include "data/sales/schema.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

namespace json = boost::json;
using namespace draft_detail;

namespace {

using domain::ec;

using catalog_detail::is_identifier;
using catalog_detail::lower;

/// SQLite's type affinity of a declared type (section 3.1 of its manual).
enum class affinity { integer, text, blob, real, numeric };

affinity affinity_of(std::string_view declared) {
  auto t = lower(declared);
  auto has
    = [&](const char* part) { return t.find(part) != std::string::npos; };
  if (has("int"))
    return affinity::integer;
  if (has("char") || has("clob") || has("text"))
    return affinity::text;
  if (t.empty() || has("blob"))
    return affinity::blob;
  if (has("real") || has("floa") || has("doub"))
    return affinity::real;
  return affinity::numeric;
}

bool is_date_text(std::string_view s) {
  if (s.size() < 10 || s[4] != '-' || s[7] != '-')
    return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9')
      return false;
  return s.size() == 10 || s[10] == ' ' || s[10] == 'T';
}

domain::error read_column(database& db, const std::string& table,
                          draft_column& c, const draft_options& opts) {
  auto col = quote_identifier(c.name);
  auto from = " FROM " + quote_identifier(table);
  auto counts = db.prepare("SELECT COUNT(" + col + "), COUNT(DISTINCT " + col
                           + ")" + from);
  if (!counts)
    return counts.err();
  if (auto err = for_each_row(*counts, [&](statement& row) {
        c.non_null = row.column_int64(0);
        c.distinct = row.column_int64(1);
      }))
    return err;
  auto sample = db.prepare("SELECT " + col + ", typeof(" + col + ")" + from
                           + " WHERE " + col + " IS NOT NULL LIMIT "
                           + std::to_string(opts.sample_rows));
  if (!sample)
    return sample.err();
  size_t dates = 0;
  size_t numbers = 0;
  bool flags = true; // every value 0 or 1
  if (auto err = for_each_row(*sample, [&](statement& row) {
        auto type = row.column_text(1);
        auto value = row.column_text(0);
        if (type == "text") {
          ++c.sample.text_values;
          if (is_date_text(value))
            ++dates;
        } else if (type == "integer" || type == "real") {
          ++numbers;
          if (value != "0" && value != "1")
            flags = false;
        }
        c.sample.values.push_back(std::move(value));
      }))
    return err;
  auto n = c.sample.values.size();
  auto aff = affinity_of(c.type);
  c.is_date = n > 0 && dates == n;
  if (!c.is_date) {
    auto t = lower(c.type);
    c.is_date = t.find("date") != std::string::npos
                || t.find("time") != std::string::npos;
    c.is_date = c.is_date && dates == c.sample.text_values && dates > 0;
  }
  c.is_numeric = n > 0 && numbers == n
                 && (aff == affinity::integer || aff == affinity::real
                     || aff == affinity::numeric);
  c.is_flag = c.is_numeric && flags && c.distinct <= 2;
  c.is_text = n > 0 && c.sample.text_values == n && !c.is_date;
  return {};
}

domain::error read_values(database& db, const std::string& table,
                          draft_column& c) {
  auto col = quote_identifier(c.name);
  auto stmt
    = db.prepare("SELECT DISTINCT " + col + " FROM " + quote_identifier(table)
                 + " WHERE " + col + " IS NOT NULL ORDER BY 1");
  if (!stmt)
    return stmt.err();
  return for_each_row(
    *stmt, [&](statement& row) { c.values.push_back(row.column_text(0)); });
}

/// Everything the draft needs from the database.
domain::outcome<std::vector<draft_table>>
read_tables(database& db, const draft_options& o,
            std::vector<std::string>& notes) {
  auto objects = schema_objects(db);
  if (!objects)
    return objects.err();
  std::vector<draft_table> out;
  size_t done = 0;
  for (auto& obj : *objects) {
    if (o.progress)
      o.progress(obj.name, done++, objects->size());
    draft_table t;
    t.name = obj.name;
    t.view = obj.type == "view";
    if (!is_identifier(lower(t.name))) {
      notes.push_back("left out " + obj.type + " '" + t.name
                      + "': catalog names are SQL identifiers; rename it or "
                        "make a view with such a name");
      continue;
    }
    auto cols = table_columns(db, t.name);
    if (!cols)
      return cols.err();
    auto refs = table_references(db, t.name);
    if (!refs)
      return refs.err();
    auto rows
      = db.query_int64("SELECT COUNT(*) FROM " + quote_identifier(t.name));
    if (!rows)
      return rows.err();
    t.rows = *rows;
    for (auto& col : *cols) {
      draft_column c;
      c.name = col.name;
      c.type = col.type;
      c.pk = col.pk > 0;
      t.columns.push_back(std::move(c));
    }
    for (auto& r : *refs)
      t.refs.push_back({r.from, r.table, r.to});
    for (auto& c : t.columns) {
      if (!is_identifier(lower(c.name))) {
        c.skip = "not a SQL identifier";
        continue;
      }
      if (auto err = read_column(db, t.name, c, o))
        return err;
      c.sample.table = t.name;
      c.sample.column = c.name;
      c.personal = personal_data_in(c.sample);
      auto words = name_words(c.name);
      bool referencing
        = std::any_of(t.refs.begin(), t.refs.end(), [&](const draft_ref& r) {
            return lower(r.from) == lower(c.name);
          });
      c.is_key
        = c.pk || referencing || (!words.empty() && words.back() == "id");
      if (!c.personal && c.is_text && c.distinct > 0
          && static_cast<size_t>(c.distinct) <= o.max_values) {
        if (auto err = read_values(db, t.name, c))
          return err;
        bool usable = std::all_of(
          c.values.begin(), c.values.end(),
          [](const std::string& v) { return !v.empty() && v.size() <= 40; });
        if (!usable)
          c.values.clear();
      }
    }
    out.push_back(std::move(t));
  }
  if (o.progress)
    o.progress("", done, objects->size());
  return out;
}

std::string thousands(int64_t n) {
  auto s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string column_description(const draft_table& t, const draft_column& c) {
  std::string d = c.type.empty() ? "No declared type" : c.type;
  if (c.pk)
    d += ", primary key";
  for (auto& r : t.refs)
    if (lower(r.from) == lower(c.name))
      d += ", references " + lower(r.table)
           + (r.to.empty() ? std::string{} : "." + lower(r.to));
  d += ". " + thousands(c.distinct) + " distinct value"
       + (c.distinct == 1 ? "" : "s");
  if (c.is_date)
    d += ", dates as text ('YYYY-MM-DD...')";
  if (c.is_flag)
    d += ", 0 or 1";
  return d + ". Drafted: describe what it means.";
}

json::object metric(const std::string& name, const std::string& description,
                    const std::string& sql) {
  return json::object{{"name", name},
                      {"description", description},
                      {"sql", sql},
                      {"draft", true}};
}

} // namespace

domain::outcome<catalog_draft> draft_catalog(database& db,
                                             const draft_options& opts) {
  catalog_draft out;
  auto tables = read_tables(db, opts, out.notes);
  if (!tables)
    return tables.err();
  json::array allowed;
  json::array denied;
  json::array metrics;
  std::set<std::string> metric_names;
  for (auto& t : *tables) {
    auto name = lower(t.name);
    // Denied whole when every non-key column is personal.
    size_t personal = 0;
    size_t plain = 0;
    std::set<std::string> kinds;
    for (auto& c : t.columns) {
      if (c.is_key && !c.personal)
        continue;
      ++plain;
      if (c.personal) {
        ++personal;
        kinds.insert(c.personal->kind);
      }
    }
    if (plain > 0 && personal == plain) {
      std::string why = "personal data:";
      for (auto& k : kinds)
        why += (why.back() == ':' ? " " : ", ") + k;
      denied.push_back(json::object{{"name", name}, {"reason", why}});
      out.notes.push_back("restricted table " + name + ": " + why);
      t.denied = true;
      continue;
    }
    json::array columns;
    json::array denied_columns;
    for (auto& c : t.columns) {
      auto cname = lower(c.name);
      if (!c.skip.empty()) {
        out.notes.push_back("left out column " + name + "." + c.name + ": "
                            + c.skip);
        continue;
      }
      if (c.personal) {
        auto why = "personal data: " + c.personal->kind + " ("
                   + c.personal->evidence + ")";
        denied_columns.push_back(
          json::object{{"name", cname}, {"reason", why}});
        out.notes.push_back("restricted " + name + "." + cname + ": " + why);
        continue;
      }
      json::object col{{"name", cname},
                       {"description", column_description(t, c)}};
      if (!c.values.empty()) {
        json::array vs;
        for (auto& v : c.values)
          vs.emplace_back(v);
        col["values"] = std::move(vs);
      }
      columns.push_back(std::move(col));
    }
    json::object table{{"name", name},
                       {"description", std::string{t.view ? "View" : "Table"}
                                         + " of " + thousands(t.rows) + " row"
                                         + (t.rows == 1 ? "" : "s")
                                         + ". Drafted: describe what one row "
                                           "is."}};
    if (columns.empty()) {
      // A catalog table needs an allowed column: deny it, saying why.
      auto why = "no column the draft could describe";
      denied.push_back(json::object{{"name", name}, {"reason", why}});
      out.notes.push_back("denied table " + name + ": " + why);
      t.denied = true;
      continue;
    }
    table["columns"] = std::move(columns);
    if (!denied_columns.empty())
      table["denied_columns"] = std::move(denied_columns);
    allowed.push_back(std::move(table));
    // Candidate metrics: a count of the table, a sum of each measure.
    auto count_name = name + "_count";
    if (metric_names.insert(count_name).second)
      metrics.push_back(
        metric(count_name, "Number of rows in " + name + ".",
               "SELECT COUNT(*) AS " + count_name + " FROM " + name));
    for (auto& c : t.columns) {
      if (!is_measure(c))
        continue;
      auto cname = lower(c.name);
      auto mname = "total_" + cname;
      if (!metric_names.insert(mname).second) {
        mname = name + "_total_" + cname;
        if (!metric_names.insert(mname).second)
          continue;
      }
      metrics.push_back(
        metric(mname, "Sum of " + name + "." + cname + ".",
               "SELECT SUM(" + cname + ") AS " + mname + " FROM " + name));
    }
  }
  if (allowed.empty())
    return domain::make_error(ec::config_invalid,
                              "the database has no table a catalog can "
                              "describe");
  json::object doc;
  doc["version"] = 1;
  doc["description"]
    = "Drafted by candor catalog draft"
      + (opts.source_name.empty() ? std::string{} : " from " + opts.source_name)
      + ". Review every description, the restricted columns and the draft "
        "metrics before serving it.";
  doc["tables"] = std::move(allowed);
  if (!denied.empty())
    doc["denied_tables"] = std::move(denied);
  if (!metrics.empty()) {
    out.notes.push_back(std::to_string(metrics.size())
                        + " draft metrics (\"draft\": true): check each "
                          "one's meaning, then remove the mark");
    doc["metrics"] = std::move(metrics);
  }
  if (auto sem = draft_semantic(db, *tables, out.notes); !sem.empty())
    doc["semantic"] = std::move(sem);
  out.json = catalog_json_text(doc);
  return out;
}

} // namespace candor::data
