#pragma once

// Declares the JSON of the MCP endpoint (POST /mcp): JSON-RPC 2.0 messages,
// protocol-version negotiation, the tool and resource lists, the tools'
// argument parsers and their results. Pure functions; the HTTP layer
// (net/mcp_routes.cpp) handles the transport (sessions, headers) and only
// writes what these return.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "domain/error.hpp"
#include "domain/sql/policy.hpp"
#include "domain/types.hpp"

namespace candor::domain::mcp {

// -- protocol revisions -------------------------------------------------------

/// The newest revision served (what the official SDK 1.32 asks for).
inline constexpr std::string_view latest_version = "2025-11-25";

/// Revisions served: 2025-11-25 and 2025-06-18. Older ones (with JSON-RPC
/// batches) are not: a client asking for one is offered the latest.
bool supported_version(std::string_view v) noexcept;

/// The revision to answer `initialize` with: the client's when served,
/// else the latest (the client then decides whether to go on).
std::string_view negotiate(std::string_view requested) noexcept;

/// Whether bad tool arguments are a tool result with `isError` (2025-11-25:
/// input validation errors go back to the model) rather than the JSON-RPC
/// error -32602 (2025-06-18).
bool argument_errors_in_result(std::string_view version) noexcept;

// -- JSON-RPC 2.0 -------------------------------------------------------------

/// JSON-RPC error codes (and MCP's resource-not-found).
enum code : int32_t {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,
  resource_not_found = -32002,
};

/// One JSON-RPC message from the client.
struct message {
  enum kind_t { request, notification, response };
  kind_t kind = request;
  std::string method;
  /// A request's id (string or integer); null otherwise.
  boost::json::value id;
  boost::json::object params;
};

/// Why a body is not one usable message: the code, the message, and the
/// request's id when it could be read (null otherwise).
struct rpc_error {
  int32_t code = invalid_request;
  std::string text;
  boost::json::value id;
  /// `data` of the error: `issues` of invalid params, when there are some.
  std::vector<issue> issues;
};

/// Parses a POST body: one request, notification or response object.
/// Invalid JSON (or a duplicate member) is -32700; a batch array, a
/// non-object, `jsonrpc` other than "2.0", a method that is not a string
/// or an id that is neither a string nor an integer is -32600; params
/// that are not an object is -32602.
struct parsed {
  std::optional<message> msg;
  rpc_error err;
};
parsed parse_message(std::string_view body);

/// `{"jsonrpc":"2.0","id":id,"result":result}`.
std::string result_body(const boost::json::value& id,
                        boost::json::object result);

/// `{"jsonrpc":"2.0","id":id,"error":{code,message,data?}}`; `data` is
/// `{issues:[{path,message}]}` when there are issues.
std::string error_body(const rpc_error& e);

// -- lifecycle and lists ------------------------------------------------------

/// The `initialize` result: the revision, capabilities (tools, resources),
/// serverInfo with candor's version, and instructions.
boost::json::object initialize_result(std::string_view version);

/// `tools/list`: ask, search_documents, query_sales, describe_catalog, each
/// with a JSON Schema of its input.
boost::json::object tools_list();

/// The resources: candor://catalog and candor://documents.
inline constexpr std::string_view catalog_uri = "candor://catalog";
inline constexpr std::string_view documents_uri = "candor://documents";

/// `resources/list`.
boost::json::object resources_list();

/// `resources/read`'s uri, or an error: -32602 (no uri) or -32002 (no such
/// resource).
std::optional<rpc_error> read_uri(const boost::json::object& params,
                                  std::string& uri);

/// `resources/read`'s result: one JSON text content for `uri`.
boost::json::object resource_contents(std::string_view uri, std::string text);

// -- tools ----------------------------------------------------------------------

/// Longest SQL text `query_sales` takes, in bytes: the statement policy's
/// own bound (20 KiB), checked here first so that the caller gets -32602.
inline constexpr size_t max_sql_bytes = sql::policy_config{}.max_bytes;
/// Most passages `search_documents` returns.
inline constexpr int32_t max_search_k = 10;

/// `tools/call`'s name and arguments (-32602 when malformed).
struct tool_call {
  std::string name;
  boost::json::object arguments;
};
outcome<tool_call> parse_tool_call(const boost::json::object& params);

/// Whether `name` is one of the tools.
bool known_tool(std::string_view name) noexcept;

/// `ask`: {question (3..500 code points), route?: "docs"|"data"}, checked
/// as POST /ask checks its body.
outcome<ask_request> ask_arguments(const boost::json::object& args);

/// `search_documents`: {query (3..500 code points), k?: 1..10 (5)}.
struct search_args {
  std::string query;
  int32_t k = 5;
};
outcome<search_args> search_arguments(const boost::json::object& args);

/// `query_sales`: {sql: a non-blank string of at most max_sql_bytes}.
outcome<std::string> sql_arguments(const boost::json::object& args);

/// `describe_catalog`: no arguments.
outcome<bool> no_arguments(const boost::json::object& args);

/// The `ask` result: the answer (with its sources) as text, the whole /ask
/// response as structuredContent; `isError` only for status "error".
boost::json::object ask_result(const ask_state& st);

/// The `query_sales` result: the rows as text and structured content, or
/// `isError` with a text naming the layer and rule that blocked the query
/// (or why it was refused or failed).
boost::json::object sql_result(const ask_state& st);

/// The `search_documents` result: one line per passage as text, and
/// `{results:[{chunkId, docTitle, heading, score, sanitized, text}]}`.
boost::json::object search_result(const std::vector<passage>& found);

/// A result whose content is JSON text, also given as structured content.
boost::json::object json_result(std::string text);

/// A tool execution failure: `isError` with one text.
boost::json::object tool_error(std::string text);

/// The text of an invalid-arguments error: the message and its issues.
std::string describe(const error& e);

} // namespace candor::domain::mcp
