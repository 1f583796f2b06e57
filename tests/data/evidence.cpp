#include "data/evidence.hpp"

#include <cmath>
#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>

#include "data/query.hpp"
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
    BOOST_TEST(d.score
                 == d.cosine * d.coverage * (1 - d.oov_share),
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
  auto invoice = snap.bm25().idf(snap.bm25().embed_query_terms({"invoic"})
                                   .index[0]);
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
  // The corpus never says "Italy", but the gazetteer maps it to "EU",
  // which it uses: the term is not out of vocabulary.
  BOOST_REQUIRE(!in_vocabulary("itali"));
  auto q = analyze_query("Italy", corpus().bm25().analysis());
  BOOST_REQUIRE(!q.expansions.empty());
  BOOST_TEST(details("How many days does a parcel take to Italy?").oov_share
             == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
