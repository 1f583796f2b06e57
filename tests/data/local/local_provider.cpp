// The local provider's parts on the shipped documents and catalog: sentence
// splitting, the extractive answerer, the router's cues and decisions, and
// the replies in each prompt's contract.

#include <memory>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/local/provider.hpp"
#include "data/sales/catalog.hpp"
#include "domain/build_info.hpp"
#include "domain/model/contracts.hpp"
#include "domain/sql/contracts.hpp"
#include "eval/ablation.hpp"

using namespace candor;
using namespace candor::data;
namespace json = boost::json;

namespace {

std::shared_ptr<const retrieval_snapshot> corpus() {
  static const auto snap = [] {
    auto s = eval::build_snapshot(std::string{CANDOR_SOURCE_DIR} + "/data/kb",
                                  600, {});
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.err().message));
    return std::shared_ptr<const retrieval_snapshot>{std::move(*s)};
  }();
  return snap;
}

const catalog& shipped_catalog() {
  static const auto cat = [] {
    auto c = catalog::load_default();
    BOOST_REQUIRE(c.ok());
    return std::make_shared<const catalog>(std::move(*c));
  }();
  return *cat;
}

local_provider make_provider() {
  return local_provider{shipped_catalog(), [] { return corpus(); },
                        local_settings{}};
}

domain::passage passage(std::string id, std::string heading, std::string text) {
  domain::passage p;
  p.chunk_id = std::move(id);
  p.doc_title = "Test Document";
  p.heading = std::move(heading);
  p.text = std::move(text);
  return p;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_local_provider)

BOOST_AUTO_TEST_CASE(sentences_split_at_ends_not_inside_numbers_or_e_g) {
  auto s = split_sentences(
    "Returns are free, e.g. for bikes. A fee of €12.50 applies to parts. "
    "Ask us!\n- First item\n| Basic | €79 |\n");
  BOOST_REQUIRE_EQUAL(s.size(), 5u);
  BOOST_CHECK_EQUAL(s[0], "Returns are free, e.g. for bikes.");
  BOOST_CHECK_EQUAL(s[1], "A fee of €12.50 applies to parts.");
  BOOST_CHECK_EQUAL(s[2], "Ask us!");
  BOOST_CHECK_EQUAL(s[3], "First item");
  BOOST_CHECK_EQUAL(s[4], "Basic | €79");
}

BOOST_AUTO_TEST_CASE(the_sanitizer_marker_ends_a_sentence_and_is_dropped) {
  auto s = split_sentences(
    "Plan demo days early. [passage removed: possible embedded instruction] "
    "Offers run in April.");
  BOOST_REQUIRE_EQUAL(s.size(), 2u);
  BOOST_CHECK_EQUAL(s[0], "Plan demo days early.");
  BOOST_CHECK_EQUAL(s[1], "Offers run in April.");
}

BOOST_AUTO_TEST_CASE(the_sentence_that_states_the_asked_type_is_quoted) {
  std::vector<domain::passage> ps{
    passage("t#returns-1", "Returns",
            "You can return a bike in its original condition. The return "
            "window is **30 days** from delivery. Refunds go to the card "
            "you paid with.")};
  auto a = extract_answer("How many days do I have to return a bike?", ps,
                          corpus().get());
  BOOST_REQUIRE_MESSAGE(a.found, a.why);
  BOOST_CHECK(a.type == answer_type::duration);
  BOOST_CHECK(a.answer.find("The return window is 30 days from delivery.")
              != std::string::npos);
  BOOST_REQUIRE_EQUAL(a.cited.size(), 1u);
  BOOST_CHECK_EQUAL(a.cited[0], "t#returns-1");
}

