// Tests of the embedders: text analysis, SHA-256, vector blobs, TF-IDF and
// BM25 weights, fingerprints and state round trips.

#include "data/retrieval/embedder.hpp"

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

using namespace candor;
using namespace candor::data;

namespace {

using terms = std::vector<std::string>;

const std::vector<std::string> passages = {
  "Returns are free for Kestrel Club members within the 30-day window.",
  "Express shipping costs 9.95 per order and is only available in Zone A.",
  "Charge the e-bike battery to 60% before storing it for the winter.",
  "Tubeless tyres need 40 ml of sealant; top the sealant up every months.",
  "A gift card is valid for two years from the day it was bought.",
};

double norm(const sparse_vector& v) {
  double s = 0;
  for (auto x : v.value)
    s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

bool ascending(const sparse_vector& v) {
  for (size_t i = 1; i < v.index.size(); ++i)
    if (v.index[i] <= v.index[i - 1])
      return false;
  return v.index.size() == v.value.size();
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_embedder)

BOOST_AUTO_TEST_CASE(analysis_normalizes_drops_stopwords_and_stems) {
  auto t = analyze("How long do I have to RETURN the returned Bikes? 30 days");
  BOOST_TEST((t == terms{"long", "return", "return", "bike", "30", "day"}));
  // Accents and odd characters are folded by domain::normalize first.
  BOOST_TEST((analyze("Crème  brûlée!") == terms{"creme", "brule"}));
  analyzer_options raw;
  raw.stem = false;
  raw.stopwords = false;
  BOOST_TEST((analyze("The Bikes", raw) == terms{"the", "bikes"}));
  BOOST_TEST(is_stopword("the"));
  BOOST_TEST(!is_stopword("bike"));
  BOOST_TEST(analyze("  ?! ").empty());
}

BOOST_AUTO_TEST_CASE(analysis_is_thread_safe) {
  const std::string text = "Charging batteries, storing batteries and "
                           "recycling the charged batteries responsibly";
  auto expected = analyze(text);
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i)
        ok[t] += analyze(text) == expected ? 1 : 0;
    });
  for (auto& th : threads)
    th.join();
  for (auto n : ok)
    BOOST_TEST(n == 300);
}

BOOST_AUTO_TEST_CASE(sha256_matches_the_standard_vector) {
  BOOST_TEST(sha256_hex("abc")
             == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015"
                "ad");
  BOOST_TEST(short_hash("abc") == "ba7816bf8f01cfea");
}

BOOST_AUTO_TEST_CASE(vectors_round_trip_through_blobs) {
  sparse_vector v;
  v.index = {1, 7, 4000000000u};
  v.value = {0.5f, -1.25f, 3.0f};
  auto blob = encode(v);
  BOOST_TEST(blob.size() == 4u + 8u * 3u);
  auto back = decode(blob);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->index == v.index);
  BOOST_TEST(back->value == v.value);
  BOOST_TEST(!decode("").ok());
  BOOST_TEST(!decode(blob.substr(0, blob.size() - 1)).ok());
  sparse_vector unsorted;
  unsorted.index = {5, 2};
  unsorted.value = {1, 1};
  BOOST_TEST(!decode(encode(unsorted)).ok());
}

BOOST_AUTO_TEST_CASE(dot_product_of_sparse_vectors) {
  sparse_vector a;
  a.index = {1, 3, 5};
  a.value = {1, 2, 3};
  sparse_vector b;
  b.index = {0, 3, 5, 9};
  b.value = {7, 10, 100, 1};
  BOOST_TEST(dot(a, b) == 320.0);
  BOOST_TEST(dot(a, sparse_vector{}) == 0.0);
}

BOOST_AUTO_TEST_CASE(tfidf_vectors_are_unit_cosines) {
  tfidf_embedder e;
  e.fit(passages);
  BOOST_TEST(e.corpus_size() == passages.size());
  for (const auto& p : passages) {
    auto v = e.embed_document(p);
    BOOST_TEST(ascending(v));
    BOOST_TEST(std::abs(norm(v) - 1.0) < 1e-5);
    for (auto i : v.index)
      BOOST_TEST(i < e.dimensions());
    BOOST_TEST(std::abs(dot(v, e.embed_query(p)) - 1.0) < 1e-5);
  }
  auto q = e.embed_query("How much is express shipping?");
  auto best = dot(q, e.embed_document(passages[1]));
  for (size_t i = 0; i < passages.size(); ++i)
    if (i != 1)
      BOOST_TEST(dot(q, e.embed_document(passages[i])) < best);
  BOOST_TEST(dot(e.embed_query("zebra umbrella"), e.embed_document(passages[0]))
             == 0.0);
  BOOST_TEST(e.embed_query("the and of").size() == 0u);
}

