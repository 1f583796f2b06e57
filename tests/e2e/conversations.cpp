// End-to-end: conversations on the real `candor serve` with the local
// provider. A follow-up is read against the turn before it (the previous
// plan changed by the follow-up) and shown in the response and the trace;
// GET /conversations/{id} lists the turns; an unknown id, or another
// key's, is a 404; the bounds of conversations.* hold.

#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"
#include "tests/support/questions.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

std::string str(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : std::string{};
}

std::string turn_body(std::string_view q, std::string_view conversation) {
  json::object o{{"question", q}};
  if (!conversation.empty())
    o["conversationId"] = conversation;
  return json::serialize(o);
}

/// POST /ask; the response object (status 200 required).
json::object say(http_client& c, std::string_view q,
                 std::string_view conversation = {},
                 const header_list& headers = {}) {
  auto r = c.ask(turn_body(q, conversation), headers);
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_MESSAGE(r->status == 200, r->status << " " << r->body);
  return parse_object(r->body);
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_conversations)

BOOST_AUTO_TEST_CASE(a_follow_up_is_read_against_the_turn_before) {
  server_process proc{{{"CANDOR_LLM_PROVIDER", "local"}}};
  BOOST_REQUIRE_MESSAGE(proc.start(), proc.log());
  http_client c{proc.port(), std::chrono::milliseconds{20000}};
  auto first = say(c, "revenue by channel in 2025");
  BOOST_TEST(str(first.at("status")) == "answered");
  BOOST_TEST(str(first.at("route")) == "data");
  BOOST_TEST(first.at("standaloneQuestion").is_null());
  auto id = str(first.at("conversationId"));
  BOOST_REQUIRE_EQUAL(id.size(), 34u);
  // A period changed.
  auto second = say(c, "and 2024?", id);
  BOOST_TEST(str(second.at("conversationId")) == id);
  BOOST_TEST(str(second.at("status")) == "answered");
  BOOST_TEST(str(second.at("route")) == "data");
  auto standalone = str(second.at("standaloneQuestion"));
  BOOST_TEST(has(standalone, "2024"), standalone);
  BOOST_TEST(has(standalone, "channel"), standalone);
  auto sql = str(second.at("sql").as_object().at("query"));
  BOOST_TEST(has(sql, "2024"), sql);
  BOOST_TEST(!has(sql, "2025-01-01"), sql);
  // The trace says how the router read it.
  bool traced = false;
  for (auto& step : second.at("meta").as_object().at("trace").as_array())
    traced = traced
             || has(str(step.as_object().at("outcome")), "follow-up: ");
  BOOST_TEST(traced);
  // A ranking on top of that: read against the second turn's reading.
  auto third = say(c, "top 2 only", id);
  BOOST_TEST(str(third.at("status")) == "answered");
  auto ranked = str(third.at("standaloneQuestion"));
  BOOST_TEST(has(ranked, "2024"), ranked);
  BOOST_TEST(has(str(third.at("sql").as_object().at("query")), "LIMIT 2"));
  // A question of its own in the same conversation stands alone.
  auto docs = say(c, "How much does a basic service cost in the workshop?", id);
  BOOST_TEST(str(docs.at("route")) == "docs");
  BOOST_TEST(docs.at("standaloneQuestion").is_null());
  // The conversation as the ledger keeps it.
  auto r = c.request("GET", "/conversations/" + id);
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  auto conv = parse_object(r->body);
  BOOST_TEST(str(conv.at("conversationId")) == id);
  auto& turns = conv.at("turns").as_array();
  BOOST_REQUIRE_EQUAL(turns.size(), 4u);
  BOOST_TEST(str(turns[0].as_object().at("question"))
             == "revenue by channel in 2025");
  BOOST_TEST(str(turns[1].as_object().at("standaloneQuestion")) == standalone);
  BOOST_TEST(str(turns[1].as_object().at("requestId"))
             == str(second.at("requestId")));
  BOOST_TEST(has(str(turns[2].as_object().at("sql")), "LIMIT 2"));
  // Two questions without an id are two conversations.
  auto other = say(c, "revenue by channel in 2025");
  BOOST_TEST(str(other.at("conversationId")) != id);
}

BOOST_AUTO_TEST_CASE(unknown_and_malformed_ids_and_the_bounds) {
  server_process proc{{{"CANDOR_LLM_PROVIDER", "local"},
                       {"CANDOR_CONVERSATIONS_MAX_TURNS", "2"}}};
  BOOST_REQUIRE_MESSAGE(proc.start(), proc.log());
  http_client c{proc.port(), std::chrono::milliseconds{20000}};
  // An id candor never handed out: 404, before any model call.
  auto r = c.ask(turn_body("and in 2024?", "c_00000000000000000000000000000000"));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  BOOST_TEST(str(parse_object(r->body).at("error")) == "not_found");
  r = c.request("GET", "/conversations/c_00000000000000000000000000000000");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  r = c.request("GET", "/conversations/nope");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 404);
  // Not an id at all: a 400 naming the field.
  r = c.ask(turn_body("and in 2024?", "123"));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 400);
  BOOST_TEST(has(r->body, "conversationId"));
  // conversations.maxTurns: the oldest turns go.
  auto id = str(say(c, "revenue in 2025").at("conversationId"));
  say(c, "and 2024?", id);
  auto last = say(c, "by channel", id);
  BOOST_TEST(has(str(last.at("standaloneQuestion")), "2024"));
  r = c.request("GET", "/conversations/" + id);
  BOOST_REQUIRE(r);
  auto turns = parse_object(r->body).at("turns").as_array();
  BOOST_REQUIRE_EQUAL(turns.size(), 2u);
  BOOST_TEST(str(turns[0].as_object().at("question")) == "and 2024?");
  // A blocked turn is kept for the audit but not read as history: the
  // follow-up after it is read against the turn before it.
  auto blocked = say(c, injection_q, id);
  BOOST_TEST(str(blocked.at("status")) == "blocked");
  auto after = say(c, "and in 2023?", id);
  BOOST_TEST(has(str(after.at("standaloneQuestion")), "channel"));
  BOOST_TEST(has(str(after.at("standaloneQuestion")), "2023"));
}

BOOST_AUTO_TEST_SUITE_END()
