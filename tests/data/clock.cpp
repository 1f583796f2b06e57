// Request ids: time-ordered UUID version 7, never repeated.

#include "data/clock.hpp"

#include <string>

#include <boost/test/unit_test.hpp>

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

BOOST_AUTO_TEST_SUITE_END()
