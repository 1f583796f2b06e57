// Tests of expected answer types: the type a question asks for, passages
// that state it, and its effect on ranking and evidence.

#include "data/retrieval/answer_type.hpp"

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "data/retrieval/evidence.hpp"
#include "data/retrieval/index_store.hpp"
#include "data/retrieval/query.hpp"

using namespace candor::data;

namespace {

chunk make_chunk(const std::string& doc, const std::string& section,
                 int32_t ordinal, const std::string& text) {
  chunk c;
  c.doc_slug = doc;
  c.doc_title = doc;
  c.heading = section;
  c.id = doc + "#" + section + "-1";
  c.ordinal = ordinal;
  c.text = text;
  return c;
}

/// Two passages about a helmet's price: one states it, one only talks
/// about prices; plus filler so that IDFs are meaningful.
std::vector<chunk> helmet_corpus() {
  return {
    make_chunk("helmets", "price-policy", 0,
               "Helmet prices follow the recommended retail price list and "
               "helmet prices change each season."),
    make_chunk("helmets", "aero-helmet", 1,
               "The Aero helmet costs EUR 89 in every store."),
    make_chunk("helmets", "fitting", 2,
               "A helmet should sit level, two fingers above the brows."),
    make_chunk("tyres", "pressure", 0,
               "Road tyres run at 6 bar; gravel tyres at 2.5 bar."),
    make_chunk("tyres", "punctures", 1,
               "Carry a spare tube and levers on every ride."),
    make_chunk("shop", "hours", 0,
               "The Utrecht store opens at 09:00 and closes at 18:00."),
  };
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_answer_type)

BOOST_AUTO_TEST_CASE(tokens_keep_numbers_and_typed_symbols) {
  auto t = answer_tokens("Costs \xE2\x82\xAC"
                         "1,500.50 or 20% at 14:00, "
                         "5-year; 20 \xC2\xB0"
                         "C; a@b.example");
  std::vector<std::string> want{
    "costs", "eur",  "1,500.50", "or",  "20", "%", "at", "14", ":",      "00",
    "5",     "year", "20",       "deg", "c",  "a", "@",  "b",  "example"};
  BOOST_TEST(t == want, boost::test_tools::per_element());
  BOOST_TEST(answer_tokens("").empty());
}

BOOST_AUTO_TEST_CASE(questions_name_the_type_they_ask_for) {
  struct row {
    const char* question;
    answer_type type;
  };
  const row rows[] = {
    {"How much does the touring saddle cost?", answer_type::money},
    {"What is the price of a spare key?", answer_type::money},
    {"How much is a replacement charger?", answer_type::money},
    {"How heavy is the cargo bike?", answer_type::weight},
    {"How much does the cargo bike weigh?", answer_type::weight},
    {"How many stores are there?", answer_type::count},
    {"How long does a refund take?", answer_type::duration},
    {"How many weeks is the waiting list?", answer_type::duration},
    {"How much notice do I have to give?", answer_type::duration},
    {"How often should I check the brakes?", answer_type::frequency},
    {"How far can the battery take me?", answer_type::distance},
    {"In which year was the shop founded?", answer_type::year},
    {"What time does the store close on Saturday?", answer_type::time_of_day},
    {"What is the phone number of the workshop?", answer_type::phone},
    {"What percentage of the price is refunded?", answer_type::percentage},
    {"What is the email address for complaints?", answer_type::email},
    {"What temperature is too cold for charging?", answer_type::temperature},
    {"Which tyre pressure suits a heavy rider?", answer_type::pressure},
    {"How much torque do the stem bolts need?", answer_type::torque},
    {"What gear ratio does the city bike use?", answer_type::ratio},
    {"What discounts do students get?", answer_type::discount},
    // Yes/no, how-to and open questions ask for no particular type.
    {"Do you deliver to islands?", answer_type::none},
    {"Is there a discount for members?", answer_type::none},
    {"How do I fit a helmet?", answer_type::none},
    {"What happens when a payment fails?", answer_type::none},
    {"Which retailers qualify for a price match?", answer_type::none},
    {"", answer_type::none},
  };
  for (const auto& r : rows)
    BOOST_TEST(to_string(expected_answer_type(r.question)) == to_string(r.type),
               r.question);
}

BOOST_AUTO_TEST_CASE(passages_hold_expressions_of_a_type) {
  struct row {
    const char* text;
    answer_type type;
    bool holds;
  };
  const row rows[] = {
    {"It costs EUR 12.", answer_type::money, true},
    {"It costs \xE2\x82\xAC"
     "89.",
     answer_type::money, true},
    {"Collection is free of charge.", answer_type::money, true},
    {"We pay the return shipping.", answer_type::money, true},
    {"Partners are free to set their prices.", answer_type::money, false},
    {"Prices follow the list.", answer_type::money, false},
    {"The frame weighs 1.2 kg.", answer_type::weight, true},
    {"Sizes run from 155 to 195 cm.", answer_type::weight, false},
    {"We have two stores.", answer_type::count, true},
    {"We have stores.", answer_type::count, false},
    {"Refunds take 5 to 10 working days.", answer_type::duration, true},
    {"A 2-year warranty applies.", answer_type::duration, true},
    {"Refunds are quick.", answer_type::duration, false},
    {"Refunds take about a week.", answer_type::duration, true},
    {"Allow a few days.", answer_type::duration, true},
    {"Days are long in summer.", answer_type::duration, false},
    {"Service it once a year.", answer_type::frequency, true},
    {"A range of up to 80 km.", answer_type::distance, true},
    {"Founded in 2009 in Utrecht.", answer_type::year, true},
    {"Founded long ago, with 120 staff.", answer_type::year, false},
    {"Order before 14:00.", answer_type::time_of_day, true},
    {"Open until 6 pm.", answer_type::time_of_day, true},
    {"Open until 6 p.m. daily.", answer_type::time_of_day, true},
    {"Order before 14.00 for dispatch.", answer_type::time_of_day, true},
    {"Order 14.500 parts.", answer_type::time_of_day, false},
    {"Call +31 30 123 4567.", answer_type::phone, true},
    {"Call us on 030 12.", answer_type::phone, false},
    {"A 10% discount.", answer_type::percentage, true},
    {"Write to help@shop.example.", answer_type::email, true},
    {"Keep it at 20 \xC2\xB0"
     "C.",
     answer_type::temperature, true},
    {"Run 2.5 bar on gravel.", answer_type::pressure, true},
    {"Tighten to 5 Nm.", answer_type::torque, true},
    {"A 50/34 chainset.", answer_type::ratio, true},
    {"A 500 Wh battery.", answer_type::energy, true},
    {"Members get 10% off.", answer_type::discount, true},
    {"Members get a discount.", answer_type::discount, false},
    {"Anything at all.", answer_type::none, true},
  };
  for (const auto& r : rows) {
    BOOST_TEST(holds_answer_of_type(r.text, r.type) == r.holds,
               r.text << " / " << to_string(r.type));
    BOOST_TEST(mask_has(answer_type_mask(r.text), r.type) == r.holds,
               r.text << " / " << to_string(r.type) << " (mask)");
  }
}

BOOST_AUTO_TEST_CASE(named_terms_are_capitalised_words_inside_a_sentence) {
  auto names = named_terms("What does the Volt City cost? Is VAT included "
                           "for I and me in Black Friday's sale?");
  // "What" and "Is" start sentences; "I" is one letter.
  std::vector<std::string> want{"volt", "citi", "vat", "black", "friday"};
  BOOST_TEST(names == want, boost::test_tools::per_element());
  BOOST_TEST(named_terms("all lower case words").empty());
}

BOOST_AUTO_TEST_CASE(the_answer_type_prior_moves_a_stating_chunk_up) {
  auto snap = retrieval_snapshot::build(helmet_corpus(), retrieval_params{});
  BOOST_TEST(snap->answer_types(1) != 0u);
  BOOST_TEST(mask_has(snap->answer_types(1), answer_type::money));
  BOOST_TEST(!mask_has(snap->answer_types(0), answer_type::money));
  auto q = "How much does a helmet cost?";
  search_options off;
  off.answer_type_weight = 1;
  auto plain = snap->search(q, 3, search_mode::bm25, off);
  auto typed = snap->search(q, 3, search_mode::bm25);
  BOOST_REQUIRE(!plain.empty());
  BOOST_REQUIRE(!typed.empty());
  // Without the prior the price-policy passage ("helmet" twice and the
  // thesaurus's "price" for "cost") ranks first; with it, the passage
  // stating a price does.
  BOOST_TEST(plain[0].chunk_id == "helmets#price-policy-1");
  BOOST_TEST(typed[0].chunk_id == "helmets#aero-helmet-1");
  // The component score stays unweighted.
  for (const auto& h : typed)
    if (h.chunk_id == "helmets#price-policy-1")
      BOOST_TEST(h.score < h.bm25);
}

BOOST_AUTO_TEST_CASE(evidence_needs_a_hit_stating_the_asked_type) {
  auto snap = retrieval_snapshot::build(helmet_corpus(), retrieval_params{});
  // Asks for a weight; no passage states one.
  auto q = "How much does the Aero helmet weigh?";
  auto hits = snap->search(q, 3, search_mode::bm25);
  BOOST_REQUIRE(!hits.empty());
  auto d = evidence_details(*snap, q, hits);
  BOOST_TEST(to_string(d.type) == "weight");
  BOOST_TEST(!d.type_found);
  BOOST_TEST(d.score == 0.0);
  evidence_options no_type;
  no_type.check_answer_type = false;
  BOOST_TEST(evidence_score(*snap, q, hits, no_type) > 0.0);
  // Asks for a price, which one hit states.
  auto p = "How much does the Aero helmet cost?";
  auto priced
    = evidence_details(*snap, p, snap->search(p, 3, search_mode::bm25));
  BOOST_TEST(priced.type_found);
  BOOST_TEST(priced.score > 0.0);
}

BOOST_AUTO_TEST_CASE(evidence_discounts_a_hit_missing_a_name) {
  auto snap = retrieval_snapshot::build(helmet_corpus(), retrieval_params{});
  // "Utrecht" is in one passage, "Aero" in another: the best hit for the
  // fitting question does not name the store.
  auto q = "Does the Utrecht helmet fitting sit level?";
  auto hits = snap->search(q, 3, search_mode::bm25);
  BOOST_REQUIRE(!hits.empty());
  auto with = evidence_details(*snap, q, hits);
  evidence_options off;
  off.name_penalty = 1;
  auto without = evidence_details(*snap, q, hits, off);
  BOOST_TEST(without.missing_names.empty());
  BOOST_REQUIRE(!with.missing_names.empty());
  BOOST_TEST(with.missing_names[0] == "utrecht");
  BOOST_TEST(with.score < without.score);
  BOOST_TEST(with.score > 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
