// Parsing and loading the golden set (eval/golden.v1.json).

#include "eval/golden.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "domain/build_info.hpp"
#include "domain/json_text.hpp"

namespace candor::eval {

namespace json = boost::json;

namespace {

domain::error bad(const std::string& where, const std::string& what) {
  return domain::make_error(domain::ec::config_invalid,
                            "golden set: " + where + ": " + what);
}

/// Finds the enum value whose name is `text` among `values`.
template <class Enum>
bool parse_name(std::string_view text, std::initializer_list<Enum> values,
                Enum& out) {
  for (auto v : values)
    if (domain::to_string(v) == text) {
      out = v;
      return true;
    }
  return false;
}

const json::string* string_field(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? &v->as_string() : nullptr;
}

domain::error parse_item(const json::object& o, golden_item& it) {
  auto where = it.id.empty() ? std::string{"item"} : "item " + it.id;
  for (auto key : {"id", "split", "category", "question", "expectedRoute",
                   "expectedStatus"})
    if (!string_field(o, key))
      return bad(where, std::string{"missing string '"} + key + "'");
  it.id = std::string{*string_field(o, "id")};
  where = "item " + it.id;
  it.split = std::string{*string_field(o, "split")};
  if (it.split != "test" && it.split != "calibration")
    return bad(where, "split must be test or calibration");
  it.category = std::string{*string_field(o, "category")};
  auto& cats = golden_categories();
  if (std::find(cats.begin(), cats.end(), it.category) == cats.end())
    return bad(where, "unknown category '" + it.category + "'");
  it.question = std::string{*string_field(o, "question")};
  if (it.question.size() < 3 || it.question.size() > 500)
    return bad(where, "the question must have 3 to 500 bytes");
  auto route = std::string_view{*string_field(o, "expectedRoute")};
  using domain::route_kind;
  if (!parse_name(route,
                  {route_kind::none, route_kind::docs, route_kind::data,
                   route_kind::out_of_scope},
                  it.expected_route))
    return bad(where, "unknown expectedRoute '" + std::string{route} + "'");
  auto status = std::string_view{*string_field(o, "expectedStatus")};
  using domain::status_kind;
  if (!parse_name(status,
                  {status_kind::answered, status_kind::refused,
                   status_kind::no_results, status_kind::blocked,
                   status_kind::error},
                  it.expected_status))
    return bad(where, "unknown expectedStatus '" + std::string{status} + "'");
  auto* layer = o.if_contains("blockingLayer");
  if (!layer)
    return bad(where, "missing 'blockingLayer' (null when nothing blocks)");
  using domain::layer_kind;
  if (layer->is_string()) {
    auto name = std::string_view{layer->as_string()};
    if (!parse_name(name,
                    {layer_kind::input_rules, layer_kind::input_model,
                     layer_kind::sql_policy, layer_kind::sql_authorizer,
                     layer_kind::output_guard},
                    it.blocking_layer))
      return bad(where, "unknown blockingLayer '" + std::string{name} + "'");
  } else if (!layer->is_null()) {
    return bad(where, "blockingLayer must be a string or null");
  }
  if ((it.blocking_layer != layer_kind::none)
      != (it.expected_status == status_kind::blocked))
    return bad(where, "blockingLayer must be set exactly when the expected "
                      "status is blocked");
  auto* chunks = o.if_contains("chunkIds");
  if (!chunks || !chunks->is_array())
    return bad(where, "missing array 'chunkIds'");
  for (auto& c : chunks->as_array()) {
    if (!c.is_string() || c.as_string().empty())
      return bad(where, "chunkIds must hold non-empty strings");
    it.chunk_ids.emplace_back(c.as_string());
  }
  auto* sql = o.if_contains("referenceSql");
  if (!sql || !(sql->is_null() || sql->is_string()))
    return bad(where, "referenceSql must be a string or null");
  if (sql->is_string())
    it.reference_sql = std::string{sql->as_string()};
  auto* order = o.if_contains("orderMatters");
  if (!order || !order->is_bool())
    return bad(where, "missing boolean 'orderMatters'");
  it.order_matters = order->as_bool();
  return {};
}

} // namespace

const std::vector<std::string>& golden_categories() {
  static const std::vector<std::string> names{"docs_answerable",
                                              "docs_unanswerable",
                                              "data_answered",
                                              "data_corrected",
                                              "data_corrections_exhausted",
                                              "data_no_results",
                                              "sql_attack",
                                              "out_of_scope",
                                              "injection_direct",
                                              "injection_indirect",
                                              "benign_lookalike",
                                              "hybrid"};
  return names;
}

domain::outcome<golden_set> parse_golden_set(std::string_view text) {
  boost::system::error_code jec;
  auto doc = json::parse(text, jec);
  if (jec)
    return bad("file", "not valid JSON (" + jec.message() + ")");
  if (auto dup = domain::duplicate_member(text))
    return bad("file", "'" + *dup + "' appears more than once");
  if (!doc.is_object())
    return bad("file", "expected an object");
  auto& root = doc.as_object();
  golden_set out;
  if (auto* n = string_field(root, "name"))
    out.name = std::string{*n};
  auto* items = root.if_contains("items");
  if (!items || !items->is_array() || items->as_array().empty())
    return bad("file", "expected a non-empty 'items' array");
  std::set<std::string> ids;
  for (auto& v : items->as_array()) {
    if (!v.is_object())
      return bad("item", "expected an object");
    golden_item it;
    if (auto err = parse_item(v.as_object(), it))
      return err;
    if (!ids.insert(it.id).second)
      return bad("item " + it.id, "duplicate id");
    out.items.push_back(std::move(it));
  }
  return out;
}

domain::outcome<golden_set> load_golden_set(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return domain::make_error(domain::ec::config_invalid,
                              "cannot read the golden set '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_golden_set(ss.str());
}

std::string default_golden_path() {
  return std::string{domain::source_dir()} + "/eval/golden.v1.json";
}

bool valid_split(std::string_view split) noexcept {
  return split == "test" || split == "calibration" || split == "all";
}

std::vector<const golden_item*> select_split(const golden_set& set,
                                             std::string_view split) {
  std::vector<const golden_item*> out;
  for (auto& it : set.items)
    if (split == "all" || it.split == split)
      out.push_back(&it);
  return out;
}

} // namespace candor::eval
