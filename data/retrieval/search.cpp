// Query time of the retrieval snapshot: search modes, posting lists and
// the scoring of `retrieval_snapshot::search` (TF-IDF cosine, BM25 with
// its heading and document parts, and their fusion). Building snapshots
// is data/retrieval/snapshot.cpp; storing and loading them,
// data/retrieval/index_store.cpp.

#include "data/retrieval/index_store.hpp"

#include <algorithm>
#include <cmath>

#include "data/retrieval/answer_type.hpp"
#include "data/retrieval/query.hpp"

namespace candor::data {

namespace {

/// True when both ranked lists order a before b.
bool better(double a_score, uint32_t a_doc, double b_score,
            uint32_t b_doc) noexcept {
  return a_score > b_score || (a_score == b_score && a_doc < b_doc);
}

/// Per-thread accumulators, reused across queries and snapshots. Entries
/// are zero between queries.
struct scratch {
  std::vector<double> acc;
  std::vector<uint32_t> touched;
  /// The touched chunks with their scores (selection only).
  std::vector<retrieval_snapshot::scored> candidates;
};

scratch& thread_scratch() {
  thread_local scratch s;
  return s;
}

} // namespace

// -- search modes -------------------------------------------------------------

std::string_view to_string(search_mode x) noexcept {
  switch (x) {
    case search_mode::tfidf: return "tfidf";
    case search_mode::bm25: return "bm25";
    case search_mode::fusion: return "fusion";
  }
  return "fusion";
}

bool parse_search_mode(std::string_view text, search_mode& out) noexcept {
  for (auto m : {search_mode::tfidf, search_mode::bm25, search_mode::fusion})
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  return false;
}

// -- posting lists ------------------------------------------------------------

posting_lists posting_lists::build(const std::vector<sparse_vector>& vectors,
                                   uint32_t dimensions) {
  posting_lists p;
  p.offsets.assign(static_cast<size_t>(dimensions) + 1, 0);
  for (const auto& v : vectors)
    for (auto i : v.index)
      if (i < dimensions)
        ++p.offsets[i + 1];
  for (size_t i = 1; i < p.offsets.size(); ++i)
    p.offsets[i] += p.offsets[i - 1];
  p.docs.resize(p.offsets.back());
  p.weights.resize(p.offsets.back());
  auto fill = p.offsets;
  for (uint32_t d = 0; d < vectors.size(); ++d) {
    const auto& v = vectors[d];
    for (size_t j = 0; j < v.size(); ++j) {
      if (v.index[j] >= dimensions || !(v.value[j] > 0))
        continue;
      auto at = fill[v.index[j]]++;
      p.docs[at] = d;
      p.weights[at] = v.value[j];
    }
  }
  // Sort each list by weight, descending (documents are already ascending,
  // and a stable sort keeps them so among equal weights).
  std::vector<std::pair<float, uint32_t>> buf;
  for (size_t i = 0; i + 1 < p.offsets.size(); ++i) {
    auto b = p.offsets[i];
    auto e = fill[i];
    if (e - b < 2)
      continue;
    buf.clear();
    for (auto j = b; j < e; ++j)
      buf.emplace_back(p.weights[j], p.docs[j]);
    std::stable_sort(buf.begin(), buf.end(),
                     [](auto& x, auto& y) { return x.first > y.first; });
    for (auto j = b; j < e; ++j) {
      p.weights[j] = buf[j - b].first;
      p.docs[j] = buf[j - b].second;
    }
  }
  // Postings skipped above (non-positive weights) leave holes: compact.
  if (fill != std::vector<uint32_t>(p.offsets.begin() + 1, p.offsets.end())) {
    posting_lists q;
    q.offsets.assign(p.offsets.size(), 0);
    for (size_t i = 0; i + 1 < p.offsets.size(); ++i) {
      for (auto j = p.offsets[i]; j < fill[i]; ++j) {
        q.docs.push_back(p.docs[j]);
        q.weights.push_back(p.weights[j]);
      }
      q.offsets[i + 1] = static_cast<uint32_t>(q.docs.size());
    }
    return q;
  }
  return p;
}

std::vector<double> retrieval_snapshot::document_relevance(
  const std::vector<std::string>& terms) const {
  std::vector<double> out(documents_, 0.0);
  auto q = document_bm25_.embed_query_terms(terms);
  double best = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    auto f = q.index[i];
    if (f + 1 >= document_postings_.offsets.size())
      continue;
    for (auto j = document_postings_.offsets[f];
         j < document_postings_.offsets[f + 1]; ++j) {
      auto& x = out[document_postings_.docs[j]];
      x += q.value[i] * document_postings_.weights[j];
      best = std::max(best, x);
    }
  }
  if (best > 0)
    for (auto& x : out)
      x /= best;
  return out;
}

