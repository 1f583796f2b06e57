// Tests of the OpenAI-compatible endpoint's JSON: the chat body parser, the
// Markdown of an answer, the completion, its SSE chunks and the error shape.

#include "domain/api/openai_json.hpp"

#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

using namespace candor;
using namespace candor::domain;
namespace json = boost::json;

namespace {

std::string msgs(std::string list, std::string extra = {}) {
  return R"({"model":"candor","messages":)" + list + extra + "}";
}

error parse_error(std::string_view body) {
  auto r = openai::parse_chat_body(body);
  BOOST_REQUIRE_MESSAGE(!r.ok(), body);
  return r.err();
}

std::string first_path(std::string_view body) {
  auto e = parse_error(body);
  BOOST_REQUIRE(!e.issues.empty());
  return e.issues.front().path;
}

ask_state data_state() {
  ask_state st;
  st.request.request_id = "req-12345678";
  st.status = status_kind::answered;
  st.route = route_kind::data;
  st.answer = "Two rows.";
  st.has_sql = true;
  st.sql.query = "SELECT a, b FROM t";
  st.sql.columns = {"a", "b|c"};
  for (int i = 0; i < 25; ++i)
    st.sql.rows.push_back(
      {cell{cell::text, 0, 0, "x|y\nz"}, cell{cell::integer, i, 0, {}}});
  st.sql.row_count = 25;
  st.usage.tokens_in = 7;
  st.usage.tokens_out = 5;
  return st;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_openai_json)

BOOST_AUTO_TEST_CASE(the_last_user_message_is_the_question) {
  auto r = openai::parse_chat_body(msgs(
    R"([{"role":"system","content":"be brief"},
        {"role":"user","content":"first question"},
        {"role":"assistant","content":null},
        {"role":"user","content":[{"type":"text","text":"  second"},
                                  {"type":"text","text":"part  "}]}])",
    R"(,"stream":true,"stream_options":{"include_usage":true},"n":1,
       "temperature":0.2,"max_tokens":100)"));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->ask.question == "second\npart");
  BOOST_TEST(r->stream);
  BOOST_TEST(r->stream_usage);
  BOOST_TEST(r->earlier_messages == 3u);
}

BOOST_AUTO_TEST_CASE(bad_bodies_name_the_field) {
  BOOST_TEST(parse_error("{").message == "body is not valid JSON");
  BOOST_TEST(first_path("[]") == "");
  BOOST_TEST(first_path(R"({"messages":[]})") == "model");
  BOOST_TEST(first_path(msgs("[]")) == "messages");
  BOOST_TEST(first_path(msgs(R"({"role":"user"})")) == "messages");
  BOOST_TEST(first_path(msgs(R"([{"role":"system","content":"hello"}])"))
             == "messages");
  BOOST_TEST(first_path(msgs(R"([1])")) == "messages[0]");
  BOOST_TEST(first_path(msgs(R"([{"role":"bot","content":"hello"}])"))
             == "messages[0].role");
  BOOST_TEST(first_path(msgs(R"([{"role":"user","content":null}])"))
             == "messages[0].content");
  BOOST_TEST(first_path(msgs(R"([{"role":"user"}])")) == "messages[0].content");
  BOOST_TEST(
    first_path(msgs(R"([{"role":"user","content":[{"type":"image_url"}]}])"))
    == "messages[0].content[0].type");
  BOOST_TEST(
    first_path(msgs(R"([{"role":"user","content":[{"type":"text"}]}])"))
    == "messages[0].content[0].text");
  BOOST_TEST(first_path(msgs(R"([{"role":"user","content":"hello","name":3}])"))
             == "messages[0].name");
  BOOST_TEST(first_path(msgs(R"([{"role":"user","content":"hi"}])"))
             == "messages[0].content");
  BOOST_TEST(
    first_path(msgs(R"([{"role":"user","content":"hello"}])", R"(,"n":3)"))
    == "n");
  BOOST_TEST(
    first_path(msgs(R"([{"role":"user","content":"hello"}])", R"(,"stream":1)"))
    == "stream");
  BOOST_TEST(first_path(msgs(R"([{"role":"user","content":"hello"}])",
                             R"(,"stream_options":{"include_usage":"y"})"))
             == "stream_options.include_usage");
  BOOST_TEST(first_path(R"({"model":"candor","model":"candor","messages":[]})")
             == "model");
  std::string many = "[";
  for (int i = 0; i < 257; ++i)
    many += std::string{i ? "," : ""} + R"({"role":"user","content":"hello"})";
  BOOST_TEST(first_path(msgs(many + "]")) == "messages");
  // Text bounded in all, beyond the body limit of the HTTP layer.
  openai::chat_limits lim;
  lim.max_text_bytes = 10;
  auto r = openai::parse_chat_body(
    msgs(R"([{"role":"user","content":"hello there"}])"), lim);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().issues.front().path == "messages");
}

