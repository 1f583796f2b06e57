// The MCP endpoint (POST/DELETE /mcp) against a fake service: JSON-RPC
// errors, the session and protocol-version headers, Origin, API keys,
// tool arguments, and what each tool hands to the service.

#include "net/mcp_sessions.hpp"

#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/ledger/keys.hpp"
#include "data/ledger/store.hpp"
#include "net/key_gate.hpp"
#include "domain/api/mcp_json.hpp"
#include "domain/build_info.hpp"
#include "tests/support/fake_server.hpp"
#include "tests/support/http_client.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

const header_list json_headers{
  {"Content-Type", "application/json"},
  {"Accept", "application/json, text/event-stream"}};

header_list with(header_list base, const header_list& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

std::string rpc(std::string_view method, json::object params = {},
                json::value id = 1) {
  json::object o{{"jsonrpc", "2.0"}, {"method", method}};
  if (!id.is_null())
    o["id"] = id;
  if (!params.empty())
    o["params"] = std::move(params);
  return json::serialize(o);
}

json::object body_of(const std::optional<http_response>& r) {
  BOOST_REQUIRE(r);
  auto v = json::parse(r->body);
  BOOST_REQUIRE(v.is_object());
  return v.as_object();
}

int64_t error_code(const std::optional<http_response>& r) {
  auto o = body_of(r);
  BOOST_REQUIRE_MESSAGE(o.contains("error"), r->body);
  return o.at("error").at("code").as_int64();
}

/// An MCP client over the test client: initialize, then requests with the
/// session's headers.
struct mcp_client {
  http_client c;
  std::string session;
  std::string version;
  header_list extra;

  explicit mcp_client(uint16_t port, header_list more = {})
      : c(port), extra(std::move(more)) {
    BOOST_REQUIRE(c.connected());
  }

  std::optional<http_response> post(const std::string& body,
                                    const header_list& more = {}) {
    auto h = with(with(json_headers, extra), more);
    return c.request("POST", "/mcp", body, h);
  }

  void initialize(std::string_view asked = "2025-06-18") {
    auto r = post(rpc("initialize",
                      json::object{{"protocolVersion", asked},
                                   {"capabilities", json::object{}},
                                   {"clientInfo",
                                    json::object{{"name", "t"},
                                                 {"version", "1"}}}}));
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_MESSAGE(r->status == 200, r->body);
    session = r->header("Mcp-Session-Id");
    BOOST_REQUIRE(net::valid_mcp_session_id(session));
    version = std::string{
      body_of(r).at("result").at("protocolVersion").as_string()};
  }

  std::optional<http_response> call(std::string_view method,
                                    json::object params = {},
                                    json::value id = 2) {
    return post(rpc(method, std::move(params), std::move(id)),
                {{"Mcp-Session-Id", session},
                 {"MCP-Protocol-Version", version}});
  }

  json::object tool(std::string_view name, json::object args) {
    auto r = call("tools/call",
                  json::object{{"name", name}, {"arguments", std::move(args)}});
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_MESSAGE(r->status == 200, r->body);
    return body_of(r);
  }
};

std::string text_of(const json::object& result) {
  return std::string{
    result.at("content").as_array().at(0).at("text").as_string()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(net_mcp)

BOOST_AUTO_TEST_CASE(initialize_negotiates_and_opens_a_session) {
  running_server s;
  mcp_client m{s.port};
  m.initialize("2025-06-18");
  BOOST_TEST(m.version == "2025-06-18");
  auto r = m.post(rpc("initialize", json::object{{"protocolVersion",
                                                  "2024-01-01"}}));
  auto o = body_of(r);
  auto& res = o.at("result").as_object();
  // An unknown revision is answered with the newest one served.
  BOOST_TEST(res.at("protocolVersion").as_string() == "2025-11-25");
  BOOST_TEST(res.at("serverInfo").at("name").as_string() == "candor");
  BOOST_TEST(res.at("serverInfo").at("version").as_string()
             == domain::version());
  BOOST_TEST(res.at("capabilities").as_object().contains("tools"));
  BOOST_TEST(res.at("capabilities").as_object().contains("resources"));
  // Every initialize opens a new session.
  BOOST_TEST(r->header("Mcp-Session-Id") != m.session);
  BOOST_TEST(r->header("Content-Type") == "application/json");
  // No ledger rows for the protocol's reads.
  BOOST_TEST(s.svc.records().empty());
}

BOOST_AUTO_TEST_CASE(session_and_version_headers) {
  running_server s;
  mcp_client m{s.port};
  m.initialize();
  auto list = rpc("tools/list");
  // No session: 400; a session id never issued: 404.
  auto r = m.post(list);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
  BOOST_TEST(error_code(r) == -32600);
  r = m.post(list, {{"Mcp-Session-Id", std::string(32, 'a')}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  r = m.post(list, {{"Mcp-Session-Id", "not-even-hex"}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  // A revision other than the session's: 400.
  r = m.post(list, {{"Mcp-Session-Id", m.session},
                    {"MCP-Protocol-Version", "2025-11-25"}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
  r = m.post(list, {{"Mcp-Session-Id", m.session},
                    {"MCP-Protocol-Version", "1999-01-01"}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
  // Without the header the session's revision is assumed.
  r = m.post(list, {{"Mcp-Session-Id", m.session}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  r = m.call("tools/list");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  auto tools = body_of(r).at("result").at("tools").as_array();
  BOOST_REQUIRE(tools.size() == 4u);
  std::vector<std::string> names;
  for (auto& t : tools) {
    names.emplace_back(t.at("name").as_string());
    BOOST_TEST(t.at("inputSchema").at("type").as_string() == "object");
  }
  BOOST_TEST((names == std::vector<std::string>{"ask", "search_documents",
                                                "query_sales",
                                                "describe_catalog"}));
  // notifications/initialized: 202, no body.
  r = m.post(rpc("notifications/initialized", {}, nullptr),
             {{"Mcp-Session-Id", m.session}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 202);
  BOOST_TEST(r->body.empty());
  // GET: 405 (no server-initiated stream).
  r = m.c.request("GET", "/mcp", {}, {{"Mcp-Session-Id", m.session}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 405);
  BOOST_TEST(r->header("Allow") == "POST, DELETE");
  // DELETE ends the session; then it is unknown.
  r = m.c.request("DELETE", "/mcp", {}, {{"Mcp-Session-Id", m.session}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  r = m.call("ping");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  r = m.c.request("DELETE", "/mcp", {}, {{"Mcp-Session-Id", m.session}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  r = m.c.request("DELETE", "/mcp");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
}

BOOST_AUTO_TEST_CASE(json_rpc_errors) {
  running_server s;
  mcp_client m{s.port};
  m.initialize();
  auto sid = header_list{{"Mcp-Session-Id", m.session}};
  auto r = m.post("{not json", sid);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
  BOOST_TEST(error_code(r) == -32700);
  BOOST_TEST(body_of(r).at("id").is_null());
  r = m.post("[" + rpc("ping") + "]", sid);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
  BOOST_TEST(error_code(r) == -32600);
  BOOST_TEST(r->body.find("batch") != std::string::npos);
  r = m.post(R"({"id":3,"method":"ping"})", sid);
  BOOST_TEST(error_code(r) == -32600);
  BOOST_TEST(body_of(r).at("id").as_int64() == 3);
  r = m.post(R"({"jsonrpc":"2.0","id":true,"method":"ping"})", sid);
  BOOST_TEST(error_code(r) == -32600);
  r = m.post(R"({"jsonrpc":"2.0","id":4,"method":7})", sid);
  BOOST_TEST(error_code(r) == -32600);
  r = m.post(R"({"jsonrpc":"2.0","id":5,"method":"ping","params":[1]})", sid);
  BOOST_TEST(error_code(r) == -32602);
  r = m.post(R"({"jsonrpc":"2.0","id":6,"method":"ping","id":7})", sid);
  BOOST_TEST(error_code(r) == -32700);
  r = m.call("prompts/list", {}, "str-id");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  BOOST_TEST(error_code(r) == -32601);
  BOOST_TEST(body_of(r).at("id").as_string() == "str-id");
  r = m.call("ping", {}, 9);
  BOOST_TEST(body_of(r).at("result").as_object().empty());
  BOOST_TEST(body_of(r).at("id").as_int64() == 9);
  // The transport's own refusals.
  r = m.c.request("POST", "/mcp", rpc("ping"),
                  {{"Content-Type", "text/plain"}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 415);
  r = m.c.request("POST", "/mcp", rpc("ping"),
                  {{"Content-Type", "application/json"},
                   {"Accept", "text/html"},
                   {"Mcp-Session-Id", m.session}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 406);
  // The body limit is the chat endpoint's (256 KiB here by default).
  auto big = std::string(300 * 1024, ' ');
  r = m.post(big, sid);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 413);
}

BOOST_AUTO_TEST_CASE(origin_is_checked) {
  BOOST_TEST(net::origin_allowed("", "127.0.0.1:8080", true));
  BOOST_TEST(net::origin_allowed("http://localhost:3000", "x", true));
  BOOST_TEST(net::origin_allowed("http://127.0.0.1", "x", true));
  BOOST_TEST(net::origin_allowed("https://[::1]:9", "x", true));
  BOOST_TEST(!net::origin_allowed("http://evil.example", "x", true));
  BOOST_TEST(!net::origin_allowed("http://localhost.evil.example", "x", true));
  BOOST_TEST(!net::origin_allowed("http://127.0.0.1.evil.example", "x", true));
  BOOST_TEST(!net::origin_allowed("null", "x", true));
  BOOST_TEST(!net::origin_allowed("file://", "x", true));
  BOOST_TEST(net::origin_allowed("https://ai.example:8443",
                                 "ai.example:8443", false));
  BOOST_TEST(!net::origin_allowed("https://evil.example", "ai.example:8443",
                                  false));
  running_server s;
  mcp_client evil{s.port, {{"Origin", "http://evil.example"}}};
  auto r = evil.post(rpc("initialize",
                         json::object{{"protocolVersion", "2025-06-18"}}));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 403);
  BOOST_TEST(!r->has_header("Mcp-Session-Id"));
  mcp_client local{s.port, {{"Origin", "http://localhost:5173"}}};
  local.initialize();
}

BOOST_AUTO_TEST_CASE(api_keys_guard_mcp_and_bind_sessions) {
  running_server s;
  auto key = [](std::string name, const std::string& secret) {
    data::api_key k;
    k.name = std::move(name);
    k.hash = data::key_hash(secret);
    k.prefix = data::key_prefix(secret);
    k.rate = 100;
    k.burst = 100;
    return k;
  };
  const std::string alice = "cnd_alice-secret-0123456789";
  const std::string bob = "cnd_bob-secret-0123456789";
  s.srv->keys().load({key("alice", alice), key("bob", bob)}, {},
                     1'700'000'000'000'000);
  mcp_client anon{s.port};
  auto r = anon.post(rpc("initialize",
                         json::object{{"protocolVersion", "2025-06-18"}}));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  BOOST_TEST(r->has_header("WWW-Authenticate"));
  mcp_client a{s.port, {{"Authorization", "Bearer " + alice}}};
  a.initialize();
  BOOST_TEST(a.call("ping")->status == 200);
  // Bob cannot use Alice's session.
  mcp_client b{s.port, {{"Authorization", "Bearer " + bob}}};
  b.session = a.session;
  b.version = a.version;
  BOOST_TEST(b.call("ping")->status == 404);
}

BOOST_AUTO_TEST_CASE(bad_tool_arguments) {
  running_server s;
  mcp_client m{s.port};
  m.initialize("2025-06-18");
  auto bad = [&](std::string_view tool, json::object args) {
    auto r = m.call("tools/call", json::object{{"name", tool},
                                               {"arguments", std::move(args)}});
    BOOST_REQUIRE(r);
    BOOST_TEST(r->status == 200);
    BOOST_TEST(error_code(r) == -32602);
    return body_of(r);
  };
  bad("ask", {});
  auto o = bad("ask", {{"question", std::string(501, 'x')}});
  BOOST_TEST(json::serialize(o).find("at most 500") != std::string::npos);
  bad("ask", {{"question", "Refund policy?"}, {"route", "weather"}});
  bad("ask", {{"question", "Refund policy?"}, {"extra", 1}});
  o = bad("query_sales", {{"sql", 5}});
  BOOST_TEST(o.at("error").at("data").at("issues").at(0).at("path").as_string()
             == "sql");
  bad("query_sales", {{"sql", "   "}});
  bad("query_sales", {{"sql", std::string(20 * 1024 + 1, 'x')}});
  bad("search_documents", {{"query", "refunds"}, {"k", 11}});
  bad("search_documents", {{"query", "x"}});
  bad("describe_catalog", {{"table", "orders"}});
  bad("frobnicate", {});
  auto r = m.call("tools/call", json::object{{"arguments", json::object{}}});
  BOOST_TEST(error_code(r) == -32602);
  // Nothing reached the service.
  BOOST_TEST(s.svc.asks().empty());
  BOOST_TEST(s.svc.searches().empty());
  // 2025-11-25: the same problems come back as tool errors.
  mcp_client n{s.port};
  n.initialize("2025-11-25");
  auto res = n.tool("query_sales", {{"sql", 5}});
  BOOST_TEST(res.at("result").at("isError").as_bool());
  BOOST_TEST(text_of(res.at("result").as_object()).find("sql must be a string")
             != std::string::npos);
  BOOST_TEST(s.svc.asks().empty());
}

BOOST_AUTO_TEST_CASE(ask_goes_through_the_graph_hand_off) {
  running_server s;
  mcp_client m{s.port};
  m.initialize();
  auto o = m.tool("ask", {{"question", "  What is the refund policy? "},
                          {"route", "docs"}});
  auto& res = o.at("result").as_object();
  BOOST_TEST(!res.at("isError").as_bool());
  BOOST_TEST(text_of(res).find("Refunds take 14 days.") != std::string::npos);
  BOOST_TEST(text_of(res).find("refunds#policy-1") != std::string::npos);
  BOOST_TEST(res.at("structuredContent").at("status").as_string()
             == "answered");
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 1u);
  BOOST_TEST(asks[0].question == "What is the refund policy?");
  BOOST_TEST((asks[0].force_route == domain::route_kind::docs));
  BOOST_TEST(asks[0].path == "/mcp");
  BOOST_TEST(asks[0].sql.empty());
  BOOST_REQUIRE(s.svc.wait_records(1));
  BOOST_TEST(s.svc.records().at(0).path == "/mcp");
}

BOOST_AUTO_TEST_CASE(query_sales_hands_over_the_callers_sql) {
  running_server s;
  // As the real sql_validate node would: a write is blocked by the policy.
  s.svc.set_answer([](const domain::ask_request& req)
                     -> domain::outcome<domain::ask_box> {
    domain::ask_state st;
    st.request = req;
    st.route = domain::route_kind::data;
    st.has_sql = true;
    st.sql.query = req.sql;
    if (req.sql.find("DELETE") != std::string::npos) {
      domain::block(st, domain::layer_kind::sql_policy,
                    {"sql_policy:forbidden_keyword"},
                    "This data question was blocked (forbidden_keyword).");
    } else {
      st.sql.columns = {"n"};
      domain::cell c;
      c.kind = domain::cell::integer;
      c.i = 42;
      st.sql.rows = {{c}};
      st.sql.row_count = 1;
      domain::finish(st, domain::status_kind::answered,
                     "The query returned 1 row.");
    }
    return domain::ask_box{std::move(st)};
  });
  mcp_client m{s.port};
  m.initialize();
  auto o = m.tool("query_sales", {{"sql", "DELETE FROM orders"}});
  auto& res = o.at("result").as_object();
  BOOST_TEST(res.at("isError").as_bool());
  BOOST_TEST(text_of(res).find("sql_policy:forbidden_keyword")
             != std::string::npos);
  BOOST_TEST(res.at("structuredContent").at("blockedBy").as_string()
             == "sql_policy");
  auto asks = s.svc.asks();
  BOOST_REQUIRE(asks.size() == 1u);
  BOOST_TEST(asks[0].sql == "DELETE FROM orders");
  BOOST_TEST(asks[0].question == "DELETE FROM orders");
  BOOST_TEST((asks[0].force_route == domain::route_kind::data));
  BOOST_TEST(asks[0].path == "/mcp");
  o = m.tool("query_sales", {{"sql", "SELECT count(*) AS n FROM orders"}});
  auto& ok = o.at("result").as_object();
  BOOST_TEST(!ok.at("isError").as_bool());
  BOOST_TEST(text_of(ok).find("[42]") != std::string::npos);
  BOOST_TEST(ok.at("structuredContent").at("sql").at("rowCount").as_int64()
             == 1);
}

BOOST_AUTO_TEST_CASE(search_catalog_and_resources) {
  running_server s;
  mcp_client m{s.port};
  m.initialize();
  auto o = m.tool("search_documents", {{"query", "refunds"}, {"k", 3}});
  auto& res = o.at("result").as_object();
  BOOST_TEST(!res.at("isError").as_bool());
  auto& found = res.at("structuredContent").at("results").as_array();
  BOOST_REQUIRE(found.size() == 3u);
  BOOST_TEST(found[0].at("chunkId").as_string() == "refunds#policy-1");
  BOOST_TEST(found[1].at("score").as_double() == 0.5);
  BOOST_TEST((s.svc.searches() == std::vector<std::string>{"refunds"}));
  o = m.tool("describe_catalog", {});
  BOOST_TEST(o.at("result")
               .at("structuredContent")
               .at("tables")
               .at(0)
               .at("name")
               .as_string()
             == "orders");
  auto r = m.call("resources/list");
  auto list = body_of(r).at("result").at("resources").as_array();
  BOOST_REQUIRE(list.size() == 2u);
  r = m.call("resources/read", {{"uri", "candor://documents"}});
  auto contents = body_of(r).at("result").at("contents").as_array();
  BOOST_REQUIRE(contents.size() == 1u);
  BOOST_TEST(contents[0].at("uri").as_string() == "candor://documents");
  BOOST_TEST(contents[0].at("mimeType").as_string() == "application/json");
  BOOST_TEST(json::parse(contents[0].at("text").as_string())
               .at("documents")
               .at(0)
               .at("slug")
               .as_string()
             == "refunds");
  r = m.call("resources/read", {{"uri", "candor://secrets"}});
  BOOST_TEST(error_code(r) == -32002);
  r = m.call("resources/read", {});
  BOOST_TEST(error_code(r) == -32602);
}

BOOST_AUTO_TEST_SUITE_END()
