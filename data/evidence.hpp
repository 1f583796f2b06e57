#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "data/index_store.hpp"

/// The score the documents branch's refusal threshold applies to. The
/// retrieve node and `candor calibrate` both use this one function, so
/// the threshold the calibration chose is the one the server enforces.
namespace candor::data {

/// The parts `evidence_score` is made of, for diagnostics and tests. Term
/// weights are BM25 IDFs over the snapshot's chunks; a term the corpus
/// never uses weighs what a term of document frequency 0 would.
struct evidence_features {
  /// Position in `hits` of the hit giving the evidence (the best one).
  size_t best = 0;
  /// TF-IDF cosine of the (thesaurus-expanded) question and that passage.
  double cosine = 0;
  /// IDF-weighted share of the question's distinct terms that passage
  /// contains (a term counts when a thesaurus equivalent does).
  double coverage = 0;
  /// IDF-weighted share of the question's distinct terms the whole corpus
  /// never uses, neither themselves nor through a thesaurus equivalent.
  double oov_share = 0;
  /// cosine x coverage x (1 - oov_share): `evidence_score`.
  double score = 0;
};

/// The evidence that `hits` (the result of `snap.search(query, ...)`)
/// answer `query`, with its parts. Over all hits, the one with the largest
/// cosine x coverage is the best; the out-of-vocabulary factor is the
/// same for every hit. All zero without hits or without query terms.
evidence_features evidence_details(const retrieval_snapshot& snap,
                                   std::string_view query,
                                   const std::vector<search_hit>& hits);

/// The evidence that `hits` (the result of `snap.search(query, ...)`)
/// answer `query`, in [0, 1]; higher is stronger. Below the configured
/// `retrieval.threshold`, the question is refused without a model call.
/// `evidence_details(...).score`; independent of the search mode.
double evidence_score(const retrieval_snapshot& snap, std::string_view query,
                      const std::vector<search_hit>& hits);

} // namespace candor::data
