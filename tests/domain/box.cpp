// The owning box the request state travels in (domain::indirect, ask_box):
// value semantics, a pointer move, and an `inspect` that looks through it.

#include "domain/types.hpp"

#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>

#include <boost/test/unit_test.hpp>

#include "tests/support/ask_states.hpp"

using namespace candor;
using domain::ask_box;

namespace {

std::vector<char> serialized(ask_box& box) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  BOOST_REQUIRE(!sink(box));
  return buf;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_box)

BOOST_AUTO_TEST_CASE(a_default_box_holds_an_empty_state) {
  ask_box box;
  BOOST_REQUIRE(!box.valueless_after_move());
  BOOST_CHECK(box->status == domain::status_kind::pending);
  BOOST_CHECK_EQUAL(caf::deep_to_string(*box),
                    caf::deep_to_string(domain::ask_state{}));
}

BOOST_AUTO_TEST_CASE(a_copy_is_deep_and_independent) {
  const auto expected = caf::deep_to_string(test::sample_state());
  ask_box original{test::sample_state()};
  ask_box copy{original};
  BOOST_CHECK(&*copy != &*original);
  BOOST_CHECK_EQUAL(caf::deep_to_string(*copy), expected);
  copy->answer = "changed";
  copy->citations.clear();
  copy->sql.rows[0][1].s = "changed";
  BOOST_CHECK_EQUAL(caf::deep_to_string(*original), expected);
  // Copy assignment, onto a box that holds something else.
  ask_box assigned;
  assigned = original;
  BOOST_CHECK(&*assigned != &*original);
  BOOST_CHECK_EQUAL(caf::deep_to_string(*assigned), expected);
  assigned->warnings.clear();
  BOOST_CHECK_EQUAL(caf::deep_to_string(*original), expected);
  // Assigning a box to itself keeps its value.
  const auto& same = original;
  original = same;
  BOOST_CHECK_EQUAL(caf::deep_to_string(*original), expected);
}

BOOST_AUTO_TEST_CASE(a_move_hands_over_the_state_and_the_box_can_be_refilled) {
  ask_box from{test::sample_state()};
  const auto* state = &*from;
  ask_box to{std::move(from)};
  BOOST_CHECK(&*to == state); // the same object: only the pointer moved
  BOOST_CHECK(from.valueless_after_move());
  // A moved-from box copies as valueless and takes a new value.
  ask_box copy{from};
  BOOST_CHECK(copy.valueless_after_move());
  from = ask_box{};
  BOOST_REQUIRE(!from.valueless_after_move());
  BOOST_CHECK(from->answer.empty());
  from->answer = "again";
  BOOST_CHECK_EQUAL(from->answer, "again");
  // Move assignment hands over the state the same way.
  ask_box assigned;
  assigned = std::move(to);
  BOOST_CHECK(&*assigned == state);
  BOOST_CHECK(to.valueless_after_move());
}

BOOST_AUTO_TEST_CASE(inspect_sees_the_state_itself) {
  ask_box box{test::sample_state()};
  auto state = test::sample_state();
  // The same text and the same bytes as the unboxed state.
  BOOST_CHECK_EQUAL(caf::deep_to_string(box), caf::deep_to_string(state));
  auto bytes = serialized(box);
  std::vector<char> state_bytes;
  caf::binary_serializer sink{nullptr, state_bytes};
  BOOST_REQUIRE(!sink(state));
  BOOST_CHECK(bytes == state_bytes);
  // Loading works into a fresh box and into a moved-from one.
  for (auto moved_from : {false, true}) {
    ask_box loaded;
    ask_box taken;
    if (moved_from)
      taken = std::move(loaded);
    caf::binary_deserializer source{nullptr, bytes};
    BOOST_REQUIRE(!source(loaded));
    BOOST_CHECK_EQUAL(caf::deep_to_string(loaded), caf::deep_to_string(state));
  }
  // A moved-from box prints as an empty state.
  ask_box taken{std::move(box)};
  BOOST_CHECK_EQUAL(caf::deep_to_string(box),
                    caf::deep_to_string(domain::ask_state{}));
}

BOOST_AUTO_TEST_CASE(unbox_keeps_the_value_or_the_error) {
  auto ok
    = domain::unbox(domain::outcome<ask_box>{ask_box{test::sample_state()}});
  BOOST_REQUIRE(ok.ok());
  BOOST_CHECK_EQUAL(caf::deep_to_string(*ok),
                    caf::deep_to_string(test::sample_state()));
  auto failed = domain::unbox(domain::outcome<ask_box>{
    domain::make_error(domain::ec::timeout, "too late")});
  BOOST_REQUIRE(!failed.ok());
  BOOST_CHECK_EQUAL(failed.err().code, domain::ec::timeout);
  BOOST_CHECK_EQUAL(failed.err().message, "too late");
}

BOOST_AUTO_TEST_SUITE_END()
