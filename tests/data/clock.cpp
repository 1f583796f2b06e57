// Request ids: time-ordered UUID version 7, never repeated. Conversation
// ids: time-ordered too, with 80 random bits.

#include "data/clock.hpp"

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "domain/conversation.hpp"

using namespace candor::data;

BOOST_AUTO_TEST_SUITE(data_clock)

BOOST_AUTO_TEST_CASE(request_ids_are_time_ordered_uuid_v7) {
  auto a = new_request_id();
  BOOST_REQUIRE_EQUAL(a.size(), 36u);
  BOOST_CHECK_EQUAL(a[14], '7');                                     // version
  BOOST_CHECK(std::string{"89ab"}.find(a[19]) != std::string::npos); // variant
  for (size_t i = 0; i < a.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    BOOST_CHECK_MESSAGE(dash ? a[i] == '-'
                             : std::string{"0123456789abcdef"}.find(a[i])
                                 != std::string::npos,
                        a << " at " << i);
  }
  std::string prev = a;
  for (int i = 0; i < 1000; ++i) {
    auto b = new_request_id();
    BOOST_CHECK_NE(b, prev);
    // The millisecond prefix never goes backwards.
    BOOST_CHECK(b.substr(0, 13) >= prev.substr(0, 13));
    prev = b;
  }
}

BOOST_AUTO_TEST_CASE(conversation_ids_are_valid_time_ordered_and_unguessable) {
  auto a = new_conversation_id();
  BOOST_REQUIRE(candor::domain::valid_conversation_id(a));
  std::set<std::string> tails{a.substr(14)};
  std::string prev = a;
  for (int i = 0; i < 1000; ++i) {
    auto b = new_conversation_id();
    BOOST_REQUIRE(candor::domain::valid_conversation_id(b));
    // The millisecond prefix (12 hex digits after "c_") never goes back.
    BOOST_CHECK(b.substr(0, 14) >= prev.substr(0, 14));
    // The random 80 bits differ every time.
    BOOST_CHECK(tails.insert(b.substr(14)).second);
    prev = b;
  }
  // Ids of the same millisecond are not ordered by the random part alone:
  // a later millisecond sorts after.
  std::this_thread::sleep_for(std::chrono::milliseconds{2});
  BOOST_CHECK(new_conversation_id().substr(0, 14) > a.substr(0, 14));
}

BOOST_AUTO_TEST_SUITE_END()
