// Tests of the retrieval ablation: the labelled set and its splits,
// section matching, recall and MRR, and the shipped winner.

#include "data/config_load.hpp"
#include "eval/ablation.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/process.hpp"

#include "data/retrieval/ingest.hpp"
#include "data/retrieval/query.hpp"
#include "domain/build_info.hpp"
#include "domain/config.hpp"

using namespace candor;
using namespace candor::eval;

namespace {

const std::string kb_dir = std::string{CANDOR_SOURCE_DIR} + "/data/kb";

/// The labelled set as shipped, loaded once.
const labelled_set& shipped_set() {
  static const labelled_set set = [] {
    auto s = load_labelled_set(default_labelled_set_path());
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.err().message));
    return *s;
  }();
  return set;
}

/// conf/candor.json as shipped (the file in the source tree).
domain::config shipped_config() {
  auto cfg = data::load_config(
    domain::default_config_json(),
    std::string{CANDOR_SOURCE_DIR} + "/conf/candor.json", {}, {});
  BOOST_REQUIRE_MESSAGE(cfg.ok(), (cfg.ok() ? "" : cfg.err().message));
  return *cfg;
}

labelled_question question_with(std::vector<expected_passage> expected) {
  labelled_question q;
  q.id = "x";
  q.question = "q";
  q.expected = std::move(expected);
  return q;
}

} // namespace

BOOST_AUTO_TEST_SUITE(eval_ablation)

BOOST_AUTO_TEST_CASE(the_labelled_set_is_large_and_balanced) {
  const auto& set = shipped_set();
  BOOST_TEST(set.questions.size() >= 120u);
  size_t answerable = 0;
  for (const auto& q : set.questions)
    answerable += q.answerable ? 1 : 0;
  auto share = static_cast<double>(answerable)
               / static_cast<double>(set.questions.size());
  BOOST_TEST(share >= 0.6);
  BOOST_TEST(share <= 0.8);
  // Both kinds of unanswerable question are there.
  std::set<std::string> kinds;
  for (const auto& q : set.questions)
    if (!q.answerable)
      kinds.insert(q.kind);
  BOOST_TEST(kinds.count("company") == 1u);
  BOOST_TEST(kinds.count("off-topic") == 1u);
}

BOOST_AUTO_TEST_CASE(splits_are_disjoint_stratified_and_mixed) {
  const auto& set = shipped_set();
  auto cal = set.of(split_kind::calibration);
  auto test = set.of(split_kind::test);
  BOOST_TEST(cal.size() + test.size() == set.questions.size());
  std::set<std::string> cal_ids;
  std::set<std::string> cal_texts;
  for (auto* q : cal) {
    cal_ids.insert(q->id);
    cal_texts.insert(q->question);
  }
  size_t cal_answerable = 0;
  size_t test_answerable = 0;
  for (auto* q : cal)
    cal_answerable += q->answerable ? 1 : 0;
  for (auto* q : test) {
    BOOST_TEST(cal_ids.count(q->id) == 0u, q->id);
    BOOST_TEST(cal_texts.count(q->question) == 0u, q->question);
    test_answerable += q->answerable ? 1 : 0;
  }
  // Each split holds both classes, in nearly equal numbers.
  BOOST_TEST(cal_answerable > 0u);
  BOOST_TEST(test_answerable > 0u);
  BOOST_TEST(cal.size() - cal_answerable > 0u);
  BOOST_TEST(test.size() - test_answerable > 0u);
  BOOST_TEST(std::abs(static_cast<long>(cal_answerable)
                      - static_cast<long>(test_answerable))
             <= 1);
  BOOST_TEST(std::abs(static_cast<long>(cal.size() - cal_answerable)
                      - static_cast<long>(test.size() - test_answerable))
             <= 1);
}

BOOST_AUTO_TEST_CASE(expected_chunks_exist_at_the_shipped_chunk_size) {
  const auto& set = shipped_set();
  auto cfg = shipped_config();
  BOOST_TEST(set.chunk_size == static_cast<size_t>(cfg.retrieval.chunk_size));
  auto snap = build_snapshot(kb_dir, set.chunk_size, {});
  BOOST_REQUIRE(snap.ok());
  std::set<std::string> sections;
  for (const auto& c : (*snap)->chunks())
    sections.insert(std::string{section_of(c.id)});
  size_t checked = 0;
  for (const auto& q : set.questions)
    for (const auto& e : q.expected) {
      BOOST_TEST(sections.count(e.doc + "#" + e.section) == 1u,
                 q.id << ": " << e.doc << "#" << e.section);
      BOOST_TEST(!e.chunks.empty(), q.id);
      for (const auto& id : e.chunks) {
        BOOST_TEST(((*snap)->find(id) != nullptr), q.id << ": " << id);
        BOOST_TEST(matches(q, id), q.id << ": " << id);
        ++checked;
      }
    }
  BOOST_TEST(checked >= 120u);
}