std::vector<retrieval_snapshot::scored> retrieval_snapshot::top(
  const posting_lists& lists, const sparse_vector& q, size_t k,
  double prune_ratio, const std::vector<double>* document_relevance,
  double document_weight, const field_query* field) const {
  std::vector<scored> out;
  if (k == 0 || q.size() == 0 || chunks_.empty())
    return out;
  // Query features with postings, by their largest possible contribution.
  struct term {
    const posting_lists* lists;
    int source; ///< 0 for `lists`, 1 for the field
    uint32_t begin;
    uint32_t end;
    double weight;
    double bound;
  };
  std::vector<term> terms;
  double total = 0;
  auto add_terms = [&](const posting_lists& ls, const sparse_vector& v,
                       double scale, int source) {
    for (size_t i = 0; i < v.size(); ++i) {
      auto f = v.index[i];
      if (f + 1 >= ls.offsets.size() || !(v.value[i] > 0))
        continue;
      auto b = ls.offsets[f];
      auto e = ls.offsets[f + 1];
      if (b == e)
        continue;
      double w = scale * v.value[i];
      terms.push_back(term{&ls, source, b, e, w, w * ls.weights[b]});
      total += terms.back().bound;
    }
  };
  add_terms(lists, q, 1.0, 0);
  if (field != nullptr && field->weight > 0)
    add_terms(*field->lists, field->query, field->weight, 1);
  if (terms.empty())
    return out;
  std::sort(terms.begin(), terms.end(), [](const term& x, const term& y) {
    if (x.bound != y.bound)
      return x.bound > y.bound;
    return x.source != y.source ? x.source < y.source : x.begin < y.begin;
  });
  auto cut = prune_ratio > 0 ? prune_ratio * total : 0.0;
  auto& s = thread_scratch();
  if (s.acc.size() < chunks_.size())
    s.acc.resize(chunks_.size(), 0.0);
  s.touched.clear();
  for (const auto& t : terms) {
    if (t.bound < cut)
      break; // the rest are smaller still
    for (auto j = t.begin; j < t.end; ++j) {
      auto c = t.weight * t.lists->weights[j];
      if (c < cut)
        break; // lists are sorted by weight
      auto d = t.lists->docs[j];
      if (s.acc[d] == 0)
        s.touched.push_back(d);
      s.acc[d] += c;
    }
  }
  double bonus = 0;
  if (document_relevance != nullptr && document_weight > 0) {
    double best = 0;
    for (auto d : s.touched)
      best = std::max(best, s.acc[d]);
    bonus = document_weight * best;
  }
  auto by_rank = [](const scored& a, const scored& b) {
    return better(a.score, a.doc, b.score, b.doc);
  };
  auto score_of = [&](uint32_t d) {
    scored x{d, s.acc[d], s.acc[d]};
    if (bonus > 0)
      x.score += bonus * (*document_relevance)[chunk_document_[d]];
    s.acc[d] = 0;
    return x;
  };
  // The k best, best first. `better` is a total order (score, then chunk
  // index), so both ways below give the same hits in the same order.
  if (s.touched.size() <= select_at_most) {
    // Select the k-th, then sort the k: linear in the candidates (the real
    // corpus: a typed question keeps 34 of a few hundred).
    auto& cand = s.candidates;
    cand.clear();
    for (auto d : s.touched)
      cand.push_back(score_of(d));
    auto keep = std::min(k, cand.size());
    auto last = cand.begin() + static_cast<std::ptrdiff_t>(keep);
    if (keep < cand.size())
      std::nth_element(cand.begin(), last, cand.end(), by_rank);
    std::sort(cand.begin(), last, by_rank);
    out.assign(cand.begin(), last);
  } else {
    // A min-heap whose root is the worst hit kept: most of many candidates
    // are rejected by one comparison with it.
    out.reserve(std::min(k, s.touched.size()) + 1);
    for (auto d : s.touched) {
      auto x = score_of(d);
      if (out.size() < k) {
        out.push_back(x);
        std::push_heap(out.begin(), out.end(), by_rank);
      } else if (by_rank(x, out.front())) {
        std::pop_heap(out.begin(), out.end(), by_rank);
        out.back() = x;
        std::push_heap(out.begin(), out.end(), by_rank);
      }
    }
    std::sort(out.begin(), out.end(), by_rank);
  }
  s.touched.clear();
  return out;
}

std::vector<search_hit>
retrieval_snapshot::search(std::string_view query, size_t k, search_mode mode,
                           const search_options& opts) const {
  return search(prepare_question(query, params_.tfidf.analysis, thesaurus()),
                k, mode, opts);
}

