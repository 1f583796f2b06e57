// The MCP endpoint (see net/session.hpp): POST /mcp carries one JSON-RPC
// message of the Streamable HTTP transport and is answered with
// application/json; DELETE /mcp ends a session; GET is 405 (no stream
// from the server). The protocol's JSON is in domain/api/mcp_json.hpp;
// this file checks the transport (Origin, Accept, Mcp-Session-Id,
// MCP-Protocol-Version) and hands tools to the service: `ask` and
// `query_sales` through the same hand-off as POST /ask (the graph writes
// their ledger rows), `search_documents` and `describe_catalog` to the
// service's lookups.

#include "net/session.hpp"

#include "data/log.hpp"
#include "domain/api/mcp_json.hpp"

namespace candor::net::detail {

namespace mcp = domain::mcp;
namespace json = boost::json;

namespace {

mcp::rpc_error rpc_error(int32_t code, std::string text,
                         json::value id = nullptr) {
  mcp::rpc_error e;
  e.code = code;
  e.text = std::move(text);
  e.id = std::move(id);
  return e;
}

bool loopback_bind(std::string_view bind) {
  return bind.rfind("127.", 0) == 0 || bind == "::1" || bind == "localhost";
}

/// The longest prefix of `s` of at most `n` bytes that ends on a UTF-8
/// character boundary.
std::string utf8_prefix(const std::string& s, size_t n) {
  if (s.size() <= n)
    return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;
  return s.substr(0, n);
}

} // namespace

void session::send_rpc(http::status status, std::string body,
                       std::string_view session_id) {
  error_fields fields;
  if (!session_id.empty())
    fields.emplace_back("Mcp-Session-Id", session_id);
  write(status, std::move(body), "application/json", fields);
}

void session::send_rpc_error(http::status status, mcp::rpc_error e,
                             std::string_view error_kind) {
  auto code = static_cast<int>(status);
  if (code >= 400)
    record_error(code, error_kind);
  else
    log_read();
  send_rpc(status, mcp::error_body(e));
}

void session::handle_mcp() {
  auto& req = parser_->get();
  mcp_id_ = nullptr;
  // DNS rebinding: a browser page must not reach a local server.
  if (!origin_allowed(std::string_view{req[http::field::origin]},
                      std::string_view{req[http::field::host]},
                      loopback_bind(srv_.cfg.http.bind))) {
    send_rpc_error(http::status::forbidden,
                   rpc_error(mcp::invalid_request,
                             "Forbidden: this Origin may not use /mcp"),
                   "forbidden");
    return;
  }
  auto sid = std::string{req["Mcp-Session-Id"]};
  if (req.method() == http::verb::delete_) {
    if (sid.empty()) {
      send_rpc_error(http::status::bad_request,
                     rpc_error(mcp::invalid_request,
                               "Bad Request: Mcp-Session-Id is required"));
      return;
    }
    auto known = valid_mcp_session_id(sid) ? srv_.mcp.touch(sid)
                                           : std::nullopt;
    if (!known || known->key_name != ctx_.key_name || !srv_.mcp.close(sid)) {
      send_rpc_error(http::status::not_found,
                     rpc_error(mcp::invalid_request,
                               "Not Found: no such MCP session"),
                     "not_found");
      return;
    }
    log_read();
    send(http::status::ok, {}, "application/json");
    return;
  }
  if (!accepts_json(std::string_view{req[http::field::accept]})) {
    send_rpc_error(http::status::not_acceptable,
                   rpc_error(mcp::invalid_request,
                             "Not Acceptable: the answer is application/json "
                             "(send Accept: application/json, "
                             "text/event-stream)"),
                   "not_acceptable");
    return;
  }
  auto parsed = mcp::parse_message(req.body());
  if (!parsed.msg) {
    send_rpc_error(http::status::bad_request, std::move(parsed.err));
    return;
  }
  auto m = std::move(*parsed.msg);
  if (m.kind == mcp::message::request && m.method == "initialize") {
    mcp_id_ = m.id;
    auto pv = m.params.find("protocolVersion");
    if (pv == m.params.end() || !pv->value().is_string()) {
      send_rpc_error(http::status::ok,
                     rpc_error(mcp::invalid_params,
                               "Invalid params: protocolVersion must be a "
                               "string",
                               m.id));
      return;
    }
    auto version
      = std::string{mcp::negotiate(std::string_view{pv->value().as_string()})};
    auto id = srv_.mcp.open(version, ctx_.key_name);
    if (id.empty()) {
      send_rpc_error(http::status::internal_server_error,
                     rpc_error(mcp::internal_error,
                               "Internal error: no session id could be made",
                               m.id),
                     "internal");
      return;
    }
    log_read();
    send_rpc(http::status::ok,
             mcp::result_body(m.id, mcp::initialize_result(version)), id);
    return;
  }
  // Everything after initialize belongs to a session.
  if (sid.empty()) {
    send_rpc_error(http::status::bad_request,
                   rpc_error(mcp::invalid_request,
                             "Bad Request: Mcp-Session-Id is required "
                             "(call initialize first)",
                             m.id));
    return;
  }
  auto known
    = valid_mcp_session_id(sid) ? srv_.mcp.touch(sid) : std::nullopt;
  if (!known || known->key_name != ctx_.key_name) {
    send_rpc_error(http::status::not_found,
                   rpc_error(mcp::invalid_request,
                             "Not Found: no such MCP session (it ended or "
                             "expired): initialize again",
                             m.id),
                   "not_found");
    return;
  }
  if (auto it = req.find("MCP-Protocol-Version"); it != req.end()) {
    auto given = std::string_view{it->value()};
    if (!mcp::supported_version(given) || given != known->version) {
      send_rpc_error(http::status::bad_request,
                     rpc_error(mcp::invalid_request,
                               "Bad Request: MCP-Protocol-Version "
                                 + std::string{given}
                                 + " is not this session's revision ("
                                 + known->version + ")",
                               m.id));
      return;
    }
  }
  mcp_version_ = known->version;
  mcp_dispatch(std::move(m));
}

void session::mcp_dispatch(mcp::message m) {
  if (m.kind != mcp::message::request) {
    // Notifications (initialized, cancelled, ...) and responses: accepted.
    log_read();
    send(http::status::accepted, {}, "application/json");
    return;
  }
  mcp_id_ = m.id;
  if (m.method == "ping") {
    log_read();
    send_rpc(http::status::ok, mcp::result_body(m.id, json::object{}));
  } else if (m.method == "tools/list") {
    log_read();
    send_rpc(http::status::ok, mcp::result_body(m.id, mcp::tools_list()));
  } else if (m.method == "resources/list") {
    log_read();
    send_rpc(http::status::ok, mcp::result_body(m.id, mcp::resources_list()));
  } else if (m.method == "resources/templates/list") {
    log_read();
    send_rpc(http::status::ok,
             mcp::result_body(
               m.id, json::object{{"resourceTemplates", json::array{}}}));
  } else if (m.method == "resources/read") {
    mcp_read_resource(m);
  } else if (m.method == "tools/call") {
    mcp_call_tool(std::move(m));
  } else if (m.method == "initialize") {
    send_rpc_error(http::status::ok,
                   rpc_error(mcp::invalid_request,
                             "Invalid Request: this session is initialized "
                             "already",
                             m.id));
  } else {
    send_rpc_error(http::status::ok,
                   rpc_error(mcp::method_not_found,
                             "Method not found: " + m.method, m.id));
  }
}

void session::mcp_read_resource(const mcp::message& m) {
  std::string uri;
  if (auto err = mcp::read_uri(m.params, uri)) {
    err->id = m.id;
    send_rpc_error(http::status::ok, std::move(*err));
    return;
  }
  mcp_target_ = uri;
  if (!try_begin_service_call())
    return;
  auto cb = make_callback<domain::outcome<std::string>>(&session::on_mcp_text);
  if (uri == mcp::catalog_uri)
    srv_.svc.catalog(std::move(cb));
  else
    srv_.svc.documents(std::move(cb));
}

void session::mcp_call_tool(mcp::message m) {
  auto call = mcp::parse_tool_call(m.params);
  if (!call) {
    auto e = rpc_error(mcp::invalid_params, call.err().message, m.id);
    e.issues = call.err().issues;
    send_rpc_error(http::status::ok, std::move(e));
    return;
  }
  auto& name = call->name;
  auto& args = call->arguments;
  if (!mcp::known_tool(name)) {
    send_rpc_error(http::status::ok,
                   rpc_error(mcp::invalid_params,
                             "Invalid params: unknown tool '" + name + "'",
                             m.id));
    return;
  }
  // Bad arguments: -32602 in 2025-06-18; a tool error the model can read
  // and correct in 2025-11-25.
  auto bad_arguments = [this, &m](const domain::error& e) {
    if (mcp::argument_errors_in_result(mcp_version_)) {
      log_read();
      send_rpc(http::status::ok,
               mcp::result_body(m.id, mcp::tool_error(mcp::describe(e))));
      return;
    }
    auto err = rpc_error(mcp::invalid_params, e.message, m.id);
    err.issues = e.issues;
    send_rpc_error(http::status::ok, std::move(err));
  };
  mcp_target_ = name;
  if (name == "ask") {
    auto ask = mcp::ask_arguments(args);
    if (!ask) {
      bad_arguments(ask.err());
      return;
    }
    submit_ask(std::move(*ask), &session::on_mcp_ask);
  } else if (name == "query_sales") {
    auto sql = mcp::sql_arguments(args);
    if (!sql) {
      bad_arguments(sql.err());
      return;
    }
    // The caller's SQL goes through the data branch like a model's: the
    // graph starts at sql_validate (domain::entry_node_for) and writes
    // the request's ledger row, SQL audit rows and trace.
    domain::ask_request ask;
    ask.question = utf8_prefix(*sql, 500);
    ask.force_route = domain::route_kind::data;
    ask.sql = std::move(*sql);
    submit_ask(std::move(ask), &session::on_mcp_sql);
  } else if (name == "search_documents") {
    auto s = mcp::search_arguments(args);
    if (!s) {
      bad_arguments(s.err());
      return;
    }
    ctx_.question = s->query;
    if (!try_begin_service_call())
      return;
    using found = domain::outcome<std::vector<domain::passage>>;
    srv_.svc.search(std::move(s->query), s->k,
                    make_callback<found>(&session::on_mcp_search));
  } else {
    auto ok = mcp::no_arguments(args);
    if (!ok) {
      bad_arguments(ok.err());
      return;
    }
    if (!try_begin_service_call())
      return;
    srv_.svc.catalog(
      make_callback<domain::outcome<std::string>>(&session::on_mcp_text));
  }
}

/// `ask` and `query_sales`: the graph's outcome as a tool result
/// (`render`). A service error (no fixture, deadline, no model) is a tool
/// error naming it; the service wrote the request's row either way.
void session::answer_mcp_graph(
  const domain::outcome<domain::ask_box>& r,
  boost::json::object (*render)(const domain::ask_state&)) {
  if (!end_ask(r))
    return;
  if (!r) {
    send_rpc(http::status::ok,
             mcp::result_body(mcp_id_,
                              mcp::tool_error(
                                std::string{domain::to_string(r.err().code)}
                                + ": " + r.err().message)));
    return;
  }
  send_rpc(http::status::ok, mcp::result_body(mcp_id_, render(**r)));
}

void session::on_mcp_ask(domain::outcome<domain::ask_box> r) {
  auto self = std::move(pending_self_);
  answer_mcp_graph(r, &mcp::ask_result);
}

void session::on_mcp_sql(domain::outcome<domain::ask_box> r) {
  auto self = std::move(pending_self_);
  answer_mcp_graph(r, &mcp::sql_result);
}

void session::on_mcp_search(domain::outcome<std::vector<domain::passage>> r) {
  auto self = std::move(pending_self_);
  end_service_call();
  log_read();
  if (!r) {
    send_rpc(http::status::ok,
             mcp::result_body(mcp_id_,
                              mcp::tool_error(
                                std::string{domain::to_string(r.err().code)}
                                + ": " + r.err().message)));
    return;
  }
  send_rpc(http::status::ok,
           mcp::result_body(mcp_id_, mcp::search_result(*r)));
}

/// describe_catalog, and resources/read of candor://catalog or
/// candor://documents.
void session::on_mcp_text(domain::outcome<std::string> r) {
  auto self = std::move(pending_self_);
  end_service_call();
  bool resource = mcp_target_.rfind("candor://", 0) == 0;
  if (!r) {
    if (resource) {
      send_rpc_error(http::status::ok,
                     rpc_error(mcp::internal_error,
                               std::string{domain::to_string(r.err().code)}
                                 + ": " + r.err().message,
                               mcp_id_));
      return;
    }
    log_read();
    send_rpc(http::status::ok,
             mcp::result_body(mcp_id_,
                              mcp::tool_error(
                                std::string{domain::to_string(r.err().code)}
                                + ": " + r.err().message)));
    return;
  }
  log_read();
  send_rpc(http::status::ok,
           mcp::result_body(mcp_id_,
                            resource
                              ? mcp::resource_contents(mcp_target_,
                                                       std::move(*r))
                              : mcp::json_result(std::move(*r))));
}

} // namespace candor::net::detail
