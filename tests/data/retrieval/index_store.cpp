// Tests of retrieval snapshots: search modes and scores, agreement with
// FTS5, pruning, loading, and refusing mismatched or tampered indexes.

#include "data/retrieval/index_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

#include "data/retrieval/ingest.hpp"
#include "data/retrieval/query.hpp"
#include "domain/guard/sanitizer.hpp"
#include "domain/build_info.hpp"

using namespace candor;
using namespace candor::data;

namespace {

const std::string kb_dir = std::string{CANDOR_SOURCE_DIR} + "/data/kb";

using candor::test::temp_dir;

/// The real corpus ingested once into a temp index, loaded as a snapshot.
struct corpus_fixture {
  temp_dir dir;
  std::string index;
  std::shared_ptr<const retrieval_snapshot> snap;

  corpus_fixture() : index(dir.file("index.db")) {
    auto r = ingest(kb_dir, index);
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    auto s = load_snapshot(index, retrieval_params{});
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.err().message));
    snap = *s;
  }
};

const search_mode all_modes[]
  = {search_mode::tfidf, search_mode::bm25, search_mode::fusion};

bool from_doc(const search_hit& h, const std::string& slug) {
  return h.chunk_id.rfind(slug + "#", 0) == 0;
}

/// Questions with the document that must rank first in every mode.
const std::vector<std::pair<std::string, std::string>> sanity = {
  {"What is the 30-day return window?", "returns-and-exchanges"},
  {"How much does express shipping cost?", "shipping-costs-and-free-shipping"},
  {"What do I need for a tubeless setup?", "tyre-and-tubeless-setup-guide"},
  {"How should I store my e-bike battery in winter?",
   "e-bike-battery-care-and-safety"},
  {"Which retailers qualify for a price match?", "price-match-policy"},
  {"How do I request deletion of my personal data?",
   "privacy-and-data-protection"},
  {"Which bikes do you accept for trade-in?", "trade-in-programme"},
};

const std::vector<std::string> sample_queries = {
  "return window",
  "express shipping cost zone",
  "e-bike battery storage winter charge",
  "tubeless sealant puncture",
  "gift card valid lost",
  "Kestrel Club membership pause cancel",
  "warranty claim frame crack",
  "partner dealer margin payment terms",
  "cookie consent analytics",
  "helmet crash replacement",
};

} // namespace

BOOST_AUTO_TEST_SUITE(data_index_store)

BOOST_AUTO_TEST_CASE(search_modes_have_names) {
  search_mode m = search_mode::tfidf;
  BOOST_TEST(parse_search_mode("fusion", m));
  BOOST_TEST((m == search_mode::fusion));
  BOOST_TEST(parse_search_mode("bm25", m));
  BOOST_TEST((m == search_mode::bm25));
  BOOST_TEST(!parse_search_mode("dense", m));
  BOOST_TEST(to_string(search_mode::tfidf) == "tfidf");
}

BOOST_AUTO_TEST_CASE(posting_lists_are_sorted_by_weight) {
  std::vector<sparse_vector> vs(3);
  vs[0].index = {0, 2};
  vs[0].value = {0.1f, 0.9f};
  vs[1].index = {0};
  vs[1].value = {0.7f};
  vs[2].index = {0, 2};
  vs[2].value = {0.7f, 0.0f}; // not positive: no posting
  auto p = posting_lists::build(vs, 3);
  BOOST_REQUIRE_EQUAL(p.offsets.size(), 4u);
  BOOST_TEST(p.size() == 4u);
  // Feature 0: weights 0.7 (doc 1), 0.7 (doc 2), 0.1 (doc 0).
  BOOST_TEST(p.offsets[1] - p.offsets[0] == 3u);
  BOOST_TEST(p.docs[0] == 1u);
  BOOST_TEST(p.docs[1] == 2u);
  BOOST_TEST(p.docs[2] == 0u);
  BOOST_TEST(p.offsets[2] == p.offsets[1]); // feature 1: empty
  BOOST_TEST(p.offsets[3] - p.offsets[2] == 1u);
  BOOST_TEST(p.docs[3] == 0u);
}

