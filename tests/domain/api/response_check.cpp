// Tests that the one-pass response check agrees with validate_response on
// states and mutations, and refuses broken call sequences.

#include "domain/api/response_check.hpp"

#include <functional>
#include <string>
#include <vector>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/api/api_json.hpp"
#include "tests/support/ask_states.hpp"

using namespace candor;
namespace json = boost::json;

namespace {

/// The shared sample response with every list holding something: two
/// citations, two rows, guardrail reasons, an original query and an error.
domain::ask_state full_state() {
  auto st = test::sample_state();
  st.citations.push_back(st.citations.front());
  st.sql.rows.push_back(st.sql.rows.front());
  st.sql.rows.back()[0] = domain::cell{};
  st.sql.original_query = "SELECT 1;";
  st.sql.last_error = "earlier error";
  st.guardrail.reasons = {"none"};
  return st;
}

bool stream_verdict(const json::value& v) {
  domain::response_stream_check check;
  domain::replay(v, check);
  return check.valid();
}

/// Every value reachable from `root`, each with a way to reach it again in
/// a copy (a list of steps: member name or array index).
struct place {
  std::vector<std::string> keys; ///< "" marks an array step
  std::vector<size_t> indexes;
};

void collect(const json::value& v, place here, std::vector<place>& out) {
  out.push_back(here);
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      auto next = here;
      next.keys.emplace_back(kv.key());
      next.indexes.push_back(0);
      collect(kv.value(), next, out);
    }
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      auto next = here;
      next.keys.emplace_back();
      next.indexes.push_back(i);
      collect(a[i], next, out);
    }
  }
}

json::value& at(json::value& root, const place& p) {
  json::value* v = &root;
  for (size_t i = 0; i < p.keys.size(); ++i)
    v = p.keys[i].empty() ? &v->get_array()[p.indexes[i]]
                          : &v->get_object()[p.keys[i]];
  return *v;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_response_check)

BOOST_AUTO_TEST_CASE(states_get_the_verdict_of_validate_response) {
  std::vector<domain::ask_state> states;
  states.push_back(full_state());
  domain::ask_state blocked;
  blocked.request.request_id = "abcdefgh";
  domain::block(blocked, domain::layer_kind::input_rules,
                {"instruction_override"}, "I can't help with that.");
  states.push_back(blocked);
  auto wrong = full_state();
  wrong.blocked_by = domain::layer_kind::output_guard; // not "blocked"
  states.push_back(wrong);
  auto too_many = full_state();
  too_many.citations.assign(4, too_many.citations[0]);
  states.push_back(too_many);
  auto ragged = full_state();
  ragged.sql.rows.push_back({domain::cell{}});
  states.push_back(ragged);
  states.push_back(domain::ask_state{}); // pending: status not allowed
  size_t valid = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    BOOST_TEST_CONTEXT("state " << i) {
      auto expected
        = domain::validate_response(domain::to_json(states[i])).empty();
      BOOST_TEST(domain::response_fits_schema(states[i]) == expected);
      valid += expected ? 1 : 0;
    }
  }
  BOOST_TEST(valid == 2u); // the full and the blocked state
}

BOOST_AUTO_TEST_CASE(every_mutation_gets_the_verdict_of_validate_response) {
  // From a valid response touching every part of the schema: every value
  // replaced by each kind of value (and by the strings the enumerations
  // use), every member removed, an unknown member added to every object
  // and an element added to every array. The one-pass check must agree
  // with validate_response on each.
  const json::value base = domain::to_json(full_state());
  BOOST_REQUIRE(domain::validate_response(base).empty());
  BOOST_REQUIRE(stream_verdict(base));
  std::vector<place> places;
  collect(base, {}, places);
  // Every value of every enumeration, so that a typo in either checker's
  // lists shows.
  const std::vector<json::value> replacements = {nullptr,
                                                 true,
                                                 7,
                                                 -1.5,
                                                 "x",
                                                 "docs",
                                                 "data",
                                                 "out_of_scope",
                                                 "answered",
                                                 "refused",
                                                 "no_results",
                                                 "blocked",
                                                 "error",
                                                 "pending",
                                                 "pass",
                                                 "block",
                                                 "input_rules",
                                                 "input_model",
                                                 "sql_policy",
                                                 "sql_authorizer",
                                                 "output_guard",
                                                 json::object{},
                                                 json::array{},
                                                 json::array{"s"},
                                                 json::array{1, 2}};
  size_t cases = 0;
  size_t valid = 0;
  size_t disagreements = 0;
  auto judge = [&](const json::value& v, const std::string& what) {
    auto expected = domain::validate_response(v).empty();
    auto got = stream_verdict(v);
    if (got != expected) {
      ++disagreements;
      BOOST_TEST_MESSAGE("disagree on " << what << ": " << json::value(v));
    }
    valid += expected ? 1 : 0;
    ++cases;
  };
  for (const auto& p : places) {
    std::string name;
    for (size_t i = 0; i < p.keys.size(); ++i)
      name += p.keys[i].empty() ? "[" + std::to_string(p.indexes[i]) + "]"
                                : "." + p.keys[i];
    for (const auto& r : replacements) {
      auto v = base;
      at(v, p) = r;
      judge(v, name + " = " + json::serialize(r));
    }
    auto v = base;
    if (at(v, p).is_object()) {
      at(v, p).get_object()["extra"] = 1;
      judge(v, name + " + extra member");
    } else if (at(v, p).is_array()) {
      // A few elements more (past the bound of 3), then past 50 (rows).
      for (int more : {3, 49}) {
        auto w = base;
        auto& a = at(w, p).get_array();
        for (int n = 0; n < more; ++n)
          a.push_back(a.empty() ? json::value("s") : json::value(a.back()));
        judge(w, name + " + " + std::to_string(more) + " elements");
      }
    }
    if (!p.keys.empty() && !p.keys.back().empty()) {
      auto w = base;
      auto parent = p;
      parent.keys.pop_back();
      parent.indexes.pop_back();
      at(w, parent).get_object().erase(p.keys.back());
      judge(w, name + " removed");
    }
  }
  BOOST_TEST(places.size() > 60u);
  BOOST_TEST(cases > 900u);
  BOOST_TEST(valid > 100u);         // many mutations stay valid...
  BOOST_TEST(cases - valid > 500u); // ...and many do not
  BOOST_TEST(disagreements == 0u);
}

BOOST_AUTO_TEST_CASE(a_broken_call_sequence_is_invalid) {
  // Calls no response writer makes: nothing, two roots, a value without a
  // key, a key twice, an unclosed object.
  domain::response_stream_check nothing;
  BOOST_TEST(!nothing.valid());
  auto base = domain::to_json(full_state());
  domain::response_stream_check twice;
  domain::replay(base, twice);
  BOOST_TEST(twice.valid());
  domain::replay(base, twice);
  BOOST_TEST(!twice.valid());
  domain::response_stream_check no_key;
  no_key.begin_object();
  no_key.string("x");
  BOOST_TEST(!no_key.valid());
  domain::response_stream_check dup;
  dup.begin_object();
  dup.key("answer");
  dup.string("a");
  dup.key("answer");
  BOOST_TEST(!dup.valid());
  domain::response_stream_check open;
  open.begin_object();
  BOOST_TEST(!open.valid());
}

BOOST_AUTO_TEST_SUITE_END()