BOOST_AUTO_TEST_CASE(section_of_strips_the_chunk_number) {
  BOOST_TEST(section_of("warranty#e-bike-frames-1")
             == "warranty#e-bike-frames");
  BOOST_TEST(section_of("faq#opening-hours-12") == "faq#opening-hours");
  // A section slug ending in a number keeps it; only the last part goes.
  BOOST_TEST(section_of("recalls#batches-2024-1") == "recalls#batches-2024");
  BOOST_TEST(section_of("no-number#x-y") == "no-number#x-y");
  BOOST_TEST(section_of("trailing-") == "trailing-");
}

BOOST_AUTO_TEST_CASE(matching_is_by_document_and_section) {
  auto q
    = question_with({{"warranty", "e-bike-frames", {}}, {"faq", "frames", {}}});
  BOOST_TEST(matches(q, "warranty#e-bike-frames-1"));
  BOOST_TEST(matches(q, "warranty#e-bike-frames-3"));
  BOOST_TEST(matches(q, "faq#frames-1"));
  BOOST_TEST(!matches(q, "warranty#frames-1"));
  BOOST_TEST(!matches(q, "faq#e-bike-frames-1"));
  BOOST_TEST(!matches(q, "garbage"));
}

BOOST_AUTO_TEST_CASE(recall_and_mrr_on_a_hand_made_ranking) {
  auto q = question_with({{"d", "answer", {}}});
  BOOST_TEST(first_match_rank(q, {"d#answer-1", "d#other-1"}) == 1u);
  BOOST_TEST(first_match_rank(q, {"d#other-1", "e#x-1", "d#answer-2"}) == 3u);
  BOOST_TEST(first_match_rank(q, {"d#other-1", "e#answer-1"}) == 0u);
  BOOST_TEST(first_match_rank(q, {}) == 0u);
  // Ranks 1, 3, not found, 2, 5 at k = 3.
  auto m = ranking_quality({1, 3, 0, 2, 5}, 3);
  BOOST_TEST(m.questions == 5u);
  BOOST_TEST(m.recall_at_k == 0.6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(m.mrr == (1.0 + 1.0 / 3 + 0 + 0.5 + 0.2) / 5,
             boost::test_tools::tolerance(1e-12));
  auto empty = ranking_quality({}, 3);
  BOOST_TEST(empty.recall_at_k == 0.0);
  BOOST_TEST(empty.mrr == 0.0);
}

BOOST_AUTO_TEST_CASE(malformed_sets_are_rejected_with_the_question_named) {
  auto ok = parse_labelled_set(R"({"name":"t","chunkSize":600,"questions":[
    {"id":"a","split":"calibration","answerable":true,"question":"q1",
     "expected":[{"doc":"d","section":"s","chunks":["d#s-1"]}]},
    {"id":"b","split":"test","answerable":false,"kind":"company",
     "question":"q2"}]})");
  BOOST_REQUIRE(ok.ok());
  BOOST_TEST(ok->questions.size() == 2u);
  BOOST_TEST(ok->chunk_size == 600u);
  BOOST_TEST(ok->questions[0].expected[0].chunks[0] == "d#s-1");
  BOOST_TEST((ok->questions[1].split == split_kind::test));
  auto dup = parse_labelled_set(R"({"questions":[
    {"id":"a","split":"test","answerable":false,"question":"q"},
    {"id":"a","split":"test","answerable":false,"question":"r"}]})");
  BOOST_REQUIRE(!dup.ok());
  BOOST_TEST(dup.err().message.find("question a") != std::string::npos);
  auto no_expected = parse_labelled_set(R"({"questions":[
    {"id":"z","split":"test","answerable":true,"question":"q"}]})");
  BOOST_REQUIRE(!no_expected.ok());
  BOOST_TEST(no_expected.err().message.find("question z") != std::string::npos);
  auto bad_split = parse_labelled_set(R"({"questions":[
    {"id":"a","split":"train","answerable":false,"question":"q"}]})");
  BOOST_TEST(!bad_split.ok());
  BOOST_TEST(!parse_labelled_set("[1, 2]").ok());
  BOOST_TEST(!parse_labelled_set("{").ok());
}