BOOST_AUTO_TEST_CASE(no_sentence_of_the_asked_type_means_no_answer) {
  std::vector<domain::passage> ps{
    passage("t#returns-1", "Returns",
            "You can return a bike in its original condition at any store.")};
  auto a = extract_answer("How much does a return cost?", ps, corpus().get());
  BOOST_CHECK(!a.found);
  BOOST_CHECK(a.answer.empty());
  BOOST_CHECK(a.cited.empty());
  BOOST_CHECK(a.why.find("money") != std::string::npos);
  BOOST_REQUIRE_EQUAL(a.nearest.size(), 1u);
  BOOST_CHECK(a.nearest[0].find("Returns") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_router_reads_the_catalog_and_the_documents) {
  local_router r{shipped_catalog()};
  auto snap = corpus();
  auto d = r.decide("What was our revenue by channel in 2025?", *snap,
                    search_mode::bm25, 3);
  BOOST_CHECK(d.route == domain::route_kind::data);
  BOOST_CHECK(d.reason.find("revenue") != std::string::npos);
  BOOST_CHECK(d.reason.find("2025") != std::string::npos);
  d = r.decide("How long is the frame warranty on a Strada?", *snap,
               search_mode::bm25, 3);
  BOOST_CHECK(d.route == domain::route_kind::docs);
  BOOST_CHECK(d.reason.find("documents") != std::string::npos);
  d = r.decide("What is the capital of Australia?", *snap, search_mode::bm25,
               3);
  BOOST_CHECK(d.route == domain::route_kind::out_of_scope);
  // A customer asking about their own order is not a sales question.
  auto cues = r.data_cues("How do I return my order?");
  double sum = 0;
  for (const auto& c : cues)
    sum += c.weight;
  BOOST_CHECK_LT(sum, r.options().data_weak);
}

BOOST_AUTO_TEST_CASE(a_question_the_planner_reads_whole_is_routed_to_data) {
  auto p = make_provider();
  auto route = [&](std::string_view q) {
    auto reply = p.reply("router", q, {});
    BOOST_REQUIRE(reply.ok());
    return json::parse(*reply).as_object();
  };
  // The router's own cues send it to the documents (a heading names
  // helmets); the planner maps every word, so it is a data question.
  auto helmets = route("How much did helmets bring in during 2025?");
  BOOST_TEST(helmets.at("route").as_string() == "data");
  BOOST_TEST(std::string{helmets.at("reason").as_string()}.find("planner")
             != std::string::npos);
  // A period outside the data is still a data question.
  BOOST_TEST(route("How much did helmets bring in during 2019?")
               .at("route")
               .as_string()
             == "data");
  // A price, a duration or a policy is not planned: the documents keep it.
  BOOST_TEST(route("How much is a hydraulic brake bleed?").at("route")
             != "data");
  BOOST_TEST(route("ideal refund how many days").at("route") != "data");
}

BOOST_AUTO_TEST_CASE(the_router_names_the_rule_that_decided) {
  local_router r{shipped_catalog()};
  auto snap = corpus();
  auto route
    = [&](const char* q) { return r.decide(q, *snap, search_mode::bm25, 3); };
  // A name that neither the documents nor the catalog use: another
  // company's business.
  auto d = route("Does Cube build a lighter gravel frame than Ribble?");
  BOOST_CHECK(d.route == domain::route_kind::out_of_scope);
  BOOST_CHECK_MESSAGE(d.reason.find("names 'Cube'") != std::string::npos,
                      d.reason);
  // A task, politely asked.
  d = route("Could you translate this sentence into Italian?");
  BOOST_CHECK(d.route == domain::route_kind::out_of_scope);
  BOOST_CHECK_MESSAGE(d.reason.find("task ('translate')") != std::string::npos,
                      d.reason);
  // An unknown place after "to" is a destination, not another company;
  // "delivery" is a subject the documents' headings name, quoted as the
  // question wrote it.
  d = route("How long does delivery to Tromso take?");
  BOOST_CHECK(d.route == domain::route_kind::docs);
  BOOST_CHECK_MESSAGE(d.reason.find("'delivery'") != std::string::npos,
                      d.reason);
  // Sloppy wording with weak evidence, still about a documented subject.
  d = route("my chain keeps squeaking");
  BOOST_CHECK(d.route == domain::route_kind::docs);
  BOOST_CHECK_MESSAGE(d.reason.find("'chain'") != std::string::npos, d.reason);
  // Words every heading set has ("time", places) name no subject.
  BOOST_CHECK(r.subject_term("What time is it in Utrecht?", *snap).empty());
  BOOST_CHECK_EQUAL(r.subject_term("tubeless sealant?", *snap), "tubeless");
}

BOOST_AUTO_TEST_CASE(a_question_for_a_name_needs_a_sentence_stating_one) {
  const char* q = "Which brand of sealant does the workshop use?";
  std::vector<domain::passage> without{
    passage("t#sealant-1", "Tubeless sealant",
            "Our workshop uses tubeless sealant in every wheel it sets up.")};
  auto a = extract_answer(q, without, corpus().get());
  BOOST_CHECK(!a.found);
  BOOST_CHECK_MESSAGE(a.why.find("a name") != std::string::npos, a.why);
  std::vector<domain::passage> with{
    passage("t#sealant-1", "Tubeless sealant",
            "Our workshop uses Orbit Seal sealant in every wheel it sets up.")};
  a = extract_answer(q, with, corpus().get());
  BOOST_CHECK_MESSAGE(a.found, a.why);
  BOOST_CHECK(a.answer.find("Orbit Seal") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_question_for_an_amount_needs_money_or_a_percentage) {
  const char* q = "What deposit do you ask for a rental bike?";
  std::vector<domain::passage> without{
    passage("t#rental-1", "Rental bikes",
            "A deposit is required for every rental bike we hand out.")};
  auto a = extract_answer(q, without, corpus().get());
  BOOST_CHECK(!a.found);
  BOOST_CHECK_MESSAGE(a.why.find("an amount") != std::string::npos, a.why);
  std::vector<domain::passage> with{
    passage("t#rental-1", "Rental bikes",
            "A deposit of €200 is required for every rental bike we hand "
            "out.")};
  a = extract_answer(q, with, corpus().get());
  BOOST_CHECK_MESSAGE(a.found, a.why);
}

BOOST_AUTO_TEST_CASE(strong_evidence_lets_a_sentence_use_its_own_words) {
  // The sentence shares little of the question's wording: not enough on
  // its own, enough when retrieval found the passage a strong match.
  const char* q = "When does a bike I order arrive in the Netherlands?";
  std::vector<domain::passage> ps{
    passage("t#delivery-1", "Delivery",
            "Bikes reach you within 5 business days in the Netherlands.")};
  extract_options opts;
  auto weak = extract_answer(q, ps, corpus().get(), opts, nullptr, 0.0);
  auto strong = extract_answer(q, ps, corpus().get(), opts, nullptr,
                               opts.strong_evidence);
  BOOST_TEST_MESSAGE("score " << weak.best.score);
  BOOST_CHECK_LT(weak.best.score, opts.min_score);
  BOOST_CHECK_GE(weak.best.score, opts.min_score_strong);
  BOOST_CHECK(!weak.found);
  BOOST_CHECK_MESSAGE(strong.found, strong.why);
}

BOOST_AUTO_TEST_CASE(passage_analyses_are_reused_until_the_text_changes) {
  passage_cache cache;
  auto p = passage("t#a-1", "Heading", "First sentence here. Second one too.");
  auto a = cache.get(p, corpus().get());
  BOOST_CHECK(cache.get(p, corpus().get()) == a); // the same analysis
  p.text = "First sentence here. A changed second one.";
  auto b = cache.get(p, corpus().get());
  BOOST_CHECK(b != a);
  BOOST_REQUIRE_EQUAL(b->sentences.size(), 2u);
  BOOST_CHECK_EQUAL(b->sentences[1], "A changed second one.");
}

BOOST_AUTO_TEST_CASE(replies_follow_each_prompts_contract) {
  auto p = make_provider();
  auto routed = p.reply("router",
                        "How long is the frame warranty on a "
                        "Strada?",
                        {});
  BOOST_REQUIRE(routed.ok());
  auto decision = domain::parse_router_reply(*routed);
  BOOST_REQUIRE(decision.ok());
  BOOST_CHECK(decision->route == domain::route_kind::docs);

  std::vector<domain::passage> ps{passage(
    "t#returns-1", "Returns", "The return window is 30 days from delivery.")};
  auto answered = p.reply("rag_answer",
                          "How many days do I have to return "
                          "it?",
                          ps);
  BOOST_REQUIRE(answered.ok());
  auto rag = domain::parse_rag_reply(*answered);
  BOOST_REQUIRE(rag.ok());
  BOOST_CHECK(rag->confident);
  BOOST_CHECK(!rag->refused);
  BOOST_CHECK(rag->answer.find("no language model") != std::string::npos);
  BOOST_REQUIRE_EQUAL(rag->cited_chunk_ids.size(), 1u);

  // A data question the planner maps: a query with its plan.
  auto sql = p.reply("sql_generate", "What was our revenue in 2025?", {});
  BOOST_REQUIRE(sql.ok());
  auto parsed = domain::parse_sql_reply(*sql);
  BOOST_REQUIRE(parsed.ok());
  BOOST_CHECK(!parsed->abstained);
  BOOST_CHECK(parsed->sql.find("'2025-01-01'") != std::string::npos);
  BOOST_CHECK(!parsed->plan.empty());
  // One it does not: an abstention that says why and hints at a model.
  auto unknown
    = p.reply("sql_generate", "What was our revenue on TikTok in 2025?", {});
  BOOST_REQUIRE(unknown.ok());
  auto refused = domain::parse_sql_reply(*unknown);
  BOOST_REQUIRE(refused.ok());
  BOOST_CHECK(refused->abstained);
  BOOST_CHECK(refused->reason.find("'tiktok'") != std::string::npos);
  BOOST_CHECK(refused->reason.find("CANDOR_LLM_BASE_URL") != std::string::npos);

  // The guard is never asked without a model: an error, not a guess.
  BOOST_CHECK(!p.reply("guard", "anything", {}).ok());
}

// Standing in for models that failed (llm.localFallback), the replies say
// that no language model was reachable rather than that none is set up;
// everything else about them is unchanged.
BOOST_AUTO_TEST_CASE(fallback_replies_say_no_model_was_reachable) {
  auto p = make_provider();
  std::vector<domain::passage> ps{passage(
    "t#returns-1", "Returns", "The return window is 30 days from delivery.")};
  const char* q = "How many days do I have to return it?";
  auto plain = p.reply(local_call{"rag_answer", q, &ps});
  auto stand_in = p.reply(local_call{"rag_answer", q, &ps, {}, nullptr, true});
  BOOST_REQUIRE(plain.ok());
  BOOST_REQUIRE(stand_in.ok());
  auto before = domain::parse_rag_reply(*plain);
  auto rag = domain::parse_rag_reply(*stand_in);
  BOOST_REQUIRE(before.ok());
  BOOST_REQUIRE(rag.ok());
  BOOST_CHECK(rag->confident);
  BOOST_CHECK(rag->cited_chunk_ids == before->cited_chunk_ids);
  BOOST_CHECK(before->answer.find(local_answer_note) != std::string::npos);
  BOOST_CHECK(rag->answer.find(local_answer_note) == std::string::npos);
  BOOST_CHECK(rag->answer.find(local_fallback_answer_note)
              != std::string::npos);
  BOOST_CHECK(rag->answer.find(domain::texts::no_model_reachable)
              != std::string::npos);
  // The quoted sentence is kept.
  BOOST_CHECK(rag->answer.find("30 days") != std::string::npos);

  // A data question the planner refuses: the hint says no model was
  // reachable, not how to configure one.
  const char* dq = "What was our revenue on TikTok in 2025?";
  auto sql = p.reply(
    local_call{"sql_generate", dq, nullptr, {}, nullptr, true});
  BOOST_REQUIRE(sql.ok());
  auto parsed = domain::parse_sql_reply(*sql);
  BOOST_REQUIRE(parsed.ok());
  BOOST_CHECK(parsed->abstained);
  BOOST_CHECK(parsed->reason.find("No language model was reachable")
              != std::string::npos);
  BOOST_CHECK(parsed->reason.find("CANDOR_LLM_BASE_URL") == std::string::npos);

  // The router's reply is the same either way.
  const char* rq = "How long is the frame warranty?";
  BOOST_CHECK_EQUAL(
    *p.reply(local_call{"router", rq}),
    *p.reply(local_call{"router", rq, nullptr, {}, nullptr, true}));
}

BOOST_AUTO_TEST_SUITE_END()
