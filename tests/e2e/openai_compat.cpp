// End-to-end: the OpenAI-compatible endpoint of the real `candor serve`
// (local provider, loopback): /v1/models, chat completions streamed and
// not, the same input guard as /ask, errors in OpenAI's shape; and the
// official `openai` npm client against it (tests/clients/openai/check.mjs).

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/openai_stub.hpp"
#include "tests/support/process.hpp"
#include "tests/support/questions.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

const std::map<std::string, std::string> local_env{
  {"CANDOR_LLM_PROVIDER", "local"}};

constexpr auto docs_q = "How much does a basic service cost in the workshop?";
constexpr auto data_q
  = "How many e-bikes did we sell in Belgium per quarter in 2024?";

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

std::string str(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : std::string{};
}

struct started_server {
  server_process proc;
  started_server() : proc(local_env) {
    BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n"
                                          << proc.log());
  }
};

std::optional<http_response> chat(http_client& c, std::string_view body) {
  return c.request("POST", "/v1/chat/completions", body,
                   {{"Content-Type", "application/json"}});
}

std::string chat_body(std::string_view question, bool stream = false) {
  json::object o{{"model", "candor"},
                 {"messages", json::array{json::object{
                                {"role", "user"}, {"content", question}}}}};
  if (stream)
    o["stream"] = true;
  return json::serialize(o);
}

/// `{"error":{"message","type","param","code"}}` and nothing else.
void check_openai_error(const std::optional<http_response>& r, int status,
                        std::string_view code, std::string_view param = {}) {
  BOOST_REQUIRE(r);
  BOOST_TEST_CONTEXT("body " << r->body) {
    BOOST_CHECK_EQUAL(r->status, status);
    BOOST_CHECK(!r->header("x-request-id").empty());
    auto o = parse_object(r->body);
    BOOST_CHECK_EQUAL(o.size(), 1u);
    BOOST_REQUIRE(o.at("error").is_object());
    auto& e = o.at("error").as_object();
    BOOST_CHECK_EQUAL(e.size(), 4u);
    BOOST_CHECK(!str(e.at("message")).empty());
    BOOST_CHECK_EQUAL(str(e.at("type")),
                      status >= 500 ? "server_error" : "invalid_request_error");
    BOOST_CHECK_EQUAL(str(e.at("code")), code);
    if (!param.empty())
      BOOST_CHECK_EQUAL(str(e.at("param")), param);
  }
}

/// The `data:` payloads of an SSE body, in order.
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < body.size()) {
    auto end = body.find("\n\n", at);
    BOOST_REQUIRE_MESSAGE(end != std::string::npos, "unterminated event");
    auto event = body.substr(at, end - at);
    BOOST_REQUIRE_MESSAGE(event.rfind("data: ", 0) == 0, event);
    out.push_back(event.substr(6));
    at = end + 2;
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_openai_compat)

