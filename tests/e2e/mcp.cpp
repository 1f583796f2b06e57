// End-to-end: the MCP endpoint of the real `candor serve` (local
// provider, loopback): caller SQL through the real statement policy,
// authorizer and sandbox, recorded in the ledger; and the official MCP
// TypeScript SDK client against it (tests/clients/mcp/check.mjs).

#include <filesystem>
#include <string>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

const std::map<std::string, std::string> local_env{
  {"CANDOR_LLM_PROVIDER", "local"}};

struct started_server {
  server_process proc;
  started_server() : proc(local_env) {
    BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n"
                                          << proc.log());
  }
};

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

/// A 2025-06-18 session over the test client.
struct session {
  http_client& c;
  std::string id;

  explicit session(http_client& client) : c(client) {
    auto r = post(R"({"jsonrpc":"2.0","id":1,"method":"initialize",)"
                  R"("params":{"protocolVersion":"2025-06-18",)"
                  R"("capabilities":{},"clientInfo":{"name":"e2e",)"
                  R"("version":"1"}}})");
    id = r.header("mcp-session-id");
    BOOST_REQUIRE_EQUAL(id.size(), 32u);
  }

  http_response post(const std::string& body) {
    header_list h{{"Content-Type", "application/json"},
                  {"Accept", "application/json, text/event-stream"}};
    if (!id.empty()) {
      h.emplace_back("Mcp-Session-Id", id);
      h.emplace_back("MCP-Protocol-Version", "2025-06-18");
    }
    auto r = c.request("POST", "/mcp", body, h);
    BOOST_REQUIRE(r);
    return *r;
  }

  json::object tool(std::string_view name, json::object args) {
    auto r = post(json::serialize(json::object{
      {"jsonrpc", "2.0"},
      {"id", 7},
      {"method", "tools/call"},
      {"params", json::object{{"name", name}, {"arguments", args}}}}));
    BOOST_REQUIRE_EQUAL(r.status, 200);
    return parse_object(r.body);
  }
};

std::string text_of(const json::object& o) {
  return std::string{
    o.at("result").at("content").at(0).at("text").as_string()};
}

/// GET /runs/{id}, waiting for the ledger's batch to be written.
std::string run_of(http_client& c, const std::string& id) {
  for (int i = 0; i < 50; ++i) {
    auto r = c.request("GET", "/runs/" + id);
    BOOST_REQUIRE(r);
    if (r->status == 200)
      return r->body;
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  return {};
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_mcp)

BOOST_AUTO_TEST_CASE(caller_sql_meets_the_same_layers_as_a_models) {
  started_server s;
  http_client c{s.proc.port()};
  BOOST_REQUIRE(c.connected());
  session m{c};
  // A write: the statement policy blocks it; never run.
  auto del = m.tool("query_sales", {{"sql", "DELETE FROM orders"}});
  BOOST_TEST_CONTEXT(json::serialize(del)) {
    BOOST_TEST(del.at("result").at("isError").as_bool());
    BOOST_TEST(text_of(del).find("sql_policy:") != std::string::npos);
    BOOST_TEST(
      del.at("result").at("structuredContent").at("blockedBy").as_string()
      == "sql_policy");
  }
  // Personal data: the authorizer denies the column.
  auto pii = m.tool("query_sales", {{"sql", "SELECT email FROM customers"}});
  BOOST_TEST_CONTEXT(json::serialize(pii)) {
    BOOST_TEST(pii.at("result").at("isError").as_bool());
    BOOST_TEST(text_of(pii).find("sql_authorizer:") != std::string::npos);
  }
  // A read: run in the sandbox, its LIMIT capped, the rows returned.
  auto ok = m.tool("query_sales",
                   {{"sql", "SELECT order_id FROM orders ORDER BY order_id "
                            "LIMIT 100000"}});
  BOOST_TEST_CONTEXT(json::serialize(ok)) {
    auto& res = ok.at("result").as_object();
    BOOST_TEST(!res.at("isError").as_bool());
    auto& sql = res.at("structuredContent").at("sql").as_object();
    BOOST_TEST(sql.at("rowCount").as_int64() == 200);
    BOOST_TEST(sql.at("limitApplied").as_bool());
    BOOST_TEST(sql.at("query").as_string().find("LIMIT 200")
               != std::string::npos);
  }
  // An unknown column: an error, never sent to a model for correction.
  auto bad = m.tool("query_sales", {{"sql", "SELECT nope FROM orders"}});
  BOOST_TEST(bad.at("result").at("isError").as_bool());
  BOOST_TEST(text_of(bad).find("nope") != std::string::npos);
  // Each is a request with its ledger row, trace and SQL audit.
  auto id = std::string{
    del.at("result").at("structuredContent").at("requestId").as_string()};
  auto run = run_of(c, id);
  BOOST_TEST_CONTEXT(run) {
    BOOST_TEST(run.find("sql_validate") != std::string::npos);
    BOOST_TEST(run.find("/mcp") != std::string::npos);
    BOOST_TEST(run.find("DELETE FROM orders") != std::string::npos);
  }
  // 2025-06-18: bad arguments are the JSON-RPC error -32602.
  auto r = m.post(R"({"jsonrpc":"2.0","id":8,"method":"tools/call",)"
                  R"("params":{"name":"query_sales","arguments":{"sql":1}}})");
  BOOST_TEST(parse_object(r.body).at("error").at("code").as_int64() == -32602);
}

BOOST_AUTO_TEST_SUITE_END()

// The official client. Its package is installed by conf/setup.sh (npm ci
// in tests/clients/mcp); without it the test fails and says so.
BOOST_AUTO_TEST_SUITE(e2e_mcp_client)

BOOST_AUTO_TEST_CASE(the_official_mcp_typescript_sdk) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path{domain::source_dir()} / "tests/clients/mcp";
  auto node = find_in_path("node");
  BOOST_REQUIRE_MESSAGE(!node.empty(),
                        "node is not installed: run conf/setup.sh (it "
                        "installs nodejs and npm from conf/packages.txt)");
  BOOST_REQUIRE_MESSAGE(
    fs::exists(dir / "node_modules/@modelcontextprotocol/sdk/package.json"),
    "the MCP SDK is not installed: run conf/setup.sh, or: npm ci --prefix "
      << dir.string());
  started_server s;
  auto url = "http://127.0.0.1:" + std::to_string(s.proc.port()) + "/mcp";
  auto r = run_program(node, {(dir / "check.mjs").string(), url}, {},
                       std::chrono::seconds{120});
  BOOST_TEST_MESSAGE(r.out);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, "check.mjs exited with "
                                          << r.exit_code << ":\n"
                                          << r.err << r.out);
}

BOOST_AUTO_TEST_SUITE_END()