BOOST_AUTO_TEST_CASE(an_unknown_model_is_model_not_found) {
  auto e = parse_error(
    R"({"model":"gpt-4o","messages":[{"role":"user","content":"hello"}]})");
  BOOST_TEST((e.code == ec::not_found));
  auto body = json::parse(openai::error_body(e)).as_object();
  auto& err = body.at("error").as_object();
  BOOST_TEST(err.at("code").as_string() == "model_not_found");
  BOOST_TEST(err.at("param").as_string() == "model");
  BOOST_TEST(err.at("type").as_string() == "invalid_request_error");
  BOOST_TEST(std::string{err.at("message").as_string()}.find("gpt-4o")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_error_shape) {
  auto e = make_error(ec::invalid_request, "request body failed validation");
  e.issues.push_back({"messages[1].role", "must be one of ..."});
  e.issues.push_back({"n", "only 1 choice is supported"});
  auto o = json::parse(openai::error_body(e)).as_object();
  BOOST_TEST(o.size() == 1u);
  auto& err = o.at("error").as_object();
  BOOST_TEST(err.size() == 4u);
  BOOST_TEST(err.at("param").as_string() == "messages[1].role");
  BOOST_TEST(err.at("code").as_string() == "invalid_request");
  BOOST_TEST(std::string{err.at("message").as_string()}.find("n: only 1 choice")
             != std::string::npos);
  auto busy = json::parse(openai::error_body(
                            make_error(ec::overloaded, "too many requests")))
                .at("error");
  BOOST_TEST(busy.at("type").as_string() == "server_error");
  BOOST_TEST(busy.at("param").is_null());
  auto auth = json::parse(openai::error_body(
                            make_error(ec::unauthorized, "a key is needed")))
                .at("error");
  BOOST_TEST(auth.at("type").as_string() == "authentication_error");
}

BOOST_AUTO_TEST_CASE(data_answers_render_sql_and_a_bounded_table) {
  auto md = openai::render_markdown(data_state(), 20);
  BOOST_TEST(md.starts_with("Two rows.\n\n```sql\nSELECT a, b FROM t\n```"));
  BOOST_TEST(md.find("| a | b\\|c |\n| --- | --- |\n| x\\|y z | 0 |")
             != std::string::npos);
  BOOST_TEST(md.find("| x\\|y z | 19 |") != std::string::npos);
  BOOST_TEST(md.find("| x\\|y z | 20 |") == std::string::npos);
  BOOST_TEST(md.ends_with("_20 of 25 rows shown._"));
}

BOOST_AUTO_TEST_CASE(sources_and_statuses) {
  ask_state st;
  st.status = status_kind::answered;
  st.answer = "Thirty days.";
  st.citations.push_back(
    {"returns#policy-1", "Returns", "Policy", 0.5, "", false});
  st.citations.push_back({"faq#x-2", "FAQ", "", 0.4, "", false});
  auto md = openai::render_markdown(st);
  BOOST_TEST(md
             == "Thirty days.\n\n**Sources**\n\n"
                "1. Returns \xE2\x80\xBA Policy (`returns#policy-1`)\n"
                "2. FAQ (`faq#x-2`)");
  ask_state blocked;
  blocked.status = status_kind::blocked;
  blocked.blocked_by = layer_kind::input_rules;
  blocked.answer = "This request was blocked.";
  BOOST_TEST(openai::render_markdown(blocked).starts_with(
    "**Blocked** by candor's input_rules layer.\n\nThis request"));
  ask_state refused;
  refused.status = status_kind::refused;
  BOOST_TEST(openai::render_markdown(refused).starts_with("**Refused**"));
}

BOOST_AUTO_TEST_CASE(the_stream_carries_the_completion_content) {
  auto st = data_state();
  st.answer = "Caf\xC3\xA9 \xE2\x82\xAC" + std::string(100, 'x'); // é, €
  auto body = json::parse(openai::completion_body(st, 1700000000));
  auto content = std::string{
    body.at("choices").at(0).at("message").at("content").as_string()};
  BOOST_TEST(body.at("id").as_string() == "chatcmpl-req-12345678");
  BOOST_TEST(body.at("usage").at("total_tokens").as_int64() == 12);
  BOOST_TEST(body.at("candor").at("route").as_string() == "data");

  auto sse = openai::completion_stream(st, 1700000000, true, 8);
  BOOST_TEST(sse.ends_with("\n\ndata: [DONE]\n\n"));
  std::string joined;
  size_t events = 0;
  bool saw_usage = false;
  for (size_t at = 0; at < sse.size();) {
    auto end = sse.find("\n\n", at);
    BOOST_REQUIRE(end != std::string::npos);
    auto data = sse.substr(at + 6, end - at - 6);
    at = end + 2;
    if (data == "[DONE]")
      break;
    ++events;
    auto o = json::parse(data); // every piece is valid UTF-8 JSON
    auto& choices = o.at("choices").as_array();
    if (choices.empty()) {
      saw_usage = o.at("usage").at("total_tokens").as_int64() == 12;
      continue;
    }
    auto& delta = choices.at(0).at("delta").as_object();
    if (auto it = delta.find("content"); it != delta.end())
      joined += it->value().as_string();
  }
  BOOST_TEST(joined == content);
  BOOST_TEST(saw_usage);
  BOOST_TEST(events > content.size() / 16);
}

BOOST_AUTO_TEST_CASE(models) {
  auto o = json::parse(openai::models_body(42));
  BOOST_TEST(o.at("object").as_string() == "list");
  BOOST_TEST(o.at("data").at(0).at("id").as_string() == "candor");
  BOOST_TEST(o.at("data").at(0).at("created").as_int64() == 42);
  BOOST_TEST(openai::is_openai_path("/v1/models"));
  BOOST_TEST(openai::is_openai_path("/v1"));
  BOOST_TEST(!openai::is_openai_path("/v10"));
  BOOST_TEST(!openai::is_openai_path("/ask"));
}

BOOST_AUTO_TEST_SUITE_END()
