// The planner's follow-ups on the shipped catalog: a follow-up replaces the
// piece of the question before that it names (a period, a grouping, a
// value, a metric, a ranking) and keeps the rest; talk is dropped; words
// it does not know are kept, so the planner refuses them.

#include "data/local/planner.hpp"

#include <optional>
#include <string>

#include <boost/test/unit_test.hpp>

#include "data/sales/catalog.hpp"

using namespace candor::data;

namespace {

const planner& shipped_planner() {
  static std::optional<planner> p = [] {
    auto cat = catalog::load_default();
    BOOST_REQUIRE(cat.ok());
    auto made = planner::make(*cat);
    BOOST_REQUIRE_MESSAGE(made.ok(), (made.ok() ? "" : made.err().message));
    return std::optional<planner>{std::move(*made)};
  }();
  return *p;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_local_followup)

BOOST_AUTO_TEST_CASE(another_period_replaces_the_period) {
  auto& p = shipped_planner();
  auto r = p.resolve_follow_up("net revenue by channel in 2025", "and in 2024?");
  BOOST_TEST(r.standalone == "net revenue by channel in 2024");
  BOOST_TEST((r.kind == follow_up_kind::period));
  auto plan = p.plan(r.standalone);
  BOOST_TEST(plan.planned(), plan.message);
  BOOST_TEST(has(plan.p.sql, "2024-01-01"), plan.p.sql);
  BOOST_TEST(!has(plan.p.sql, "2025-"), plan.p.sql);
}

BOOST_AUTO_TEST_CASE(a_part_of_a_year_keeps_the_year) {
  auto& p = shipped_planner();
  auto r = p.resolve_follow_up("net revenue in q1 2025", "and q2?");
  BOOST_TEST(r.standalone == "net revenue in q2 2025");
  auto plan = p.plan(r.standalone);
  BOOST_TEST(plan.planned(), plan.message);
  BOOST_TEST(has(plan.p.sql, "2025-04-01"), plan.p.sql);
}

BOOST_AUTO_TEST_CASE(a_grouping_is_added_or_replaced_when_told) {
  auto& p = shipped_planner();
  auto added
    = p.resolve_follow_up("net revenue in 2025", "break that down by channel");
  BOOST_TEST((added.kind == follow_up_kind::breakdown));
  BOOST_TEST(added.standalone == "net revenue in 2025 by channel");
  auto instead = p.resolve_follow_up("net revenue by channel in 2025",
                                     "by country instead");
  BOOST_TEST(has(instead.standalone, "by country"), instead.standalone);
  BOOST_TEST(!has(instead.standalone, "channel"), instead.standalone);
  BOOST_TEST(p.plan(instead.standalone).planned());
}

BOOST_AUTO_TEST_CASE(a_value_replaces_the_value_of_its_dimension) {
  auto& p = shipped_planner();
  auto r = p.resolve_follow_up("orders from the web shop in 2025",
                               "what about the marketplace?");
  BOOST_TEST((r.kind == follow_up_kind::filter));
  BOOST_TEST(has(r.standalone, "marketplace"), r.standalone);
  BOOST_TEST(!has(r.standalone, "web shop"), r.standalone);
  BOOST_TEST(has(r.standalone, "2025"), r.standalone);
  auto plan = p.plan(r.standalone);
  BOOST_TEST(plan.planned(), plan.message);
  BOOST_TEST(has(plan.p.sql, "'marketplace'"), plan.p.sql);
}

BOOST_AUTO_TEST_CASE(a_question_of_its_own_is_taken_without_the_talk) {
  auto& p = shipped_planner();
  auto r = p.resolve_follow_up(
    "net revenue by channel in 2025",
    "unrelated, but how many orders were placed in 2024?");
  BOOST_TEST((r.kind == follow_up_kind::standalone));
  BOOST_TEST(r.standalone == "how many orders were placed in 2024");
  BOOST_TEST(p.plan(r.standalone).planned());
}

BOOST_AUTO_TEST_CASE(words_it_does_not_know_are_kept_and_refused) {
  auto& p = shipped_planner();
  auto r = p.resolve_follow_up("net revenue by channel in 2025",
                               "and what about the weather?");
  BOOST_TEST(has(r.standalone, "weather"), r.standalone);
  auto plan = p.plan(r.standalone);
  BOOST_TEST(!plan.planned());
  // Personal data stays refused through a follow-up too.
  auto names = p.resolve_follow_up("orders by country in 2025",
                                   "and their email addresses?");
  BOOST_TEST(!p.plan(names.standalone).planned(), names.standalone);
  // The same input, the same reading.
  BOOST_TEST(p.resolve_follow_up("net revenue in 2025", "and 2024").standalone
             == p.resolve_follow_up("net revenue in 2025", "and 2024")
                  .standalone);
}

BOOST_AUTO_TEST_SUITE_END()
