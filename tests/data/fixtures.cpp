// The scripted provider's fixture files (data::fixture_store::load): what
// loads, and the mistakes in a file that stop it with the file named.

#include "data/fixtures.hpp"

#include <fstream>
#include <string>

#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

using namespace candor;

namespace {

struct fixture_dir {
  test::temp_dir dir{"candor-fixtures"};
  void write(const std::string& name, const std::string& text) {
    std::ofstream{dir.file(name), std::ios::binary} << text;
  }
  domain::outcome<data::fixture_store> load() {
    return data::fixture_store::load(dir.path.string());
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(data_fixtures, fixture_dir)

BOOST_AUTO_TEST_CASE(a_file_loads_and_answers_by_normalised_question) {
  write("router.json", R"({"prompt": "router", "entries": [
    {"question": "What is the weather?", "response": {"route": "out_of_scope"}},
    {"question": "Refunds?", "responses": ["first", "second"]}]})");
  auto fx = load();
  BOOST_REQUIRE_MESSAGE(fx.ok(), (fx.ok() ? "" : fx.err().message));
  BOOST_TEST(fx->size() == 2u);
  auto r = fx->lookup("router", "  what is the WEATHER ", 0);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->text == R"({"route":"out_of_scope"})");
  BOOST_TEST(fx->lookup("router", "Refunds?", 1)->text == "second");
  BOOST_TEST(fx->lookup("router", "Refunds?", 5)->text == "second");
  auto missing = fx->lookup("router", "Something else", 0);
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST((missing.err().code == domain::ec::fixture_missing));
}

BOOST_AUTO_TEST_CASE(a_member_given_twice_stops_the_load) {
  // The JSON parser would keep the second "response" without a word.
  write("router.json", R"({"prompt": "router", "entries": [
    {"question": "What is the weather?", "response": "a", "response": "b"}]})");
  auto fx = load();
  BOOST_REQUIRE(!fx.ok());
  BOOST_TEST(fx.err().message.find("router.json") != std::string::npos,
             fx.err().message);
  BOOST_TEST(fx.err().message.find("'entries[0].response' appears more "
                                   "than once")
               != std::string::npos,
             fx.err().message);
}

BOOST_AUTO_TEST_CASE(two_entries_for_one_question_stop_the_load) {
  write("router.json", R"({"prompt": "router", "entries": [
    {"question": "What is the weather?", "response": "a"},
    {"question": "what is the  weather", "response": "b"}]})");
  auto fx = load();
  BOOST_REQUIRE(!fx.ok());
  BOOST_TEST(fx.err().message.find("duplicate question") != std::string::npos,
             fx.err().message);
}

BOOST_AUTO_TEST_SUITE_END()
