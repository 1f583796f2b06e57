// Tests of the router and rag_answer reply contracts: valid replies, listed
// problems, fences, duplicate and unknown fields, bounds.

#include "domain/model/contracts.hpp"

#include <boost/test/unit_test.hpp>

using namespace candor::domain;

BOOST_AUTO_TEST_SUITE(domain_contracts)

BOOST_AUTO_TEST_CASE(valid_router_reply) {
  auto r
    = parse_router_reply(R"({"route":"docs","reason":"asks about returns"})");
  BOOST_REQUIRE(r);
  BOOST_CHECK(r->route == route_kind::docs);
  BOOST_CHECK_EQUAL(r->reason, "asks about returns");
}

BOOST_AUTO_TEST_CASE(invalid_router_replies_list_their_problems) {
  auto r = parse_router_reply("not json");
  BOOST_REQUIRE(!r);
  BOOST_CHECK_EQUAL(r.err().code, ec::llm_parse_failed);
  r = parse_router_reply(R"({"route":"weather","reason":"x"})");
  BOOST_REQUIRE(!r);
  BOOST_CHECK(r.err().message.find("'route'") != std::string::npos);
  BOOST_CHECK(r.err().message.find("'reason'") != std::string::npos);
  r = parse_router_reply(R"({"route":"data","reason":"fine","extra":1})");
  BOOST_REQUIRE(!r);
  BOOST_CHECK(r.err().message.find("extra") != std::string::npos);
  r = parse_router_reply(R"(["docs"])");
  BOOST_REQUIRE(!r);
  r = parse_router_reply(R"({"route":"data","reason":")" + std::string(201, 'a')
                         + "\"}");
  BOOST_REQUIRE(!r);
}

BOOST_AUTO_TEST_CASE(a_fenced_reply_is_read_like_the_sql_replies) {
  // Models wrap JSON in a Markdown fence even when asked not to; the SQL
  // parsers already read through it, the router re-asked.
  auto r = parse_router_reply(
    "```json\n{\"route\":\"docs\",\"reason\":\"asks about returns\"}\n```\n");
  BOOST_REQUIRE(r);
  BOOST_CHECK(r->route == route_kind::docs);
  auto rag = parse_rag_reply("```\n{\"refused\":true,\"confident\":false,"
                             "\"answer\":\"\",\"citedChunkIds\":[]}\n```");
  BOOST_CHECK(rag);
}

BOOST_AUTO_TEST_CASE(a_field_given_twice_is_no_decision) {
  // The JSON parser keeps the last "route"; a reader keeping the first
  // would see another decision. The reply is re-asked instead.
  auto r = parse_router_reply(
    R"({"route":"out_of_scope","route":"data","reason":"dup keys here"})");
  BOOST_REQUIRE(!r);
  BOOST_CHECK_EQUAL(r.err().code, ec::llm_parse_failed);
  BOOST_CHECK_EQUAL(r.err().message, "field 'route' appears more than once");
  auto rag = parse_rag_reply(R"({"refused":true,"confident":false,"answer":"",)"
                             R"("citedChunkIds":[],"refused":false})");
  BOOST_REQUIRE(!rag);
  BOOST_CHECK_EQUAL(rag.err().message,
                    "field 'refused' appears more than once");
}

BOOST_AUTO_TEST_CASE(unknown_field_names_are_cut_for_the_re_ask) {
  // The problems go back to the model in the re-ask: a 39 KB key was sent
  // back whole.
  std::string key(39000, 'k');
  auto r = parse_router_reply(R"({"route":"docs","reason":"fine",")" + key
                              + R"(":1})");
  BOOST_REQUIRE(!r);
  BOOST_CHECK_EQUAL(r.err().message,
                    "unknown field '" + std::string(40, 'k') + "'");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(domain_rag_contract)

BOOST_AUTO_TEST_CASE(valid_rag_replies) {
  auto r = parse_rag_reply(
    R"({"refused":false,"confident":true,"answer":"30 days.",)"
    R"("citedChunkIds":["faq#returns-1","faq#returns-2"]})");
  BOOST_REQUIRE(r);
  BOOST_CHECK(!r->refused);
  BOOST_CHECK(r->confident);
  BOOST_CHECK_EQUAL(r->answer, "30 days.");
  BOOST_REQUIRE_EQUAL(r->cited_chunk_ids.size(), 2u);
  BOOST_CHECK_EQUAL(r->cited_chunk_ids[1], "faq#returns-2");
  // A refusal may come without an answer or citations.
  r = parse_rag_reply(
    R"({"refused":true,"confident":false,"answer":"","citedChunkIds":[]})");
  BOOST_REQUIRE(r);
  BOOST_CHECK(r->refused);
}

BOOST_AUTO_TEST_CASE(invalid_rag_replies_list_their_problems) {
  auto bad = [](std::string_view text, std::string_view expect) {
    auto r = parse_rag_reply(text);
    BOOST_REQUIRE_MESSAGE(!r, "accepted: " << text);
    BOOST_CHECK_EQUAL(r.err().code, ec::llm_parse_failed);
    BOOST_CHECK_MESSAGE(r.err().message.find(expect) != std::string::npos,
                        r.err().message << " lacks " << expect);
  };
  bad("Sure! The answer is 30 days.", "not valid JSON");
  bad(R"(["refused"])", "JSON object");
  bad(R"({"refused":"no","confident":true,"answer":"x","citedChunkIds":[]})",
      "'refused' (boolean)");
  bad(R"({"refused":false,"answer":"x","citedChunkIds":[]})",
      "'confident' (boolean)");
  bad(R"({"refused":false,"confident":true,"answer":"","citedChunkIds":[]})",
      "must not be empty");
  bad(R"({"refused":false,"confident":true,"answer":"x","citedChunkIds":"a"})",
      "'citedChunkIds'");
  bad(R"({"refused":false,"confident":true,"answer":"x","citedChunkIds":[1]})",
      "must be strings");
  bad(R"({"refused":false,"confident":true,"answer":"x","citedChunkIds":[""]})",
      "1 to 200 characters");
  bad(R"({"refused":false,"confident":true,"answer":"x","citedChunkIds":[],)"
      R"("extra":1})",
      "unknown field 'extra'");
}

BOOST_AUTO_TEST_CASE(rag_replies_are_bounded) {
  std::string long_answer(2001, 'a');
  auto r = parse_rag_reply(R"({"refused":false,"confident":true,"answer":")"
                           + long_answer + R"(","citedChunkIds":["a#b-1"]})");
  BOOST_REQUIRE(!r);
  BOOST_CHECK(r.err().message.find("at most 2000") != std::string::npos);
  // 2000 multi-byte characters are fine (characters, not bytes).
  std::string euros;
  for (int i = 0; i < 2000; ++i)
    euros += "\u20ac";
  r = parse_rag_reply(R"({"refused":false,"confident":true,"answer":")" + euros
                      + R"(","citedChunkIds":["a#b-1"]})");
  BOOST_CHECK(r);
  std::string ids;
  for (int i = 0; i < 9; ++i)
    ids += std::string{i ? "," : ""} + "\"id" + std::to_string(i) + "\"";
  r = parse_rag_reply(R"({"refused":false,"confident":true,"answer":"x",)"
                      R"("citedChunkIds":[)"
                      + ids + "]}");
  BOOST_REQUIRE(!r);
  BOOST_CHECK(r.err().message.find("at most 8") != std::string::npos);
  std::string huge(20000, ' ');
  r = parse_rag_reply("{" + huge + "}");
  BOOST_REQUIRE(!r);
  BOOST_CHECK(r.err().message.find("longer than") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
