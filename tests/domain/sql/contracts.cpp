// Tests of the data branch's reply contracts: SQL replies, abstention,
// listed problems and answer replies.

#include "domain/sql/contracts.hpp"

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

using namespace candor::domain;

BOOST_AUTO_TEST_SUITE(domain_sql_contracts)

BOOST_AUTO_TEST_CASE(sql_reply_parses_query_and_follow_ups) {
  auto r = parse_sql_reply(
    R"({"sql": " SELECT 1 ", "followUps": ["And in 2025?"]})");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!r->abstained);
  BOOST_CHECK_EQUAL(r->sql, "SELECT 1");
  BOOST_REQUIRE_EQUAL(r->follow_ups.size(), 1u);
  r = parse_sql_reply("```json\n{\"sql\": \"SELECT 2\"}\n```");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->sql, "SELECT 2");
}

BOOST_AUTO_TEST_CASE(sql_reply_abstains) {
  auto r = parse_sql_reply("  NO_ANSWER\n");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->abstained);
  r = parse_sql_reply(R"({"sql": "NO_ANSWER"})");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->abstained);
  // Not the sentinel: a sentence that mentions it.
  BOOST_CHECK(!parse_sql_reply("I think NO_ANSWER").ok());
}

BOOST_AUTO_TEST_CASE(sql_reply_problems_are_listed) {
  auto r = parse_sql_reply(R"({"query": "SELECT 1", "followUps": "x"})");
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK(r.err().code == ec::llm_parse_failed);
  BOOST_CHECK(r.err().message.find("unknown field 'query'")
              != std::string::npos);
  BOOST_CHECK(r.err().message.find("'sql'") != std::string::npos);
  BOOST_CHECK(r.err().message.find("followUps") != std::string::npos);
  BOOST_CHECK(!parse_sql_reply(R"({"sql": ""})").ok());
  BOOST_CHECK(
    !parse_sql_reply(R"({"sql": "S", "followUps": ["a", "b", "c", "d"]})")
       .ok());
  BOOST_CHECK(
    !parse_sql_reply("{\"sql\": \"" + std::string(30000, 'x') + "\"}").ok());
  BOOST_CHECK(!parse_sql_reply("SELECT 1").ok());
}

BOOST_AUTO_TEST_CASE(answer_reply_needs_answer_and_follow_ups) {
  auto r = parse_sql_answer_reply(
    R"({"answer": "Web led.", "followUps": ["What about 2025?"]})");
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->answer, "Web led.");
  BOOST_CHECK(!parse_sql_answer_reply(R"({"answer": "Web led."})").ok());
  BOOST_CHECK(!parse_sql_answer_reply(
                 R"({"answer": "", "followUps": ["What about 2025?"]})")
                 .ok());
  BOOST_CHECK(
    !parse_sql_answer_reply(R"({"answer": "x", "followUps": []})").ok());
  BOOST_CHECK(!parse_sql_answer_reply("[1, 2]").ok());
}

BOOST_AUTO_TEST_CASE(schemas_are_json_objects_naming_the_contract_fields) {
  for (auto text : {sql_reply_schema, sql_answer_schema}) {
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    BOOST_REQUIRE(!ec);
    BOOST_REQUIRE(v.is_object());
    auto& props = v.at("properties").as_object();
    BOOST_CHECK(props.contains("followUps"));
    BOOST_CHECK(props.contains("sql") || props.contains("answer"));
  }
  // A reply shaped by the schema parses, the sentinel included.
  BOOST_CHECK(
    parse_sql_reply(R"({"sql": "NO_ANSWER", "followUps": []})")->abstained);
}

BOOST_AUTO_TEST_SUITE_END()
