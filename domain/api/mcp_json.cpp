// The JSON of the MCP endpoint: JSON-RPC messages, the lists, the tools'
// arguments and results (see domain/api/mcp_json.hpp).

#include "domain/api/mcp_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "domain/api/api_json.hpp"
#include "domain/build_info.hpp"
#include "domain/json_text.hpp"
#include "domain/text.hpp"

namespace candor::domain::mcp {

namespace json = boost::json;

bool supported_version(std::string_view v) noexcept {
  return v == "2025-11-25" || v == "2025-06-18";
}

std::string_view negotiate(std::string_view requested) noexcept {
  if (requested == "2025-06-18")
    return "2025-06-18";
  return latest_version;
}

bool argument_errors_in_result(std::string_view version) noexcept {
  return version != "2025-06-18";
}

// -- JSON-RPC 2.0 -------------------------------------------------------------

namespace {

rpc_error make_rpc_error(int32_t code, std::string text,
                         json::value id = nullptr) {
  rpc_error e;
  e.code = code;
  e.text = std::move(text);
  e.id = std::move(id);
  return e;
}

bool valid_id(const json::value& v) noexcept {
  return v.is_string() || v.is_int64() || v.is_uint64();
}

} // namespace

parsed parse_message(std::string_view body) {
  parsed out;
  boost::system::error_code parse_ec;
  auto root = json::parse(body, parse_ec);
  if (parse_ec) {
    out.err = make_rpc_error(parse_error,
                             "Parse error: the body is not valid JSON ("
                               + parse_ec.message() + ")");
    return out;
  }
  if (auto dup = duplicate_member(body)) {
    out.err = make_rpc_error(parse_error, "Parse error: member '" + *dup
                                            + "' appears more than once");
    return out;
  }
  if (root.is_array()) {
    out.err = make_rpc_error(invalid_request,
                             "Invalid Request: JSON-RPC batches are not "
                             "supported (MCP removed them in 2025-06-18); "
                             "send one message per POST");
    return out;
  }
  if (!root.is_object()) {
    out.err = make_rpc_error(invalid_request,
                             "Invalid Request: the body must be a JSON-RPC "
                             "message object, not "
                               + std::string{json_kind_name(root)});
    return out;
  }
  auto& obj = root.as_object();
  json::value id = nullptr;
  bool has_id = false;
  if (auto it = obj.find("id"); it != obj.end()) {
    has_id = true;
    if (valid_id(it->value()))
      id = it->value();
  }
  auto jr = obj.find("jsonrpc");
  if (jr == obj.end() || !jr->value().is_string()
      || jr->value().as_string() != "2.0") {
    out.err = make_rpc_error(invalid_request,
                             "Invalid Request: \"jsonrpc\" must be \"2.0\"", id);
    return out;
  }
  if (has_id && id.is_null()) {
    out.err = make_rpc_error(invalid_request,
                             "Invalid Request: \"id\" must be a string or an "
                             "integer");
    return out;
  }
  message m;
  auto mt = obj.find("method");
  if (mt == obj.end()) {
    // A response to a request of ours (we send none): accepted, ignored.
    if (has_id && (obj.contains("result") || obj.contains("error"))) {
      m.kind = message::response;
      m.id = std::move(id);
      out.msg = std::move(m);
      return out;
    }
    out.err = make_rpc_error(invalid_request,
                             "Invalid Request: \"method\" is required", id);
    return out;
  }
  if (!mt->value().is_string()) {
    out.err = make_rpc_error(invalid_request,
                             "Invalid Request: \"method\" must be a string", id);
    return out;
  }
  m.method = std::string{mt->value().as_string()};
  m.kind = has_id ? message::request : message::notification;
  m.id = std::move(id);
  if (auto pt = obj.find("params"); pt != obj.end()) {
    if (!pt->value().is_object()) {
      out.err = make_rpc_error(invalid_params,
                               "Invalid params: \"params\" must be an object",
                               m.id);
      return out;
    }
    m.params = std::move(pt->value().as_object());
  }
  out.msg = std::move(m);
  return out;
}

std::string result_body(const json::value& id, json::object result) {
  return json_text(json::object{
    {"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string error_body(const rpc_error& e) {
  json::object err{{"code", e.code}, {"message", e.text}};
  if (!e.issues.empty()) {
    json::array issues;
    for (const auto& i : e.issues)
      issues.push_back(json::object{{"path", i.path}, {"message", i.message}});
    err["data"] = json::object{{"issues", std::move(issues)}};
  }
  return json_text(
    json::object{{"jsonrpc", "2.0"}, {"id", e.id}, {"error", std::move(err)}});
}

// -- lifecycle and lists ------------------------------------------------------

json::object initialize_result(std::string_view version) {
  return json::object{
    {"protocolVersion", version},
    {"capabilities",
     json::object{{"tools", json::object{{"listChanged", false}}},
                  {"resources", json::object{{"subscribe", false},
                                             {"listChanged", false}}}}},
    {"serverInfo",
     json::object{{"name", "candor"},
                  {"title", "candor: company documents and data"},
                  {"version", domain::version()}}},
    {"instructions",
     "candor answers questions about a company's documents and its "
     "database, and refuses rather than guesses. Use `ask` for a "
     "question in words, `search_documents` for passages, "
     "`describe_catalog` before `query_sales` (read-only SQL, checked and "
     "sandboxed; personal data cannot be read)."}};
}

namespace {

json::object schema(json::object properties, json::array required) {
  return json::object{{"type", "object"},
                      {"properties", std::move(properties)},
                      {"required", std::move(required)},
                      {"additionalProperties", false}};
}

json::object tool(std::string_view name, std::string_view title,
                  std::string_view description, json::object input,
                  bool read_only_world) {
  return json::object{
    {"name", name},
    {"title", title},
    {"description", description},
    {"inputSchema", std::move(input)},
    {"annotations", json::object{{"readOnlyHint", true},
                                 {"destructiveHint", false},
                                 {"idempotentHint", read_only_world},
                                 {"openWorldHint", false}}}};
}

json::object question_schema(std::string_view what) {
  return json::object{{"type", "string"},
                      {"minLength", 3},
                      {"maxLength", 500},
                      {"description", what}};
}

} // namespace

json::object tools_list() {
  json::array tools;
  tools.push_back(tool(
    "ask", "Ask candor",
    "Answers a question about the company's documents or data through "
    "candor's whole graph (input guard, router, retrieval with checked "
    "citations or checked SQL, output guard). Returns the answer, or an "
    "explicit refusal, with citations or the SQL that ran.",
    schema(json::object{{"question", question_schema("The question, in words")},
                        {"route",
                         json::object{{"type", "string"},
                                      {"enum", json::array{"docs", "data"}},
                                      {"description",
                                       "Skip the router: documents or data"}}}},
           json::array{"question"}),
    false));
  tools.push_back(tool(
    "search_documents", "Search the documents",
    "Retrieval only: the best passages of the company's documents for a "
    "query, with chunk ids, titles, headings, scores and text (sanitized at "
    "ingestion). No model, no refusal threshold.",
    schema(
      json::object{{"query", question_schema("What to look for")},
                   {"k", json::object{{"type", "integer"},
                                      {"minimum", 1},
                                      {"maximum", max_search_k},
                                      {"default", 5},
                                      {"description", "How many passages"}}}},
      json::array{"query"}),
    true));
  tools.push_back(tool(
    "query_sales", "Query the database",
    "Runs one read-only SQL SELECT on the database. The query is "
    "untrusted, exactly like a model's: the statement policy, the "
    "authorizer (only catalog tables and columns; personal data is denied) "
    "and the value domains check it, then a sandboxed executor runs it with "
    "a deadline; LIMIT is capped at 200 rows. A blocked query is a tool "
    "error naming the rule. See describe_catalog for the tables.",
    schema(json::object{{"sql", json::object{{"type", "string"},
                                              {"minLength", 1},
                                              {"maxLength", max_sql_bytes},
                                              {"description",
                                               "One SELECT (or WITH) "
                                               "statement"}}}},
           json::array{"sql"}),
    true));
  tools.push_back(tool(
    "describe_catalog", "Describe the catalog",
    "The tables and columns of the database that may be queried, "
    "with descriptions, declared values of categorical columns, row "
    "counts and metric definitions (e.g. revenue). Personal-data columns "
    "are withheld.",
    schema(json::object{}, json::array{}), true));
  return json::object{{"tools", std::move(tools)}};
}

json::object resources_list() {
  json::array list;
  list.push_back(json::object{
    {"uri", catalog_uri},
    {"name", "catalog"},
    {"title", "Sales catalog"},
    {"description", "Queryable tables and columns, value domains, metrics "
                    "(what describe_catalog returns)"},
    {"mimeType", "application/json"}});
  list.push_back(json::object{
    {"uri", documents_uri},
    {"name", "documents"},
    {"title", "Documents"},
    {"description", "The documents candor answers from: slug, title, "
                    "number of passages"},
    {"mimeType", "application/json"}});
  return json::object{{"resources", std::move(list)}};
}

std::optional<rpc_error> read_uri(const json::object& params,
                                  std::string& uri) {
  auto it = params.find("uri");
  if (it == params.end() || !it->value().is_string())
    return make_rpc_error(invalid_params,
                          "Invalid params: \"uri\" must be a string");
  uri = std::string{it->value().as_string()};
  if (uri != catalog_uri && uri != documents_uri) {
    auto e = make_rpc_error(resource_not_found, "Resource not found: " + uri);
    return e;
  }
  return std::nullopt;
}

json::object resource_contents(std::string_view uri, std::string text) {
  return json::object{
    {"contents", json::array{json::object{{"uri", uri},
                                          {"mimeType", "application/json"},
                                          {"text", std::move(text)}}}}};
}

// -- tools: arguments ---------------------------------------------------------

namespace {

error invalid(std::string message) {
  return make_error(ec::invalid_request, std::move(message));
}

void unknown_fields(const json::object& args,
                    std::initializer_list<std::string_view> known, error& e) {
  for (const auto& kv : args)
    if (std::find(known.begin(), known.end(), std::string_view{kv.key()})
        == known.end())
      e.issues.push_back({std::string{kv.key()}, "unknown argument"});
}

} // namespace

bool known_tool(std::string_view name) noexcept {
  return name == "ask" || name == "search_documents" || name == "query_sales"
         || name == "describe_catalog";
}

outcome<tool_call> parse_tool_call(const json::object& params) {
  auto e = invalid("Invalid params: tools/call needs a tool name");
  auto it = params.find("name");
  if (it == params.end() || !it->value().is_string()) {
    e.issues.push_back({"name", "must be a string"});
    return e;
  }
  tool_call call;
  call.name = std::string{it->value().as_string()};
  if (auto a = params.find("arguments"); a != params.end()) {
    if (!a->value().is_object()) {
      e.message = "Invalid params: tool arguments must be an object";
      e.issues.push_back({"arguments", "must be an object"});
      return e;
    }
    call.arguments = a->value().as_object();
  }
  return call;
}

outcome<ask_request> ask_arguments(const json::object& args) {
  // The same checks as POST /ask's body, on the same fields.
  json::object body;
  auto e = invalid("Invalid arguments for tool ask");
  unknown_fields(args, {"question", "route"}, e);
  if (!e.issues.empty())
    return e;
  if (auto it = args.find("question"); it != args.end())
    body["question"] = it->value();
  if (auto it = args.find("route"); it != args.end())
    body["forceRoute"] = it->value();
  auto r = parse_ask_body(json_text(body));
  if (!r) {
    e.issues = r.err().issues;
    for (auto& i : e.issues)
      if (i.path == "forceRoute")
        i.path = "route";
    return e;
  }
  return r;
}

outcome<search_args> search_arguments(const json::object& args) {
  auto e = invalid("Invalid arguments for tool search_documents");
  unknown_fields(args, {"query", "k"}, e);
  search_args out;
  auto q = args.find("query");
  if (q == args.end()) {
    e.issues.push_back({"query", "is required"});
  } else if (!q->value().is_string()) {
    e.issues.push_back({"query", "must be a string, not "
                                   + std::string{json_kind_name(q->value())}});
  } else {
    auto text = trim_ascii(std::string_view{q->value().as_string()});
    auto n = count_code_points(text);
    if (n < 3 || n > 500)
      e.issues.push_back(
        {"query", "must be 3 to 500 characters, got " + std::to_string(n)});
    out.query = std::string{text};
  }
  if (auto k = args.find("k"); k != args.end()) {
    const auto& v = k->value();
    if (!v.is_int64() || v.as_int64() < 1 || v.as_int64() > max_search_k)
      e.issues.push_back(
        {"k", "must be an integer from 1 to " + std::to_string(max_search_k)});
    else
      out.k = static_cast<int32_t>(v.as_int64());
  }
  if (!e.issues.empty())
    return e;
  return out;
}

outcome<std::string> sql_arguments(const json::object& args) {
  auto e = invalid("Invalid arguments for tool query_sales");
  unknown_fields(args, {"sql"}, e);
  std::string sql;
  auto it = args.find("sql");
  if (it == args.end()) {
    e.issues.push_back({"sql", "is required"});
  } else if (!it->value().is_string()) {
    e.issues.push_back({"sql", "must be a string, not "
                                 + std::string{json_kind_name(it->value())}});
  } else {
    auto text = std::string_view{it->value().as_string()};
    if (trim_ascii(text).empty())
      e.issues.push_back({"sql", "must not be blank"});
    else if (text.size() > max_sql_bytes)
      e.issues.push_back({"sql", "must be at most "
                                   + std::to_string(max_sql_bytes)
                                   + " bytes, got "
                                   + std::to_string(text.size())});
    sql = std::string{text};
  }
  if (!e.issues.empty())
    return e;
  return sql;
}

outcome<bool> no_arguments(const json::object& args) {
  auto e = invalid("Invalid arguments for tool describe_catalog");
  unknown_fields(args, {}, e);
  if (!e.issues.empty())
    return e;
  return true;
}

std::string describe(const error& e) {
  auto out = e.message;
  for (const auto& i : e.issues)
    out += "; " + (i.path.empty() ? std::string{"arguments"} : i.path) + " "
           + i.message;
  return out;
}

// -- tools: results -----------------------------------------------------------

namespace {

json::object text_content(std::string text) {
  return json::object{{"type", "text"}, {"text", std::move(text)}};
}

json::object result(std::string text, json::object structured, bool is_error) {
  json::object r{{"content", json::array{text_content(std::move(text))}}};
  if (!structured.empty())
    r["structuredContent"] = std::move(structured);
  r["isError"] = is_error;
  return r;
}

std::string score_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", s);
  return buf;
}

} // namespace

json::object ask_result(const ask_state& st) {
  auto text = st.answer;
  if (!st.citations.empty()) {
    text += "\n\nSources:";
    for (const auto& c : st.citations)
      text += "\n- " + c.doc_title + " > " + c.heading + " [" + c.chunk_id
              + "]";
  }
  if (st.has_sql && !st.sql.query.empty())
    text += "\n\nSQL: " + st.sql.query;
  return result(std::move(text), to_json(st),
                st.status == status_kind::error);
}

json::object sql_result(const ask_state& st) {
  auto full = to_json(st);
  json::object structured;
  for (auto key : {"requestId", "status", "blockedBy", "answer", "guardrail",
                   "sql", "warnings"})
    if (auto it = full.find(key); it != full.end())
      structured[key] = it->value();
  if (st.status == status_kind::blocked) {
    std::string rules;
    for (const auto& r : st.guardrail.reasons)
      rules += (rules.empty() ? "" : ", ") + r;
    return result("Blocked by " + std::string{to_string(st.blocked_by)}
                    + " (" + rules + "): " + st.answer,
                  std::move(structured), true);
  }
  if (st.status != status_kind::answered
      && st.status != status_kind::no_results)
    return result(std::string{to_string(st.status)} + ": " + st.answer,
                  std::move(structured), true);
  std::string text = st.answer;
  if (auto it = full.find("sql"); it != full.end() && it->value().is_object()) {
    const auto& sql = it->value().as_object();
    text += "\nSQL: " + st.sql.query;
    if (auto c = sql.find("columns"); c != sql.end())
      text += "\ncolumns: " + json::serialize(c->value());
    if (auto rows = sql.find("rows"); rows != sql.end())
      for (const auto& row : rows->value().as_array())
        text += "\n" + json::serialize(row);
    if (st.sql.truncated)
      text += "\n(more rows than shown)";
  }
  return result(std::move(text), std::move(structured), false);
}

json::object search_result(const std::vector<passage>& found) {
  json::array results;
  std::string text = found.empty() ? "No passage matches the query." : "";
  for (const auto& p : found) {
    results.push_back(json::object{{"chunkId", p.chunk_id},
                                   {"docTitle", p.doc_title},
                                   {"heading", p.heading},
                                   {"score", std::round(p.score * 1e4) / 1e4},
                                   {"sanitized", p.sanitized},
                                   {"text", p.text}});
    if (!text.empty())
      text += "\n\n";
    text += "[" + p.chunk_id + "] score " + score_text(p.score) + " | "
            + p.doc_title + " > " + p.heading + "\n" + p.text;
  }
  return result(std::move(text),
                json::object{{"results", std::move(results)}}, false);
}

json::object json_result(std::string text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  json::object structured;
  if (!ec && v.is_object())
    structured = std::move(v.as_object());
  return result(std::move(text), std::move(structured), false);
}

json::object tool_error(std::string text) {
  return result(std::move(text), {}, true);
}

} // namespace candor::domain::mcp
