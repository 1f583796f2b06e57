// What a caller may look up without running the graph: the catalog as a
// caller sees it, the document list, retrieval alone (see data/lookup.hpp).

#include "data/lookup.hpp"

#include <algorithm>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "domain/json_text.hpp"

namespace candor::data {

namespace json = boost::json;

namespace {

json::array strings(const std::vector<std::string>& xs) {
  json::array out;
  for (const auto& x : xs)
    out.emplace_back(x);
  return out;
}

} // namespace

std::string catalog_json(const catalog& cat, std::string_view dialect,
                         const std::vector<table_rows>& rows) {
  json::array tables;
  for (const auto& t : cat.tables()) {
    json::array columns;
    for (const auto& c : t.columns) {
      json::object col{{"name", c.name}, {"description", c.description}};
      if (!c.values.empty())
        col["values"] = strings(c.values);
      columns.push_back(std::move(col));
    }
    json::object table{{"name", t.name},
                       {"description", t.description},
                       {"synonyms", strings(t.synonyms)},
                       {"columns", std::move(columns)}};
    for (const auto& r : rows)
      if (r.table == t.name)
        table["rows"] = r.rows;
    tables.push_back(std::move(table));
  }
  json::array metrics;
  for (const auto& m : cat.metrics())
    metrics.push_back(json::object{
      {"name", m.name}, {"description", m.description}, {"sql", m.sql}});
  return domain::json_text(json::object{{"description", cat.description()},
                                        {"dialect", dialect},
                                        {"tables", std::move(tables)},
                                        {"metrics", std::move(metrics)},
                                        {"guidance", strings(cat.guidance())}});
}

std::string documents_json(const retrieval_snapshot& snap) {
  json::array docs;
  std::string_view last;
  for (const auto& c : snap.chunks()) {
    if (docs.empty() || c.doc_slug != last) {
      docs.push_back(json::object{{"slug", c.doc_slug},
                                  {"title", c.doc_title},
                                  {"chunks", 0},
                                  {"sanitizedChunks", 0}});
      last = c.doc_slug;
    }
    auto& d = docs.back().as_object();
    d["chunks"] = d["chunks"].as_int64() + 1;
    if (c.flagged)
      d["sanitizedChunks"] = d["sanitizedChunks"].as_int64() + 1;
  }
  auto n = static_cast<int64_t>(snap.size());
  return domain::json_text(
    json::object{{"documents", std::move(docs)}, {"chunks", n}});
}

std::vector<domain::passage> search_passages(const retrieval_snapshot& snap,
                                             std::string_view query, size_t k,
                                             search_mode mode) {
  k = std::clamp<size_t>(k, 1, 20);
  std::vector<domain::passage> out;
  for (const auto& h : snap.search(query, k, mode)) {
    if (h.index >= snap.chunks().size())
      continue;
    const auto& c = snap.chunks()[h.index];
    domain::passage p;
    p.chunk_id = c.id;
    p.doc_title = c.doc_title;
    p.heading = c.heading;
    p.score = h.score;
    p.sanitized = c.flagged;
    p.text = c.text;
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace candor::data
