// The JSON of the public HTTP API: parsing POST /ask bodies, the /ask
// response's schema check (validate_response) and the error body.

#include "domain/api/api_json.hpp"

#include "domain/conversation.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace json = boost::json;

#include "domain/json_text.hpp"
#include "domain/text.hpp"

namespace candor::domain {

namespace {

// -- parsing helpers ----------------------------------------------------------

// -- schema checking ----------------------------------------------------------

/// Walks a response and collects issues with dotted paths.
class checker {
public:
  std::vector<issue> issues;

  void add(std::string path, std::string message) {
    issues.push_back(issue{std::move(path), std::move(message)});
  }

  static std::string join(const std::string& base, std::string_view key) {
    if (base.empty())
      return std::string{key};
    std::string out = base;
    out += '.';
    out += key;
    return out;
  }

  static std::string index(const std::string& base, size_t i) {
    return base + "[" + std::to_string(i) + "]";
  }

  /// Returns the member or nullptr, adding "is required" when absent.
  const json::value* field(const json::object& o, const std::string& base,
                           std::string_view key) {
    auto it = o.find(key);
    if (it == o.end()) {
      add(join(base, key), "is required");
      return nullptr;
    }
    return &it->value();
  }

  void no_extra(const json::object& o, const std::string& base,
                std::initializer_list<std::string_view> keys) {
    for (const auto& kv : o) {
      auto k = std::string_view{kv.key()};
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        add(join(base, k), "unknown field");
    }
  }

  bool type_error(const std::string& path, std::string_view want,
                  const json::value& v) {
    add(path, std::string{"must be "} + std::string{want} + ", not "
                + std::string{json_kind_name(v)});
    return false;
  }

  bool str(const json::object& o, const std::string& base, std::string_view key,
           bool nullable = false) {
    auto* v = field(o, base, key);
    if (v == nullptr)
      return false;
    if (v->is_string() || (nullable && v->is_null()))
      return true;
    return type_error(join(base, key),
                      nullable ? "a string or null" : "a string", *v);
  }

  bool boolean(const json::object& o, const std::string& base,
               std::string_view key) {
    auto* v = field(o, base, key);
    if (v == nullptr)
      return false;
    if (v->is_bool())
      return true;
    return type_error(join(base, key), "a boolean", *v);
  }

  bool integer(const json::object& o, const std::string& base,
               std::string_view key) {
    auto* v = field(o, base, key);
    if (v == nullptr)
      return false;
    if (v->is_int64() || v->is_uint64())
      return true;
    return type_error(join(base, key), "an integer", *v);
  }

  bool number(const json::object& o, const std::string& base,
              std::string_view key) {
    auto* v = field(o, base, key);
    if (v == nullptr)
      return false;
    if (v->is_number())
      return true;
    return type_error(join(base, key), "a number", *v);
  }

  /// A string (or null when nullable) whose value is one of `allowed`.
  void one_of(const json::object& o, const std::string& base,
              std::string_view key,
              std::initializer_list<std::string_view> allowed, bool nullable) {
    if (!str(o, base, key, nullable))
      return;
    const auto& v = o.at(key);
    if (v.is_null())
      return;
    auto s = std::string_view{v.get_string()};
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
      add(join(base, key), "unexpected value \"" + std::string{s} + "\"");
  }

  const json::object* object(const json::object& o, const std::string& base,
                             std::string_view key, bool nullable = false) {
    auto* v = field(o, base, key);
    if (v == nullptr)
      return nullptr;
    if (v->is_object())
      return &v->get_object();
    if (!(nullable && v->is_null()))
      type_error(join(base, key), nullable ? "an object or null" : "an object",
                 *v);
    return nullptr;
  }

  const json::array* array(const json::object& o, const std::string& base,
                           std::string_view key, size_t max_size) {
    auto* v = field(o, base, key);
    if (v == nullptr)
      return nullptr;
    if (!v->is_array()) {
      type_error(join(base, key), "an array", *v);
      return nullptr;
    }
    const auto& a = v->get_array();
    if (a.size() > max_size)
      add(join(base, key), "has " + std::to_string(a.size())
                             + " elements, at most " + std::to_string(max_size)
                             + " allowed");
    return &a;
  }