BOOST_FIXTURE_TEST_CASE(real_corpus_snapshot_sizes, corpus_fixture) {
  BOOST_TEST(snap->document_count() >= 24u);
  BOOST_TEST(snap->size() >= 200u);
  BOOST_TEST(snap->posting_count() > snap->size());
  auto c = snap->find("returns-and-exchanges#the-30-day-return-window-1");
  BOOST_REQUIRE(c != nullptr);
  BOOST_TEST(c->doc_title == "Returns and Exchanges");
  BOOST_TEST(c->heading == "The 30-day return window");
  BOOST_TEST(snap->find("no-such#chunk-1") == nullptr);
  auto spans = snap->redacted_spans();
  BOOST_REQUIRE_EQUAL(spans.size(), 1u);
  BOOST_TEST(spans[0].find("TAILWIND-7731") != std::string::npos);
  for (const auto& ch : snap->chunks())
    BOOST_TEST(ch.text.find("TAILWIND") == std::string::npos, ch.id);
  BOOST_TEST(snap->fingerprint(search_mode::tfidf)
             == snap->tfidf().fingerprint());
  BOOST_TEST(snap->fingerprint(search_mode::fusion).rfind("rrf(k=60,", 0) == 0);
}

BOOST_FIXTURE_TEST_CASE(retrieval_sanity_on_the_real_corpus, corpus_fixture) {
  for (const auto& [question, slug] : sanity)
    for (auto mode : all_modes) {
      auto hits = snap->search(question, 3, mode);
      BOOST_REQUIRE_EQUAL(hits.size(), 3u);
      BOOST_TEST(from_doc(hits[0], slug), to_string(mode)
                                            << ": " << question << " -> "
                                            << hits[0].chunk_id);
      for (size_t i = 1; i < hits.size(); ++i)
        BOOST_TEST(hits[i - 1].score >= hits[i].score);
    }
  // The return-window passage itself comes first in every mode.
  for (auto mode : all_modes) {
    auto hits = snap->search("How many days is the return window?", 3, mode);
    BOOST_REQUIRE(!hits.empty());
    BOOST_TEST(hits[0].chunk_id
                 == "returns-and-exchanges#the-30-day-return-window-1",
               to_string(mode) << " -> " << hits[0].chunk_id);
  }
}

BOOST_FIXTURE_TEST_CASE(scores_and_components, corpus_fixture) {
  // Without the document-level part and the heading field, a single
  // mode's score is its component.
  search_options parts_off;
  parts_off.document_weight = 0;
  parts_off.heading_weight = 0;
  auto t = snap->search("express shipping", 5, search_mode::tfidf, parts_off);
  BOOST_REQUIRE(!t.empty());
  BOOST_TEST(t[0].score <= 1.0 + 1e-6);
  BOOST_TEST(t[0].score == t[0].tfidf);
  BOOST_TEST(t[0].bm25 == 0.0);
  auto b = snap->search("express shipping", 5, search_mode::bm25, parts_off);
  BOOST_TEST(b[0].score == b[0].bm25);
  // With the server's defaults, the document-level part comes on top.
  for (auto mode : {search_mode::tfidf, search_mode::bm25})
    for (const auto& h : snap->search("express shipping", 5, mode)) {
      BOOST_TEST(h.score >= (mode == search_mode::tfidf ? h.tfidf : h.bm25)
                              * search_options{}.intro_weight);
      BOOST_TEST((mode == search_mode::tfidf ? h.bm25 : h.tfidf) == 0.0);
    }
  auto f = snap->search("express shipping", 5, search_mode::fusion);
  BOOST_REQUIRE(!f.empty());
  // At best first in both lists: 2 / (60 + 1).
  BOOST_TEST(f[0].score <= 2.0 / 61 + 1e-12);
  BOOST_TEST(f[0].tfidf > 0.0);
  BOOST_TEST(f[0].bm25 > 0.0);
  BOOST_TEST(snap->search("express shipping", 0, search_mode::fusion).empty());
  BOOST_TEST(snap->search("", 3, search_mode::bm25).empty());
  BOOST_TEST(snap->search("zyxxy qwrtz", 3, search_mode::tfidf).empty());
  BOOST_TEST(snap->search("the of and", 3, search_mode::fusion).empty());
  BOOST_TEST(snap->search("shipping", 1000, search_mode::bm25).size()
             < snap->size());
}

