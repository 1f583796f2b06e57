#include "domain/contracts.hpp"

#include <boost/test/unit_test.hpp>

using namespace candor::domain;

BOOST_AUTO_TEST_SUITE(domain_contracts)

BOOST_AUTO_TEST_CASE(valid_router_reply) {
  auto r = parse_router_reply(R"({"route":"docs","reason":"asks about returns"})");
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

BOOST_AUTO_TEST_SUITE_END()