BOOST_AUTO_TEST_CASE(tfidf_rare_features_weigh_more) {
  tfidf_params p;
  p.bigrams = false;
  tfidf_embedder e{p};
  e.fit_terms({{"bike", "chain"}, {"bike", "tyre"}, {"bike", "saddl"}});
  auto v = e.embed_document_terms({"bike", "chain"});
  BOOST_REQUIRE_EQUAL(v.size(), 2u);
  auto f_bike = e.features({"bike"}).front();
  auto f_chain = e.features({"chain"}).front();
  BOOST_TEST(e.idf(f_chain) > e.idf(f_bike));
  auto weight = [&](uint32_t f) {
    for (size_t i = 0; i < v.size(); ++i)
      if (v.index[i] == f)
        return v.value[i];
    return 0.0f;
  };
  BOOST_TEST(weight(f_chain) > weight(f_bike));
  // idf = ln((1 + N) / (1 + df)) + 1
  BOOST_TEST(std::abs(e.idf(f_bike) - 1.0) < 1e-12);
  BOOST_TEST(std::abs(e.idf(f_chain) - (std::log(2.0) + 1.0)) < 1e-12);
}

BOOST_AUTO_TEST_CASE(tfidf_bigrams_and_dimensions) {
  tfidf_params with;
  tfidf_params without;
  without.bigrams = false;
  tfidf_embedder a{with};
  tfidf_embedder b{without};
  terms t{"return", "window", "day"};
  BOOST_TEST(a.features(t).size() == 5u);
  BOOST_TEST(b.features(t).size() == 3u);
  tfidf_params tiny;
  tiny.dimensions = 8;
  tfidf_embedder c{tiny};
  c.fit(passages);
  for (const auto& p : passages)
    for (auto i : c.embed_document(p).index)
      BOOST_TEST(i < 8u);
}