BOOST_FIXTURE_TEST_CASE(bm25_in_memory_agrees_with_fts5, corpus_fixture) {
  auto db = open_index_for_reading(index);
  BOOST_REQUIRE(db.ok());
  search_options exact;
  exact.prune_ratio = 0;
  exact.intro_weight = 1;       // FTS5 knows no ranking prior,
  exact.document_weight = 0;    // no document-level part
  exact.heading_weight = 0;     // no heading field
  exact.answer_type_weight = 1; // and no answer-type prior
  for (const auto& q : sample_queries) {
    auto ours = snap->search(q, 10, search_mode::bm25, exact);
    auto ref = fts5_search(*db, q, 10);
    BOOST_REQUIRE_MESSAGE(ref.ok(), (ref.ok() ? "" : ref.err().message));
    BOOST_REQUIRE_EQUAL(ours.size(), ref->size());
    for (size_t i = 0; i < ours.size(); ++i) {
      const auto& r = (*ref)[i];
      BOOST_TEST(std::abs(ours[i].score - r.score) <= 1e-4 * r.score + 1e-9,
                 q << " #" << i << ": " << ours[i].score << " vs " << r.score);
      // Same chunk, unless two scores tie (then the order may differ).
      bool tie = (i > 0 && std::abs((*ref)[i - 1].score - r.score) < 1e-5)
                 || (i + 1 < ref->size()
                     && std::abs((*ref)[i + 1].score - r.score) < 1e-5);
      if (!tie)
        BOOST_TEST(ours[i].chunk_id == r.chunk_id, q << " #" << i);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(pruning_keeps_the_top_results, corpus_fixture) {
  search_options exact;
  exact.prune_ratio = 0;
  for (const auto& q : sample_queries)
    for (auto mode : all_modes) {
      auto a = snap->search(q, 3, mode);
      auto b = snap->search(q, 3, mode, exact);
      BOOST_REQUIRE_EQUAL(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        BOOST_TEST(a[i].chunk_id == b[i].chunk_id, q << " " << to_string(mode));
    }
}

BOOST_FIXTURE_TEST_CASE(the_top_k_are_a_prefix_of_the_full_ranking,
                        corpus_fixture) {
  // The k kept hits are picked from all scored chunks (selection, then a
  // sort of the k): for every k they must be the first k of a deeper
  // ranking, in its order. Priors that look deeper than k are off, and 40
  // stays within the depth fusion ranks each list to anyway.
  search_options flat;
  flat.prune_ratio = 0;
  flat.intro_weight = 1;
  flat.answer_type_weight = 1;
  for (const auto& q : sample_queries)
    for (auto mode : all_modes) {
      auto deep = snap->search(q, 40, mode, flat);
      for (size_t k = 1; k <= 20; ++k) {
        auto top = snap->search(q, k, mode, flat);
        BOOST_REQUIRE_EQUAL(top.size(), std::min(k, deep.size()));
        for (size_t i = 0; i < top.size(); ++i) {
          BOOST_TEST(top[i].chunk_id == deep[i].chunk_id,
                     q << " " << to_string(mode) << " k=" << k);
          BOOST_TEST(top[i].score == deep[i].score);
        }
      }
    }
}

BOOST_FIXTURE_TEST_CASE(snapshot_is_shared_across_threads, corpus_fixture) {
  std::vector<std::vector<std::string>> expected;
  for (const auto& q : sample_queries) {
    std::vector<std::string> ids;
    for (auto mode : all_modes)
      for (const auto& h : snap->search(q, 5, mode))
        ids.push_back(h.chunk_id);
    expected.push_back(ids);
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (size_t i = 0; i < sample_queries.size(); ++i) {
          auto q = (i + static_cast<size_t>(t)) % sample_queries.size();
          std::vector<std::string> ids;
          for (auto mode : all_modes)
            for (const auto& h : snap->search(sample_queries[q], 5, mode))
              ids.push_back(h.chunk_id);
          if (ids != expected[q])
            ++mismatches[t];
        }
    });
  for (auto& th : threads)
    th.join();
  for (auto m : mismatches)
    BOOST_TEST(m == 0);
}

BOOST_FIXTURE_TEST_CASE(chunk_terms_are_the_analysis_kept_once,
                        corpus_fixture) {
  // Four threads ask for every chunk's terms at once: each gets the one
  // kept entry, and it equals a fresh analysis of the chunk.
  std::vector<std::vector<const retrieval_snapshot::chunk_terms*>> seen(4);
  std::vector<std::thread> threads;
  for (auto& mine : seen)
    threads.emplace_back([&] {
      for (size_t i = 0; i < snap->size(); ++i)
        mine.push_back(&snap->terms_of(i));
    });
  for (auto& th : threads)
    th.join();
  for (size_t t = 1; t < seen.size(); ++t)
    BOOST_TEST((seen[t] == seen[0]));
  for (size_t i = 0; i < snap->size(); ++i) {
    const auto& got = snap->terms_of(i);
    BOOST_TEST(&got == seen[0][i]);
    auto terms
      = analyze(indexed_text(snap->chunks()[i]), snap->tfidf().analysis());
    auto vec = snap->tfidf().embed_document_terms(terms);
    BOOST_TEST(got.tfidf.index == vec.index);
    BOOST_TEST(got.tfidf.value == vec.value);
    std::sort(terms.begin(), terms.end());
    terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
    BOOST_TEST(got.distinct == terms);
    for (const auto& term : terms)
      BOOST_TEST(got.contains(term));
    BOOST_TEST(!got.contains("zzz-not-a-term"));
  }
}

BOOST_FIXTURE_TEST_CASE(built_in_memory_equals_loaded, corpus_fixture) {
  auto built = retrieval_snapshot::build(snap->chunks(), retrieval_params{},
                                         snap->shared_thesaurus());
  BOOST_TEST(built->size() == snap->size());
  BOOST_TEST(built->fingerprint(search_mode::tfidf)
             == snap->fingerprint(search_mode::tfidf));
  BOOST_TEST(built->fingerprint(search_mode::bm25)
             == snap->fingerprint(search_mode::bm25));
  for (const auto& q : sample_queries)
    for (auto mode : all_modes) {
      auto a = snap->search(q, 5, mode);
      auto b = built->search(q, 5, mode);
      BOOST_REQUIRE_EQUAL(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        BOOST_TEST(a[i].chunk_id == b[i].chunk_id);
        BOOST_TEST(a[i].score == b[i].score);
      }
    }
}

BOOST_FIXTURE_TEST_CASE(fingerprint_mismatch_is_refused, corpus_fixture) {
  retrieval_params other;
  other.tfidf.dimensions = 1u << 16;
  auto s = load_snapshot(index, other);
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST((s.err().code == domain::ec::config_invalid));
  const auto& msg = s.err().message;
  BOOST_TEST(msg.find(snap->tfidf().fingerprint()) != std::string::npos, msg);
  BOOST_TEST(msg.find(tfidf_embedder{other.tfidf}.signature())
               != std::string::npos,
             msg);
  retrieval_params bm;
  bm.bm25.b = 0.5;
  auto s2 = load_snapshot(index, bm);
  BOOST_REQUIRE(!s2.ok());
  BOOST_TEST(s2.err().message.find(snap->bm25().fingerprint())
             != std::string::npos);
  BOOST_TEST(s2.err().message.find("b=0.5") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(chunking_mismatch_is_refused, corpus_fixture) {
  // The fixture ingested with the default chunk_options (target 600).
  chunk_options smaller;
  smaller.target_chars = 400;
  auto s = load_snapshot(index, retrieval_params{}, smaller);
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST((s.err().code == domain::ec::config_invalid));
  const auto& msg = s.err().message;
  BOOST_TEST(msg.find(chunk_options{}.describe()) != std::string::npos, msg);
  BOOST_TEST(msg.find(smaller.describe()) != std::string::npos, msg);
  BOOST_TEST(msg.find("retrieval.chunkSize 400") != std::string::npos, msg);
  BOOST_TEST(msg.find("candor ingest") != std::string::npos, msg);
  chunk_options unsanitized;
  unsanitized.sanitize = false;
  BOOST_TEST(!load_snapshot(index, retrieval_params{}, unsanitized).ok());
  // The options it was built with load, as does a caller that checks none.
  BOOST_TEST(load_snapshot(index, retrieval_params{}, chunk_options{}).ok());
  BOOST_TEST(load_snapshot(index, retrieval_params{}).ok());
}

BOOST_FIXTURE_TEST_CASE(tampered_state_is_refused, corpus_fixture) {
  {
    auto db = database::open(index);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(!db->exec("UPDATE embedders SET state = replace(state, "
                            "'N "
                            + std::to_string(snap->size()) + "', 'N "
                            + std::to_string(snap->size() + 1)
                            + "') WHERE name = 'tfidf'"));
    BOOST_REQUIRE(db->changes() == 1);
  }
  auto s = load_snapshot(index, retrieval_params{});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.err().message.find(snap->tfidf().fingerprint())
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(missing_or_foreign_files_are_errors) {
  temp_dir dir;
  auto s = load_snapshot(dir.file("nothing.db"), retrieval_params{});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.err().message.find("nothing.db") != std::string::npos);
  {
    auto db = database::open(dir.file("other.db"));
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(!db->exec("CREATE TABLE t(x)"));
  }
  auto s2 = load_snapshot(dir.file("other.db"), retrieval_params{});
  BOOST_REQUIRE(!s2.ok());
  BOOST_TEST(s2.err().message.find("not a retrieval index")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(indexed_text_boosts_headings) {
  chunk c;
  c.doc_title = "Returns";
  c.heading = "Window > Holiday extension";
  c.text = "Body.";
  BOOST_TEST(indexed_text(c)
             == "Returns\nWindow > Holiday extension\nHoliday extension\n"
                "Body.");
  c.heading = "Returns";
  BOOST_TEST(indexed_text(c) == "Returns\nBody.");
  BOOST_TEST(fts_terms(c, {}) == "return bodi");
}

namespace {

chunk make_chunk(const std::string& doc, const std::string& title,
                 const std::string& heading, const std::string& section,
                 int32_t ordinal, const std::string& text) {
  chunk c;
  c.doc_slug = doc;
  c.doc_title = title;
  c.heading = heading;
  c.id = doc + "#" + section + "-1";
  c.ordinal = ordinal;
  c.text = text;
  return c;
}

/// Three small documents; "club" and "payment" occur in several of them.
std::vector<chunk> small_corpus() {
  return {
    make_chunk("club", "Riders Club", "Riders Club", "riders-club", 0,
               "The Riders Club is a yearly membership with free services."),
    make_chunk("club", "Riders Club", "Failed payments", "failed-payments", 1,
               "When a charge does not go through we retry it twice."),
    make_chunk("club", "Riders Club", "Pausing", "pausing", 2,
               "Members can pause the club for up to two months."),
    make_chunk("pay", "Payments", "Payments", "payments", 0,
               "We accept cards, bank transfer and invoices."),
    make_chunk("pay", "Payments", "Card payments", "card-payments", 1,
               "Card payments are charged when the order ships."),
    make_chunk("pay", "Payments", "Club payments", "club-payments", 2,
               "A club payment uses the card saved in your account."),
    make_chunk("ship", "Shipping", "Shipping", "shipping", 0,
               "Parcels ship from Utrecht within one business day."),
    make_chunk("ship", "Shipping", "Zones", "zones", 1,
               "Zone A is the Benelux; zone B covers Germany and France."),
    make_chunk("returns", "Returns", "Returns", "returns", 0,
               "You can return an item within 30 days of delivery."),
    make_chunk("returns", "Returns", "Refunds", "refunds", 1,
               "Refunds go back to the original method within 14 days."),
    make_chunk("care", "Bike care", "Bike care", "bike-care", 0,
               "Clean the chain every month and check tyre pressure."),
    make_chunk("care", "Bike care", "Brakes", "brakes", 1,
               "Replace brake pads when the groove is gone."),
    make_chunk("helmets", "Helmets", "Helmets", "helmets", 0,
               "Replace a helmet after any crash or after five years."),
  };
}

} // namespace

BOOST_AUTO_TEST_CASE(many_candidates_rank_like_a_full_sort) {
  // Past select_at_most scored chunks the top k come from a k-sized heap
  // instead of a selection: on a corpus where one query term is in every
  // chunk, every k from 1 to 20 must be the first k of the full ranking
  // (k = all chunks: every candidate kept, then sorted).
  const size_t n = retrieval_snapshot::select_at_most + 500;
  std::vector<chunk> chunks;
  for (size_t i = 0; i < n; ++i) {
    auto doc = "doc" + std::to_string(i / 10);
    chunks.push_back(make_chunk(
      doc, "Title " + doc, "Part " + std::to_string(i % 10),
      "part-" + std::to_string(i % 10), static_cast<int32_t>(i % 10),
      "alpha beta" + std::to_string(i % 7) + " gamma" + std::to_string(i % 13)
        + (i % 3 == 0 ? " alpha" : "") + " word" + std::to_string(i)));
  }
  auto snap = retrieval_snapshot::build(chunks, retrieval_params{});
  search_options flat;
  flat.prune_ratio = 0;
  flat.intro_weight = 1;
  flat.answer_type_weight = 1;
  for (auto mode : {search_mode::tfidf, search_mode::bm25}) {
    auto all = snap->search("alpha beta3 gamma5", n, mode, flat);
    BOOST_REQUIRE_EQUAL(all.size(), n); // every chunk scored
    for (size_t k = 1; k <= 20; ++k) {
      auto top = snap->search("alpha beta3 gamma5", k, mode, flat);
      BOOST_REQUIRE_EQUAL(top.size(), k);
      for (size_t i = 0; i < k; ++i) {
        BOOST_TEST(top[i].chunk_id == all[i].chunk_id,
                   to_string(mode) << " k=" << k << " #" << i);
        BOOST_TEST(top[i].score == all[i].score);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(document_and_heading_parts_follow_their_formulas) {
  auto chunks = small_corpus();
  auto snap = retrieval_snapshot::build(chunks, retrieval_params{});
  const auto& sorted = snap->chunks();
  const auto analysis = snap->bm25().analysis();
  // The reference statistics: BM25 over whole documents and over the
  // heading field (empty for a document's introduction).
  std::vector<std::string> slugs;
  std::vector<std::vector<std::string>> doc_terms;
  std::vector<std::vector<std::string>> heading_terms;
  std::vector<size_t> doc_of;
  for (const auto& c : sorted) {
    if (slugs.empty() || slugs.back() != c.doc_slug) {
      slugs.push_back(c.doc_slug);
      doc_terms.emplace_back();
    }
    doc_of.push_back(slugs.size() - 1);
    auto t = analyze(indexed_text(c), analysis);
    doc_terms.back().insert(doc_terms.back().end(), t.begin(), t.end());
    heading_terms.push_back(c.heading == c.doc_title
                              ? std::vector<std::string>{}
                              : analyze(c.heading, analysis));
  }
  bm25_embedder docs{retrieval_params{}.bm25};
  docs.fit_terms(doc_terms);
  bm25_embedder headings{retrieval_params{}.bm25};
  headings.fit_terms(heading_terms);
  for (std::string q : {"club payment failed", "pause the club",
                        "card payments", "ship parcels"}) {
    auto terms = analyze_query(q, analysis, snap->thesaurus()).search_terms();
    search_options plain;
    plain.prune_ratio = 0;
    plain.intro_weight = 1;
    plain.document_weight = 0;
    plain.heading_weight = 0;
    plain.answer_type_weight = 1;
    auto base = snap->search(q, sorted.size(), search_mode::bm25, plain);
    BOOST_REQUIRE(!base.empty());
    std::vector<double> raw(sorted.size(), 0.0);
    for (const auto& h : base)
      raw[h.index] = h.score;
    // Heading field: the BM25 score plus 0.5 x the heading field's BM25.
    auto with_heading = plain;
    with_heading.heading_weight = 0.5;
    auto qh = headings.embed_query_terms(terms);
    for (const auto& h :
         snap->search(q, sorted.size(), search_mode::bm25, with_heading)) {
      auto field
        = dot(qh, headings.embed_document_terms(heading_terms[h.index]));
      BOOST_TEST(h.score == raw[h.index] + 0.5 * field,
                 boost::test_tools::tolerance(1e-5));
      BOOST_TEST(h.bm25 == h.score, boost::test_tools::tolerance(1e-12));
    }
    // Document level: plus 0.3 x the best score x the document's BM25
    // relative to the best document's.
    auto with_docs = plain;
    with_docs.document_weight = 0.3;
    auto qd = docs.embed_query_terms(terms);
    std::vector<double> rel;
    for (const auto& t : doc_terms)
      rel.push_back(dot(qd, docs.embed_document_terms(t)));
    auto best_doc = *std::max_element(rel.begin(), rel.end());
    BOOST_REQUIRE(best_doc > 0);
    auto best = *std::max_element(raw.begin(), raw.end());
    for (const auto& h :
         snap->search(q, sorted.size(), search_mode::bm25, with_docs)) {
      BOOST_TEST(h.bm25 == raw[h.index], boost::test_tools::tolerance(1e-9));
      BOOST_TEST(
        h.score == raw[h.index] + 0.3 * best * rel[doc_of[h.index]] / best_doc,
        boost::test_tools::tolerance(1e-5));
    }
  }
}

BOOST_AUTO_TEST_CASE(document_level_evidence_can_change_the_ranking) {
  // "my club payment failed" is about the Club document (the only one
  // that speaks of failing): once the document-level part is on, its
  // "Pausing" section overtakes the Payments document's "Club payments",
  // which matches more of the question's words on its own.
  auto snap = retrieval_snapshot::build(small_corpus(), retrieval_params{});
  auto q = "my club payment failed";
  search_options off;
  off.document_weight = 0;
  off.heading_weight = 0;
  auto rank = [&](const std::vector<search_hit>& hits, const char* id) {
    for (size_t i = 0; i < hits.size(); ++i)
      if (hits[i].chunk_id == id)
        return i + 1;
    return size_t{0};
  };
  search_options on = off;
  on.document_weight = 1.0;
  auto a = snap->search(q, 13, search_mode::bm25, off);
  auto b = snap->search(q, 13, search_mode::bm25, on);
  for (const auto* id :
       {"club#failed-payments-1", "club#pausing-1", "pay#club-payments-1"}) {
    BOOST_REQUIRE(rank(a, id) > 0u);
    BOOST_REQUIRE(rank(b, id) > 0u);
  }
  BOOST_TEST(rank(a, "club#failed-payments-1") == 1u);
  BOOST_TEST(rank(b, "club#failed-payments-1") == 1u);
  BOOST_TEST(rank(a, "pay#club-payments-1") < rank(a, "club#pausing-1"));
  BOOST_TEST(rank(b, "club#pausing-1") < rank(b, "pay#club-payments-1"));
}

BOOST_AUTO_TEST_SUITE_END()
