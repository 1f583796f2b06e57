// Assembling the in-memory retrieval snapshot of
// data/retrieval/index_store.hpp: its constructor, `build`, lookups and the
// per-chunk terms. Its query side is data/retrieval/search.cpp.

#include "data/retrieval/index_store.hpp"

#include <algorithm>
#include <set>

#include "data/retrieval/answer_type.hpp"

namespace candor::data {

// -- snapshot -----------------------------------------------------------------

retrieval_snapshot::~retrieval_snapshot() {
  for (size_t i = 0; i < chunks_.size(); ++i)
    delete terms_[i].load(std::memory_order_acquire);
}

const retrieval_snapshot::chunk_terms&
retrieval_snapshot::terms_of(size_t i) const {
  auto& slot = terms_[i];
  if (const auto* cached = slot.load(std::memory_order_acquire))
    return *cached;
  auto terms = analyze(indexed_text(chunks_[i]), tfidf_.analysis());
  auto fresh = std::make_unique<chunk_terms>();
  fresh->tfidf = tfidf_.embed_document_terms(terms);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  fresh->distinct = std::move(terms);
  const chunk_terms* expected = nullptr;
  if (slot.compare_exchange_strong(expected, fresh.get(),
                                   std::memory_order_acq_rel,
                                   std::memory_order_acquire))
    return *fresh.release();
  return *expected; // another thread stored the same terms first
}

retrieval_snapshot::retrieval_snapshot(
  std::vector<chunk> chunks, retrieval_params params, tfidf_embedder tfidf,
  bm25_embedder bm25, const std::vector<sparse_vector>& tfidf_vectors,
  const std::vector<sparse_vector>& bm25_vectors,
  std::shared_ptr<const thesaurus_extension> thesaurus)
    : params_(std::move(params)), thesaurus_(std::move(thesaurus)),
      chunks_(std::move(chunks)),
      tfidf_(std::move(tfidf)), bm25_(std::move(bm25)),
      terms_(new std::atomic<const chunk_terms*>[chunks_.size()]) {
  for (size_t i = 0; i < chunks_.size(); ++i)
    terms_[i].store(nullptr, std::memory_order_relaxed);
  std::unordered_map<std::string_view, uint32_t> docs;
  std::vector<std::vector<std::string>> document_terms;
  by_id_.reserve(chunks_.size());
  chunk_document_.reserve(chunks_.size());
  for (uint32_t i = 0; i < chunks_.size(); ++i) {
    by_id_.emplace(chunks_[i].id, i);
    auto [at, added]
      = docs.emplace(chunks_[i].doc_slug, static_cast<uint32_t>(docs.size()));
    if (added)
      document_terms.emplace_back();
    chunk_document_.push_back(at->second);
    auto terms = analyze(indexed_text(chunks_[i]), bm25_.analysis());
    auto& all = document_terms[at->second];
    all.insert(all.end(), std::make_move_iterator(terms.begin()),
               std::make_move_iterator(terms.end()));
  }
  documents_ = docs.size();
  for (const auto& c : chunks_)
    for (auto& t : analyze(c.doc_title + "\n" + c.heading, bm25_.analysis()))
      title_terms_.push_back(std::move(t));
  std::sort(title_terms_.begin(), title_terms_.end());
  title_terms_.erase(std::unique(title_terms_.begin(), title_terms_.end()),
                     title_terms_.end());
  answer_types_.reserve(chunks_.size());
  for (const auto& c : chunks_)
    answer_types_.push_back(answer_type_mask(c.text));
  {
    // The heading field: a section's heading path (empty for a document's
    // introduction, whose heading is the title).
    std::vector<std::vector<std::string>> heading_terms;
    heading_terms.reserve(chunks_.size());
    for (const auto& c : chunks_)
      heading_terms.push_back(c.heading == c.doc_title
                                ? std::vector<std::string>{}
                                : analyze(c.heading, bm25_.analysis()));
    heading_bm25_ = bm25_embedder{params_.bm25};
    heading_bm25_.fit_terms(heading_terms);
    std::vector<sparse_vector> hv;
    hv.reserve(heading_terms.size());
    for (const auto& t : heading_terms)
      hv.push_back(heading_bm25_.embed_document_terms(t));
    heading_postings_ = posting_lists::build(hv, heading_bm25_.dimensions());
  }
  document_bm25_ = bm25_embedder{params_.bm25};
  document_bm25_.fit_terms(document_terms);
  {
    std::vector<sparse_vector> dv;
    dv.reserve(document_terms.size());
    for (const auto& t : document_terms)
      dv.push_back(document_bm25_.embed_document_terms(t));
    document_postings_ = posting_lists::build(dv, document_bm25_.dimensions());
  }
  tfidf_postings_ = posting_lists::build(tfidf_vectors, tfidf_.dimensions());
  bm25_postings_ = posting_lists::build(bm25_vectors, bm25_.dimensions());
  fingerprints_[0] = tfidf_.fingerprint();
  fingerprints_[1] = bm25_.fingerprint();
  fingerprints_[2] = "rrf(k=" + std::to_string(params_.rrf_k)
                     + ",depth=" + std::to_string(params_.fusion_depth) + ")["
                     + fingerprints_[0] + "|" + fingerprints_[1] + "]";
}

std::shared_ptr<const retrieval_snapshot>
retrieval_snapshot::build(std::vector<chunk> chunks,
                          const retrieval_params& params,
                          std::shared_ptr<const thesaurus_extension> thesaurus) {
  std::stable_sort(chunks.begin(), chunks.end(),
                   [](const chunk& a, const chunk& b) {
                     return a.doc_slug != b.doc_slug ? a.doc_slug < b.doc_slug
                                                     : a.ordinal < b.ordinal;
                   });
  tfidf_embedder tfidf{params.tfidf};
  bm25_embedder bm25{params.bm25};
  std::vector<std::vector<std::string>> tfidf_terms;
  std::vector<std::vector<std::string>> bm25_terms;
  tfidf_terms.reserve(chunks.size());
  for (const auto& c : chunks)
    tfidf_terms.push_back(analyze(indexed_text(c), tfidf.analysis()));
  bool same_analysis
    = params.tfidf.analysis.stem == params.bm25.analysis.stem
      && params.tfidf.analysis.stopwords == params.bm25.analysis.stopwords;
  if (!same_analysis) {
    bm25_terms.reserve(chunks.size());
    for (const auto& c : chunks)
      bm25_terms.push_back(analyze(indexed_text(c), bm25.analysis()));
  }
  const auto& b_terms = same_analysis ? tfidf_terms : bm25_terms;
  tfidf.fit_terms(tfidf_terms);
  bm25.fit_terms(b_terms);
  std::vector<sparse_vector> tv;
  std::vector<sparse_vector> bv;
  tv.reserve(chunks.size());
  bv.reserve(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    tv.push_back(tfidf.embed_document_terms(tfidf_terms[i]));
    bv.push_back(bm25.embed_document_terms(b_terms[i]));
  }
  return std::make_shared<const retrieval_snapshot>(
    std::move(chunks), params, std::move(tfidf), std::move(bm25), tv, bv,
    std::move(thesaurus));
}

const chunk* retrieval_snapshot::find(std::string_view id) const {
  auto i = by_id_.find(std::string{id});
  return i == by_id_.end() ? nullptr : &chunks_[i->second];
}

std::vector<std::string> retrieval_snapshot::redacted_spans() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& c : chunks_)
    for (const auto& s : c.redacted_spans)
      if (seen.insert(s).second)
        out.push_back(s);
  return out;
}

const std::string&
retrieval_snapshot::fingerprint(search_mode mode) const noexcept {
  return fingerprints_[static_cast<size_t>(mode)];
}

} // namespace candor::data