  void strings(const json::object& o, const std::string& base,
               std::string_view key, size_t max_size = SIZE_MAX) {
    auto* a = array(o, base, key, max_size);
    if (a == nullptr)
      return;
    auto path = join(base, key);
    for (size_t i = 0; i < a->size(); ++i)
      if (!(*a)[i].is_string())
        type_error(index(path, i), "a string", (*a)[i]);
  }
};

const std::initializer_list<std::string_view> layer_names = {
  "input_rules", "input_model", "sql_policy", "sql_authorizer", "output_guard"};

void check_citation(checker& c, const json::value& v, const std::string& p) {
  if (!v.is_object()) {
    c.type_error(p, "an object", v);
    return;
  }
  const auto& o = v.get_object();
  c.str(o, p, "chunkId");
  c.str(o, p, "docTitle");
  c.str(o, p, "heading");
  c.number(o, p, "score");
  c.str(o, p, "snippet");
  c.boolean(o, p, "sanitized");
  c.no_extra(
    o, p, {"chunkId", "docTitle", "heading", "score", "snippet", "sanitized"});
}

void check_sql(checker& c, const json::object& o, const std::string& p) {
  c.str(o, p, "query");
  c.str(o, p, "originalQuery", true);
  c.integer(o, p, "corrections");
  c.boolean(o, p, "limitApplied");
  c.strings(o, p, "columns");
  size_t width = SIZE_MAX;
  if (auto it = o.find("columns"); it != o.end() && it->value().is_array())
    width = it->value().get_array().size();
  if (auto* rows = c.array(o, p, "rows", 50)) {
    auto rp = checker::join(p, "rows");
    for (size_t i = 0; i < rows->size(); ++i) {
      const auto& row = (*rows)[i];
      auto path = checker::index(rp, i);
      if (!row.is_array()) {
        c.type_error(path, "an array", row);
        continue;
      }
      const auto& cells = row.get_array();
      if (width != SIZE_MAX && cells.size() != width)
        c.add(path, "has " + std::to_string(cells.size()) + " cells for "
                      + std::to_string(width) + " columns");
      for (size_t j = 0; j < cells.size(); ++j) {
        const auto& cell = cells[j];
        if (!(cell.is_null() || cell.is_number() || cell.is_string()))
          c.type_error(checker::index(path, j), "null, a number or a string",
                       cell);
      }
    }
  }
  c.integer(o, p, "rowCount");
  c.boolean(o, p, "truncated");
  c.str(o, p, "lastError", true);
  c.str(o, p, "plan", true);
  c.no_extra(o, p,
             {"query", "originalQuery", "corrections", "limitApplied",
              "columns", "rows", "rowCount", "truncated", "lastError",
              "plan"});
}

void check_meta(checker& c, const json::object& o, const std::string& p) {
  c.str(o, p, "provider");
  c.strings(o, p, "models");
  c.str(o, p, "embedder");
  c.str(o, p, "guardrailMode");
  c.integer(o, p, "llmCalls");
  c.boolean(o, p, "fallbackUsed");
  if (auto* t = c.object(o, p, "tokens")) {
    auto tp = checker::join(p, "tokens");
    c.integer(*t, tp, "input");
    c.integer(*t, tp, "output");
    c.integer(*t, tp, "total");
    c.no_extra(*t, tp, {"input", "output", "total"});
  }
  c.number(o, p, "costUsd");
  c.boolean(o, p, "costIsFictional");
  c.integer(o, p, "latencyMs");
  if (auto* trace = c.array(o, p, "trace", SIZE_MAX)) {
    auto tp = checker::join(p, "trace");
    for (size_t i = 0; i < trace->size(); ++i) {
      const auto& e = (*trace)[i];
      auto path = checker::index(tp, i);
      if (!e.is_object()) {
        c.type_error(path, "an object", e);
        continue;
      }
      const auto& eo = e.get_object();
      c.str(eo, path, "node");
      c.str(eo, path, "outcome");
      c.integer(eo, path, "micros");
      c.no_extra(eo, path, {"node", "outcome", "micros"});
    }
  }
  c.no_extra(o, p,
             {"provider", "models", "embedder", "guardrailMode", "llmCalls",
              "fallbackUsed", "tokens", "costUsd", "costIsFictional",
              "latencyMs", "trace"});
}

} // namespace

outcome<ask_request> parse_ask_body(std::string_view body,
                                    const ask_body_limits& lim) {
  boost::system::error_code parse_ec;
  json::parse_options opts; // strict: no comments, valid UTF-8, depth 32
  auto root = json::parse(body, parse_ec, {}, opts);
  if (parse_ec) {
    error e = make_error(ec::invalid_request, "body is not valid JSON");
    e.issues.push_back(issue{"", parse_ec.message()});
    return e;
  }
  error e = make_error(ec::invalid_request, "request body failed validation");
  if (!root.is_object()) {
    e.issues.push_back(issue{"", std::string{"must be a JSON object, not "}
                                   + std::string{json_kind_name(root)}});
    return e;
  }
  // Two members with one name would be read as the last by us and perhaps
  // as the first by whatever sits in front of us (a proxy, a filter).
  if (auto dup = duplicate_member(body)) {
    e.issues.push_back(issue{*dup, "appears more than once"});
    return e;
  }
  const auto& obj = root.get_object();
  ask_request req;
  for (const auto& kv : obj) {
    auto key = std::string_view{kv.key()};
    if (key != "question" && key != "forceRoute" && key != "conversationId")
      e.issues.push_back(issue{std::string{key}, "unknown field"});
  }
  if (auto it = obj.find("question"); it == obj.end()) {
    e.issues.push_back(issue{"question", "is required"});
  } else if (!it->value().is_string()) {
    e.issues.push_back(
      issue{"question", std::string{"must be a string, not "}
                          + std::string{json_kind_name(it->value())}});
  } else {
    auto q = trim_ascii(std::string_view{it->value().get_string()});
    auto n = count_code_points(q);
    if (n < lim.min_question)
      e.issues.push_back(issue{"question", "must be at least "
                                             + std::to_string(lim.min_question)
                                             + " characters after trimming"});
    else if (n > lim.max_question)
      e.issues.push_back(
        issue{"question", "must be at most " + std::to_string(lim.max_question)
                            + " characters, got " + std::to_string(n)});
    else
      req.question = std::string{q};
  }
  if (auto it = obj.find("forceRoute");
      it != obj.end() && !it->value().is_null()) {
    const auto& v = it->value();
    auto r = v.is_string() ? parse_route(std::string_view{v.get_string()})
                           : route_kind::none;
    if (r == route_kind::docs || r == route_kind::data)
      req.force_route = r;
    else
      e.issues.push_back(issue{"forceRoute", "must be \"docs\" or \"data\""});
  }
  if (auto it = obj.find("conversationId");
      it != obj.end() && !it->value().is_null()) {
    const auto& v = it->value();
    if (v.is_string() && valid_conversation_id(v.get_string())) {
      req.conversation_id = std::string{v.get_string()};
      req.continues = true;
    } else {
      e.issues.push_back(issue{"conversationId",
                               "must be an id candor returned (\"c_\" and 32 "
                               "hex digits)"});
    }
  }
  if (!e.issues.empty())
    return e;
  return req;
}

std::vector<issue> validate_response(const json::value& v) {
  checker c;
  if (!v.is_object()) {
    c.type_error("", "an object", v);
    return std::move(c.issues);
  }
  const auto& o = v.get_object();
  const std::string root;
  c.str(o, root, "requestId");
  c.str(o, root, "conversationId", true);
  c.one_of(o, root, "route", {"docs", "data", "out_of_scope"}, true);
  c.str(o, root, "routeReason", true);
  c.str(o, root, "standaloneQuestion", true);
  c.boolean(o, root, "overridden");
  c.one_of(o, root, "status",
           {"answered", "refused", "no_results", "blocked", "error"}, false);
  c.one_of(o, root, "blockedBy", layer_names, true);
  c.str(o, root, "answer");
  if (auto* cites = c.array(o, root, "citations", 3))
    for (size_t i = 0; i < cites->size(); ++i)
      check_citation(c, (*cites)[i], checker::index("citations", i));
  if (auto* sql = c.object(o, root, "sql", true))
    check_sql(c, *sql, "sql");
  c.strings(o, root, "followUpQuestions", 3);
  if (auto* g = c.object(o, root, "guardrail")) {
    c.one_of(*g, "guardrail", "verdict", {"pass", "block"}, false);
    c.one_of(*g, "guardrail", "layer", layer_names, true);
    c.strings(*g, "guardrail", "reasons");
    c.no_extra(*g, "guardrail", {"verdict", "layer", "reasons"});
  }
  c.strings(o, root, "warnings");
  if (auto* m = c.object(o, root, "meta"))
    check_meta(c, *m, "meta");
  c.no_extra(o, root,
             {"requestId", "conversationId", "route", "routeReason",
              "standaloneQuestion", "overridden", "status",
              "blockedBy", "answer", "citations", "sql", "followUpQuestions",
              "guardrail", "warnings", "meta"});
  // Cross-field rules.
  auto status = o.find("status");
  auto blocked = o.find("blockedBy");
  if (status != o.end() && status->value().is_string() && blocked != o.end()) {
    bool is_blocked = status->value().get_string() == "blocked";
    bool has_layer = !blocked->value().is_null();
    if (is_blocked && !has_layer)
      c.add("blockedBy", "must name a layer when status is \"blocked\"");
    else if (!is_blocked && has_layer)
      c.add("blockedBy", "must be null unless status is \"blocked\"");
  }
  return std::move(c.issues);
}

std::string error_body(const error& e, std::string_view request_id) {
  json::object o;
  o["error"] = to_string(e.code);
  o["message"] = e.message;
  o["requestId"] = request_id;
  if (!e.issues.empty()) {
    json::array issues;
    issues.reserve(e.issues.size());
    for (const auto& i : e.issues) {
      json::object io;
      io["path"] = i.path;
      io["message"] = i.message;
      issues.push_back(std::move(io));
    }
    o["issues"] = std::move(issues);
  }
  return json_text(o);
}

} // namespace candor::domain