BOOST_AUTO_TEST_CASE(tfidf_fingerprint_names_parameters_and_idf) {
  tfidf_embedder a;
  tfidf_embedder b;
  a.fit(passages);
  b.fit(passages);
  BOOST_TEST(a.fingerprint() == b.fingerprint());
  BOOST_TEST(a.fingerprint().rfind("tfidf(dims=262144,bigrams=1,", 0) == 0);
  BOOST_TEST(a.fingerprint().find(")#") != std::string::npos);
  // Another corpus: another IDF table, another fingerprint.
  auto more = passages;
  more.push_back("Helmets should be replaced after any crash.");
  b.fit(more);
  BOOST_TEST(a.signature() == b.signature());
  BOOST_TEST(a.fingerprint() != b.fingerprint());
  // Other parameters: another signature.
  tfidf_params p;
  p.dimensions = 1024;
  tfidf_embedder c{p};
  c.fit(passages);
  BOOST_TEST(c.signature() != a.signature());
  BOOST_TEST(c.fingerprint().find("dims=1024") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(tfidf_state_round_trips) {
  tfidf_embedder a;
  a.fit(passages);
  tfidf_embedder b;
  BOOST_TEST(!b.restore(a.state()));
  BOOST_TEST(b.fingerprint() == a.fingerprint());
  BOOST_TEST(b.corpus_size() == a.corpus_size());
  auto va = a.embed_document(passages[2]);
  auto vb = b.embed_document(passages[2]);
  BOOST_TEST(va.index == vb.index);
  BOOST_TEST(va.value == vb.value);
  // Malformed states are refused and leave the embedder as it was.
  BOOST_TEST(static_cast<bool>(b.restore("nonsense")));
  BOOST_TEST(static_cast<bool>(b.restore("tfidf-state v1\nN 3\n12 x\n")));
  BOOST_TEST(static_cast<bool>(b.restore("tfidf-state v1\nN 3\n12 9\n")));
  tfidf_params p;
  p.dimensions = 16;
  tfidf_embedder small{p};
  auto err = small.restore("tfidf-state v1\nN 3\n100 1\n");
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(err.message.find("outside 16 dimensions") != std::string::npos);
  BOOST_TEST(b.fingerprint() == a.fingerprint());
}

BOOST_AUTO_TEST_CASE(bm25_matches_the_formula) {
  bm25_embedder e;
  std::vector<terms> docs{{"bike", "tyre", "bike"}, {"tyre"}, {"chain", "oil"}};
  e.fit_terms(docs);
  BOOST_TEST(e.corpus_size() == 3u);
  BOOST_TEST(e.dimensions() == 4u); // bike chain oil tyre
  BOOST_TEST(e.average_length() == 2.0);
  auto v = e.embed_document_terms(docs[0]);
  BOOST_REQUIRE_EQUAL(v.size(), 2u);
  // Vocabulary is sorted: bike = 0, chain = 1, oil = 2, tyre = 3.
  BOOST_TEST(v.index[0] == 0u);
  BOOST_TEST(v.index[1] == 3u);
  double idf_bike = std::log((3 - 1 + 0.5) / (1 + 0.5));
  double norm = 1 - 0.75 + 0.75 * 3 / 2.0;
  double expected = idf_bike * 2 * 2.2 / (2 + 1.2 * norm);
  BOOST_TEST(std::abs(v.value[0] - expected) < 1e-6);
  // tyre is in 2 of 3 passages: FTS5 clamps its idf to 1e-6.
  BOOST_TEST(e.idf(3) == 1e-6);
  // Queries: 1 per distinct known term.
  auto q = e.embed_query_terms({"bike", "bike", "zebra", "oil"});
  BOOST_TEST(q.index == (std::vector<uint32_t>{0, 2}));
  BOOST_TEST(q.value == (std::vector<float>{1.0f, 1.0f}));
  BOOST_TEST(std::abs(dot(q, v) - expected) < 1e-6);
  // One term's feature, as a one-term query finds it.
  for (std::string t : {"bike", "chain", "oil", "tyre", "zebra", ""}) {
    auto one = e.embed_query_terms({t});
    auto id = e.term_id(t);
    BOOST_TEST(id.has_value() == (one.size() == 1), t);
    if (id && one.size() == 1)
      BOOST_TEST(*id == one.index[0], t);
  }
  BOOST_TEST(!e.term_id("zebra").has_value());
  BOOST_TEST(e.term_id("oil").value_or(99) == 2u);
}

BOOST_AUTO_TEST_CASE(bm25_fingerprint_and_state) {
  bm25_embedder a;
  a.fit(passages);
  BOOST_TEST(a.fingerprint().rfind("bm25(k1=1.2,b=0.75,", 0) == 0);
  bm25_embedder b;
  BOOST_TEST(!b.restore(a.state()));
  BOOST_TEST(b.fingerprint() == a.fingerprint());
  auto va = a.embed_document(passages[3]);
  auto vb = b.embed_document(passages[3]);
  BOOST_TEST(va.index == vb.index);
  BOOST_TEST(va.value == vb.value);
  BOOST_TEST(static_cast<bool>(
    b.restore("bm25-state v1\nN 2\nterms 4\nzeta 1\nalpha 1\n")));
  bm25_params p;
  p.k1 = 1.5;
  bm25_embedder c{p};
  c.fit(passages);
  BOOST_TEST(c.signature() != a.signature());
}

BOOST_AUTO_TEST_CASE(one_interface_for_every_embedder) {
  std::vector<std::unique_ptr<embedder>> all;
  all.push_back(std::make_unique<tfidf_embedder>());
  all.push_back(std::make_unique<bm25_embedder>());
  for (auto& e : all) {
    e->fit(passages);
    auto q = e->embed_query("Is a gift card valid for two years?");
    size_t best = 0;
    double best_score = -1;
    for (size_t i = 0; i < passages.size(); ++i) {
      auto s = dot(q, e->embed_document(passages[i]));
      if (s > best_score) {
        best_score = s;
        best = i;
      }
    }
    BOOST_TEST(best == 4u, e->name());
    BOOST_TEST(e->fingerprint().rfind(e->signature() + "#", 0) == 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