BOOST_AUTO_TEST_CASE(the_thesaurus_expands_one_way) {
  // The built-in groups and those of the sample documents (their gazetteer).
  auto kb = data::read_kb_thesaurus(std::string{CANDOR_SOURCE_DIR} + "/data/kb");
  BOOST_REQUIRE(kb.ok() && *kb != nullptr);
  auto q = data::analyze_query("How many working days to Italy?", {},
                               kb->get());
  auto terms = q.search_terms();
  auto has = [&](const std::string& t) {
    return std::find(terms.begin(), terms.end(), t) != terms.end();
  };
  BOOST_TEST(has("busi"));
  BOOST_TEST(has("eu"));
  BOOST_TEST(q.expansions.size() == 2u);
  // The documents' own word does not drag in the customer's variants.
  auto back = data::analyze_query("business days").search_terms();
  BOOST_TEST((std::find(back.begin(), back.end(), "work") == back.end()));
  BOOST_TEST(data::thesaurus_size() > 50u);
}

BOOST_AUTO_TEST_CASE(the_ablation_covers_every_mode_and_ships_its_winner) {
  ablation_options opts;
  opts.kb_dir = kb_dir;
  auto report = run_ablation(shipped_set(), opts);
  BOOST_REQUIRE_MESSAGE(report.ok(), (report.ok() ? "" : report.err().message));
  BOOST_REQUIRE_EQUAL(report->rows.size(), 6u);
  for (const auto& r : report->rows) {
    BOOST_TEST(r.ranking.questions > 50u);
    BOOST_TEST(r.ranking.recall_at_k >= 0.0);
    BOOST_TEST(r.ranking.recall_at_k <= 1.0);
    BOOST_TEST(r.ranking.mrr <= r.ranking.recall_at_k + 1.0);
    BOOST_TEST(r.refusal_accuracy > 0.5);
    BOOST_TEST(r.test_questions > r.ranking.questions);
  }
  BOOST_REQUIRE(report->winner < report->rows.size());
  const auto& w = report->rows[report->winner];
  auto cfg = shipped_config();
  BOOST_TEST(cfg.retrieval.mode == data::to_string(w.mode));
  BOOST_TEST(cfg.retrieval.chunk_size == static_cast<int32_t>(w.chunk_size));
  auto table = format_table(*report);
  BOOST_TEST(table.find("<- winner") != std::string::npos);
  auto v = to_json(*report);
  BOOST_TEST(v.as_object().at("rows").as_array().size() == 6u);
}

BOOST_AUTO_TEST_CASE(explain_prints_one_line_per_question) {
  const auto& set = shipped_set();
  auto snap = build_snapshot(kb_dir, 600, {});
  BOOST_REQUIRE(snap.ok());
  auto text = explain_split(**snap, set, split_kind::calibration,
                            data::search_mode::bm25, 3, 10);
  auto cal = set.of(split_kind::calibration);
  BOOST_TEST(static_cast<size_t>(std::count(text.begin(), text.end(), '\n'))
             == cal.size());
  // Lines follow the split's order and carry the class and evidence; no
  // test question appears.
  std::istringstream in{text};
  std::string line;
  for (auto* q : cal) {
    BOOST_REQUIRE(std::getline(in, line));
    BOOST_TEST(line.rfind(q->id + (q->answerable ? " A rank " : " U rank u"), 0)
                 == 0u,
               line);
    BOOST_TEST(line.find(" ev ") != std::string::npos);
  }
  for (auto* q : set.of(split_kind::test))
    BOOST_TEST(text.find(q->question) == std::string::npos, q->id);
  // The CLI allows --explain on the calibration split only.
  auto r = test::run_candor_eval({"ablation", "--explain"});
  BOOST_TEST(r.exit_code == 2);
  r = test::run_candor_eval(
    {"ablation", "--split", "calibration", "--explain"});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_TEST(static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n'))
             == cal.size());
}

BOOST_AUTO_TEST_SUITE_END()