std::vector<search_hit>
retrieval_snapshot::search(const prepared_question& question, size_t k,
                           search_mode mode, const search_options& opts) const {
  std::vector<search_hit> hits;
  if (k == 0)
    return hits;
  auto make_hit = [&](uint32_t doc, double score) {
    search_hit h;
    h.index = doc;
    h.chunk_id = chunks_[doc].id;
    h.score = score;
    return h;
  };
  // Query analysis (thesaurus expansion) happens once per analyzer; the
  // question comes analysed with one of them.
  auto terms_for = [&](const analyzer_options& a) {
    return a == question.options
             ? question.query.search_terms()
             : analyze_query(question.text, a, thesaurus()).search_terms();
  };
  auto terms = terms_for(params_.tfidf.analysis);
  auto bm25_terms = params_.bm25.analysis == params_.tfidf.analysis
                      ? terms
                      : terms_for(params_.bm25.analysis);
  // Document-level evidence and the heading field (see search_options).
  auto dw = opts.document_weight;
  auto hw = opts.heading_weight;
  field_query heading{&heading_postings_,
                      heading_bm25_.embed_query_terms(bm25_terms), hw};
  const auto* hf = hw > 0 ? &heading : nullptr;
  std::vector<double> relevance;
  if (dw > 0)
    relevance = document_relevance(bm25_terms);
  const auto* rel = dw > 0 ? &relevance : nullptr;
  auto weighted = opts.intro_weight >= 0 && opts.intro_weight < 1;
  auto type = opts.answer_type_weight >= 0 && opts.answer_type_weight < 1
                ? question.type
                : answer_type::none;
  auto prior = [&](uint32_t doc) {
    const auto& c = chunks_[doc];
    auto p = weighted && c.heading == c.doc_title ? opts.intro_weight : 1.0;
    if (!mask_has(answer_types_[doc], type))
      p *= opts.answer_type_weight;
    return p;
  };
  if (mode == search_mode::tfidf || mode == search_mode::bm25) {
    // With the prior, an introduction can drop below a chunk ranked after
    // it: look past k by at most one introduction per document.
    // The answer-type prior can likewise demote chunks ranked before k.
    auto extra = weighted ? std::min<size_t>(documents_, 64) : 0;
    if (type != answer_type::none)
      extra += opts.answer_type_depth;
    auto tfidf = mode == search_mode::tfidf;
    auto list = tfidf ? top(tfidf_postings_, tfidf_.embed_query_terms(terms),
                            k + extra, opts.prune_ratio, rel, dw)
                      : top(bm25_postings_, bm25_.embed_query_terms(bm25_terms),
                            k + extra, opts.prune_ratio, rel, dw, hf);
    // Re-ranked with the priors on plain scores; only the k kept become
    // hits (each copies its chunk id).
    for (auto& x : list)
      x.score *= prior(x.doc);
    std::stable_sort(list.begin(), list.end(),
                     [](const scored& a, const scored& b) {
                       return better(a.score, a.doc, b.score, b.doc);
                     });
    if (list.size() > k)
      list.resize(k);
    hits.reserve(list.size());
    for (const auto& x : list) {
      hits.push_back(make_hit(x.doc, x.score));
      (tfidf ? hits.back().tfidf : hits.back().bm25) = x.raw;
    }
    return hits;
  }
  // Reciprocal-rank fusion.
  auto depth = std::max<size_t>(k, params_.fusion_depth)
               + (type != answer_type::none ? opts.answer_type_depth : 0);
  auto a = top(tfidf_postings_, tfidf_.embed_query_terms(terms), depth,
               opts.prune_ratio, rel, dw);
  auto b = top(bm25_postings_, bm25_.embed_query_terms(bm25_terms), depth,
               opts.prune_ratio, rel, dw, hf);
  struct fused {
    double rrf = 0;
    double tfidf = 0;
    double bm25 = 0;
    size_t best_rank = SIZE_MAX;
  };
  std::unordered_map<uint32_t, fused> by_doc;
  const double rrf_k = params_.rrf_k;
  for (size_t r = 0; r < a.size(); ++r) {
    auto& f = by_doc[a[r].doc];
    f.rrf += 1.0 / (rrf_k + static_cast<double>(r + 1));
    f.tfidf = a[r].raw;
    f.best_rank = std::min(f.best_rank, r);
  }
  for (size_t r = 0; r < b.size(); ++r) {
    auto& f = by_doc[b[r].doc];
    f.rrf += 1.0 / (rrf_k + static_cast<double>(r + 1));
    f.bm25 = b[r].raw;
    f.best_rank = std::min(f.best_rank, r);
  }
  for (auto& [doc, f] : by_doc)
    f.rrf *= prior(doc);
  std::vector<std::pair<uint32_t, fused>> all(by_doc.begin(), by_doc.end());
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
    if (x.second.rrf != y.second.rrf)
      return x.second.rrf > y.second.rrf;
    if (x.second.best_rank != y.second.best_rank)
      return x.second.best_rank < y.second.best_rank;
    return x.first < y.first;
  });
  for (size_t i = 0; i < all.size() && i < k; ++i) {
    hits.push_back(make_hit(all[i].first, all[i].second.rrf));
    hits.back().tfidf = all[i].second.tfidf;
    hits.back().bm25 = all[i].second.bm25;
  }
  return hits;
}

} // namespace candor::data