BOOST_AUTO_TEST_CASE(models_completions_and_streams) {
  started_server s;
  http_client c{s.proc.port()};
  BOOST_REQUIRE(c.connected());

  auto r = c.request("GET", "/v1/models");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  auto o = parse_object(r->body);
  BOOST_CHECK_EQUAL(str(o.at("object")), "list");
  auto& data = o.at("data").as_array();
  BOOST_REQUIRE_EQUAL(data.size(), 1u);
  BOOST_CHECK_EQUAL(str(data[0].at("id")), "candor");
  BOOST_CHECK_EQUAL(str(data[0].at("object")), "model");
  BOOST_CHECK_EQUAL(str(data[0].at("owned_by")), "candor");
  BOOST_CHECK_GT(data[0].at("created").as_int64(), 1'600'000'000);
  r = c.request("GET", "/v1/models/candor");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  BOOST_CHECK_EQUAL(str(parse_object(r->body).at("id")), "candor");
  check_openai_error(c.request("GET", "/v1/models/gpt-4o"), 404,
                     "model_not_found", "model");

  // A data answer: the answer, the SQL in a fence, the rows as a table.
  r = chat(c, chat_body(data_q));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  BOOST_CHECK(r->header("content-type").find("application/json") == 0);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(str(o.at("object")), "chat.completion");
  BOOST_CHECK_EQUAL(str(o.at("model")), "candor");
  BOOST_CHECK_EQUAL(str(o.at("id")), "chatcmpl-" + r->header("x-request-id"));
  auto& choice = o.at("choices").as_array().at(0).as_object();
  BOOST_CHECK_EQUAL(choice.at("index").as_int64(), 0);
  BOOST_CHECK_EQUAL(str(choice.at("finish_reason")), "stop");
  BOOST_CHECK_EQUAL(str(choice.at("message").at("role")), "assistant");
  auto content = str(choice.at("message").at("content"));
  BOOST_TEST_CONTEXT(content) {
    BOOST_CHECK(content.find("2024-Q2 100") != std::string::npos);
    BOOST_CHECK(content.find("\n\n```sql\nSELECT ") != std::string::npos);
    BOOST_CHECK(content.find("| quarter | units |\n| --- | --- |\n"
                             "| 2024-Q1 | 28 |")
                != std::string::npos);
  }
  auto& usage = o.at("usage").as_object();
  BOOST_CHECK_EQUAL(usage.at("total_tokens").as_int64(),
                    usage.at("prompt_tokens").as_int64()
                      + usage.at("completion_tokens").as_int64());
  BOOST_CHECK_EQUAL(str(o.at("candor").at("status")), "answered");
  BOOST_CHECK_EQUAL(str(o.at("candor").at("route")), "data");

  // A documents answer, not streamed and streamed: the same content.
  r = chat(c, chat_body(docs_q));
  BOOST_REQUIRE(r);
  auto plain
    = str(parse_object(r->body).at("choices").as_array().at(0).at("message").at(
      "content"));
  BOOST_CHECK(plain.find("**Sources**\n\n1. ") != std::string::npos);
  BOOST_CHECK(plain.find("(`workshop-services") != std::string::npos);
  r = chat(c, chat_body(docs_q, true));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  BOOST_CHECK(r->header("content-type").find("text/event-stream") == 0);
  auto events = sse_data(r->body);
  BOOST_REQUIRE_GE(events.size(), 4u);
  BOOST_CHECK_EQUAL(events.back(), "[DONE]");
  std::string joined;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    auto ch = parse_object(events[i]);
    BOOST_CHECK_EQUAL(str(ch.at("object")), "chat.completion.chunk");
    BOOST_CHECK_EQUAL(str(ch.at("id")),
                      "chatcmpl-" + r->header("x-request-id"));
    auto& delta = ch.at("choices").as_array().at(0).at("delta").as_object();
    auto& finish = ch.at("choices").as_array().at(0).at("finish_reason");
    if (i == 0)
      BOOST_CHECK_EQUAL(str(delta.at("role")), "assistant");
    if (i + 2 == events.size())
      BOOST_CHECK_EQUAL(str(finish), "stop");
    else
      BOOST_CHECK(finish.is_null());
    if (auto it = delta.find("content"); it != delta.end())
      joined += str(it->value());
  }
  BOOST_CHECK_EQUAL(joined, plain);

  // The input guard is the same as /ask's: blocked, said plainly, 200.
  r = chat(c, chat_body(injection_q));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  o = parse_object(r->body);
  BOOST_CHECK_EQUAL(str(o.at("candor").at("status")), "blocked");
  BOOST_CHECK_EQUAL(str(o.at("candor").at("blockedBy")), "input_rules");
  BOOST_CHECK(o.at("candor").at("route").is_null());
  auto blocked
    = str(o.at("choices").as_array().at(0).at("message").at("content"));
  BOOST_CHECK(blocked.rfind("**Blocked** by candor's input_rules layer.", 0)
              == 0);
  // ... and recorded in the ledger like any question, with its path.
  auto id = str(o.at("candor").at("requestId"));
  std::optional<http_response> run;
  for (int i = 0; i < 100; ++i) { // the ledger's writer thread is async
    run = c.request("GET", "/runs/" + id);
    if (run && run->status == 200)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  BOOST_REQUIRE(run);
  BOOST_REQUIRE_EQUAL(run->status, 200);
  auto stored = parse_object(run->body);
  auto& row = stored.at("request").as_object();
  BOOST_CHECK_EQUAL(str(row.at("path")), "/v1/chat/completions");
  BOOST_CHECK_EQUAL(str(row.at("status")), "blocked");
  BOOST_CHECK_EQUAL(str(row.at("question")), injection_q);
}

BOOST_AUTO_TEST_CASE(errors_take_openai_shape) {
  started_server s;
  http_client c{s.proc.port()};
  BOOST_REQUIRE(c.connected());
  auto user = [](std::string content) {
    return R"({"role":"user","content":)" + content + "}";
  };
  auto body = [](std::string messages, std::string extra = {}) {
    return R"({"model":"candor","messages":)" + messages + extra + "}";
  };
  check_openai_error(chat(c, "{\"model\": "), 400, "invalid_request");
  check_openai_error(chat(c, "[]"), 400, "invalid_request");
  check_openai_error(chat(c, R"({"model":"candor"})"), 400, "invalid_request",
                     "messages");
  check_openai_error(chat(c, body("[]")), 400, "invalid_request", "messages");
  check_openai_error(chat(c, body("{}")), 400, "invalid_request", "messages");
  std::string many = "[";
  for (int i = 0; i < 257; ++i)
    many += (i ? "," : "") + user("\"hi there\"");
  check_openai_error(chat(c, body(many + "]")), 400, "invalid_request",
                     "messages");
  check_openai_error(
    chat(c, body(R"([{"role":"system","content":"be brief"}])")), 400,
    "invalid_request", "messages");
  check_openai_error(
    chat(c, body(R"([{"role":"wizard","content":"be brief"}])")), 400,
    "invalid_request", "messages[0].role");
  check_openai_error(chat(c, body("[" + user("42") + "]")), 400,
                     "invalid_request", "messages[0].content");
  check_openai_error(
    chat(c, body("[" + user(R"([{"type":"image_url","image_url":{}}])") + "]")),
    400, "invalid_request", "messages[0].content[0].type");
  check_openai_error(chat(c, body("[" + user("\"  a \"") + "]")), 400,
                     "invalid_request", "messages[0].content");
  check_openai_error(
    chat(c, body("[" + user("\"" + std::string(501, 'a') + "\"") + "]")), 400,
    "invalid_request", "messages[0].content");
  check_openai_error(
    chat(c, body("[" + user("\"hi there\"") + "]", ",\"n\":2")), 400,
    "invalid_request", "n");
  check_openai_error(
    chat(c, body("[" + user("\"hi there\"") + "]", ",\"stream\":\"yes\"")), 400,
    "invalid_request", "stream");
  check_openai_error(
    chat(c, R"({"messages":[{"role":"user","content":"hi there"}]})"), 400,
    "invalid_request", "model");
  check_openai_error(
    chat(
      c,
      R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi there"}]})"),
    404, "model_not_found", "model");
  check_openai_error(
    chat(c, R"({"model":"candor","model":"candor","messages":[]})"), 400,
    "invalid_request", "model");

  // The HTTP layer's own errors on /v1 paths take the same shape.
  auto r = c.request("GET", "/v1/chat/completions");
  check_openai_error(r, 405, "method_not_allowed");
  BOOST_CHECK_EQUAL(r->header("allow"), "POST");
  check_openai_error(c.request("POST", "/v1/chat/completions",
                               chat_body(docs_q),
                               {{"Content-Type", "text/plain"}}),
                     415, "unsupported_media_type");
  check_openai_error(c.request("GET", "/v1/embeddings"), 404, "not_found");
  http_client big{s.proc.port()};
  // The chat body limit (http.chatBodyLimitBytes) is larger than /ask's:
  // a conversation is resent whole.
  std::string history = "[";
  for (int i = 0; i < 10; ++i)
    history += user("\"" + std::string(2000, 'h') + "\"") + ",";
  auto long_chat
    = chat(c, body(history + user("\"" + std::string(docs_q) + "\"") + "]"));
  BOOST_REQUIRE(long_chat);
  BOOST_CHECK_EQUAL(long_chat->status, 200);
  check_openai_error(chat(big, chat_body(std::string(270000, 'a'))), 413,
                     "payload_too_large");
  // /ask keeps candor's own shape.
  r = c.ask("{}");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(str(parse_object(r->body).at("error")), "invalid_request");
}

// A chat client's earlier messages reach a model as a conversation's turns
// do: the newest conversations.historyTurns, each cut to maxTurnBytes.
BOOST_AUTO_TEST_CASE(earlier_messages_are_bounded_like_a_conversation) {
  openai_stub stub([](const stub_request&) {
    stub_reply r;
    r.content = R"({"route":"out_of_scope","reason":"Weather.",)"
                R"("standalone":"What is the weather in Lisbon tomorrow?"})";
    return r;
  });
  server_process proc{{{"CANDOR_LLM_BASE_URL", stub.base_url()},
                       {"CANDOR_LLM_API_KEY", "sk-chat-history-0001"},
                       {"CANDOR_LLM_MODEL", "gpt-4o-mini"},
                       {"CANDOR_CONVERSATIONS_HISTORY_TURNS", "2"},
                       {"CANDOR_CONVERSATIONS_MAX_TURN_BYTES", "256"}}};
  BOOST_REQUIRE_MESSAGE(proc.start(), "server did not start:\n" << proc.log());
  json::array messages;
  for (auto q : {"first earlier question about bikes",
                 "second earlier question about bikes",
                 "third earlier question about bikes"})
    messages.push_back(json::object{{"role", "user"}, {"content", q}});
  messages.push_back(
    json::object{{"role", "user"}, {"content", std::string(600, 'x')}});
  messages.push_back(json::object{
    {"role", "user"}, {"content", "What is the weather in Lisbon tomorrow?"}});
  http_client c{proc.port()};
  auto r = chat(c, json::serialize(json::object{{"model", "candor"},
                                                {"messages", messages}}));
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_MESSAGE(r->status == 200, r->status << " " << r->body);
  auto seen = stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 1u); // the router's call
  const auto& prompt = seen[0].user;
  BOOST_TEST_CONTEXT("router prompt: " << prompt) {
    size_t turns = 0;
    for (auto at = prompt.find("<turn>"); at != std::string::npos;
         at = prompt.find("<turn>", at + 1))
      ++turns;
    BOOST_TEST(turns == 2u);
    BOOST_TEST(prompt.find("third earlier question") != std::string::npos);
    BOOST_TEST(prompt.find("second earlier question") == std::string::npos);
    BOOST_TEST(prompt.find(std::string(256, 'x')) != std::string::npos);
    BOOST_TEST(prompt.find(std::string(257, 'x')) == std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// The official client. Its package is installed by conf/setup.sh (npm ci
// in tests/clients/openai); without it the test fails and says so.
BOOST_AUTO_TEST_SUITE(e2e_openai_client)

BOOST_AUTO_TEST_CASE(the_official_openai_npm_client) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path{domain::source_dir()} / "tests/clients/openai";
  auto node = find_in_path("node");
  BOOST_REQUIRE_MESSAGE(!node.empty(),
                        "node is not installed: run conf/setup.sh (it "
                        "installs nodejs and npm from conf/packages.txt)");
  BOOST_REQUIRE_MESSAGE(fs::exists(dir / "node_modules/openai/package.json"),
                        "the openai npm client is not installed: run "
                        "conf/setup.sh, or: npm ci --prefix "
                          << dir.string());
  started_server s;
  auto base = "http://127.0.0.1:" + std::to_string(s.proc.port()) + "/v1";
  auto r = run_program(node, {(dir / "check.mjs").string(), base}, {},
                       std::chrono::seconds{120});
  BOOST_TEST_MESSAGE(r.out);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, "check.mjs exited with "
                                          << r.exit_code << ":\n"
                                          << r.err << r.out);
}

BOOST_AUTO_TEST_SUITE_END()
