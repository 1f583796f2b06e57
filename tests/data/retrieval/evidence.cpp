// Tests of the evidence score: its parts, IDF-weighted unknown terms, and
// thesaurus equivalents.

#include "data/retrieval/evidence.hpp"

#include <cmath>
#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>

#include "data/retrieval/query.hpp"
#include "domain/build_info.hpp"
#include "eval/ablation.hpp"

using namespace candor;
using namespace candor::data;

namespace {

/// The real corpus at the shipped chunk size, built once.
const retrieval_snapshot& corpus() {
  static const auto snap = [] {
    auto s = eval::build_snapshot(std::string{CANDOR_SOURCE_DIR} + "/data/kb",
                                  600, {});
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.err().message));
    return *s;
  }();
  return *snap;
}

evidence_features details(const std::string& q) {
  const auto& snap = corpus();
  return evidence_details(snap, q, snap.search(q, 3, search_mode::bm25));
}

bool in_vocabulary(const std::string& term) {
  return corpus().bm25().embed_query_terms({term}).size() > 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_evidence)

BOOST_AUTO_TEST_CASE(the_score_is_the_product_of_its_parts) {
  for (std::string q : {"How long is the warranty on an e-bike battery?",
                        "What is the IBAN for paying an invoice?",
                        "Who is the chief executive of Kestrel?"}) {
    const auto& snap = corpus();
    auto hits = snap.search(q, 3, search_mode::bm25);
    BOOST_REQUIRE(!hits.empty());
    auto d = evidence_details(snap, q, hits);
    BOOST_TEST(d.score == d.cosine * d.coverage * (1 - d.oov_share),
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(evidence_score(snap, q, hits) == d.score);
    BOOST_TEST(d.score >= 0.0);
    BOOST_TEST(d.score <= 1.0);
    BOOST_TEST(d.best < hits.size());
  }
  auto none = evidence_details(corpus(), "anything", {});
  BOOST_TEST(none.score == 0.0);
  BOOST_TEST(none.oov_share == 0.0);
}

BOOST_AUTO_TEST_CASE(out_of_vocabulary_share_is_idf_weighted) {
  // "iban" is a word no document uses; "invoic" is one they do.
  BOOST_REQUIRE(!in_vocabulary("iban"));
  BOOST_REQUIRE(in_vocabulary("invoic"));
  const auto& snap = corpus();
  auto n = static_cast<double>(snap.size());
  auto unseen = std::log((n + 0.5) / 0.5);
  auto invoice
    = snap.bm25().idf(snap.bm25().embed_query_terms({"invoic"}).index[0]);
  auto d = details("IBAN invoice");
  BOOST_TEST(d.oov_share == unseen / (unseen + invoice),
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(details("invoice").oov_share == 0.0);
  // An unknown word lowers the evidence of an otherwise answerable
  // question.
  auto known = details("How long is the warranty on an e-bike battery?");
  auto with_unknown
    = details("How long is the warranty on an e-bike battery xylophone?");
  BOOST_TEST(known.oov_share == 0.0);
  BOOST_TEST(with_unknown.oov_share > 0.0);
  BOOST_TEST(with_unknown.score < known.score);
}

BOOST_AUTO_TEST_CASE(a_thesaurus_equivalent_makes_a_term_known) {
  // The corpus never says "Italy", but its gazetteer (data/kb's
  // thesaurus.json) maps it to "EU", which it uses: the term is not out of
  // vocabulary.
  BOOST_REQUIRE(!in_vocabulary("itali"));
  auto q = analyze_query("Italy", corpus().bm25().analysis(),
                         corpus().thesaurus());
  BOOST_REQUIRE(!q.expansions.empty());
  BOOST_TEST(details("How many days does a parcel take to Italy?").oov_share
             == 0.0);
}

BOOST_AUTO_TEST_CASE(a_prepared_question_gives_what_the_text_gives) {
  // The retrieve node analyses a question once (prepare_question) for the
  // search and the evidence. Over every labelled question, both splits:
  // the prepared parts are the analysis and the answer type; the hits,
  // their scores and the evidence equal those of the text overloads; and a
  // question prepared with other analyzer options (analysed again inside)
  // gives the same as one prepared with the snapshot's.
  auto set = eval::load_labelled_set(eval::default_labelled_set_path());
  BOOST_REQUIRE(set.ok());
  const auto& snap = corpus();
  const auto& analysis = snap.tfidf().analysis();
  auto other = analysis;
  other.stem = !other.stem;
  auto same_hits
    = [](const std::vector<search_hit>& a, const std::vector<search_hit>& b) {
        bool same = a.size() == b.size();
        for (size_t i = 0; same && i < a.size(); ++i)
          same = a[i].chunk_id == b[i].chunk_id && a[i].score == b[i].score;
        return same;
      };
  auto same_evidence
    = [](const evidence_features& a, const evidence_features& b) {
        return a.score == b.score && a.best == b.best && a.type == b.type
               && a.type_found == b.type_found
               && a.missing_names == b.missing_names;
      };
  size_t compared = 0;
  size_t typed = 0;
  size_t differences = 0;
  for (const auto& lq : set->questions) {
    const auto& text = lq.question;
    auto q = prepare_question(text, analysis, snap.thesaurus());
    auto o = prepare_question(text, other, snap.thesaurus());
    auto reference = analyze_query(text, analysis, snap.thesaurus());
    differences += q.query.terms == reference.terms
                       && q.query.search_terms() == reference.search_terms()
                       && q.type == expected_answer_type(text)
                       && o.type == q.type
                     ? 0
                     : 1;
    typed += q.type != answer_type::none ? 1 : 0;
    for (auto mode :
         {search_mode::bm25, search_mode::tfidf, search_mode::fusion}) {
      auto hits = snap.search(text, 3, mode);
      auto ev = evidence_details(snap, text, hits);
      bool same = same_hits(hits, snap.search(q, 3, mode))
                  && same_hits(hits, snap.search(o, 3, mode))
                  && same_evidence(ev, evidence_details(snap, q, hits))
                  && same_evidence(ev, evidence_details(snap, o, hits))
                  && (hits.empty() || ev.type == q.type);
      differences += same ? 0 : 1;
      ++compared;
    }
  }
  BOOST_TEST(compared == set->questions.size() * 3);
  BOOST_TEST(typed > 10u); // the answer type is exercised
  BOOST_TEST(differences == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
