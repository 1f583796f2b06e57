// The bounded map of statements by exact text (data/sql/recent.hpp) that
// the SQL guard and the executor keep their verdicts and programs in.

#include "data/sql/recent.hpp"

#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>

using candor::data::recent_statements;

BOOST_AUTO_TEST_SUITE(data_sql_recent)

BOOST_AUTO_TEST_CASE(the_least_recently_used_text_is_forgotten_first) {
  recent_statements<int> kept{2};
  BOOST_TEST(kept.find("a") == nullptr);
  BOOST_REQUIRE(kept.put("a", 1) != nullptr);
  BOOST_REQUIRE(kept.put("b", 2) != nullptr);
  BOOST_TEST(*kept.find("a") == 1); // "a" is now the most recent
  BOOST_REQUIRE(kept.put("c", 3) != nullptr);
  BOOST_TEST(kept.size() == 2u);
  BOOST_TEST(kept.find("b") == nullptr);
  BOOST_TEST(*kept.find("a") == 1);
  BOOST_TEST(*kept.find("c") == 3);
  // A text kept again replaces its value and forgets nothing.
  BOOST_TEST(*kept.put("a", 10) == 10);
  BOOST_TEST(kept.size() == 2u);
  BOOST_TEST(*kept.find("c") == 3);
  kept.erase("c");
  kept.erase("never kept");
  BOOST_TEST(kept.find("c") == nullptr);
  BOOST_TEST(kept.size() == 1u);
}

BOOST_AUTO_TEST_CASE(exact_text_only_and_bounded_texts) {
  recent_statements<std::unique_ptr<int>> kept{4, 8};
  BOOST_REQUIRE(kept.put("SELECT 1", std::make_unique<int>(1)) != nullptr);
  BOOST_TEST(kept.find("SELECT  1") == nullptr);
  BOOST_TEST(kept.find("select 1") == nullptr);
  // Too long to keep: not kept, and the value is left with the caller.
  auto big = std::make_unique<int>(2);
  BOOST_TEST(kept.put("SELECT 12", std::move(big)) == nullptr);
  BOOST_REQUIRE(big != nullptr);
  BOOST_TEST(*big == 2);
  // Keys stay valid when the map is moved.
  auto moved = std::move(kept);
  BOOST_REQUIRE(moved.find("SELECT 1") != nullptr);
  BOOST_TEST(**moved.find("SELECT 1") == 1);
  recent_statements<int> none{0};
  BOOST_TEST(none.put("a", 1) == nullptr);
  BOOST_TEST(none.find("a") == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()
