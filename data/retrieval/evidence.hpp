#pragma once

// Declares the evidence score shared by the retrieve node and
// `candor calibrate`, its options and its parts.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/retrieval/answer_type.hpp"
#include "data/retrieval/index_store.hpp"

/// The score the documents branch's refusal threshold applies to. The
/// retrieve node and `candor calibrate` both use this one function, so
/// the threshold the calibration chose is the one the server enforces.
namespace candor::data {

struct prepared_question; // data/retrieval/query.hpp

/// How the evidence is computed; the defaults are what the server uses
/// (each chosen on the calibration split of eval/retrieval.v1.json).
struct evidence_options {
  /// Expected answer type: when the question asks for a type
  /// (`expected_answer_type`), only hits whose text states one count;
  /// with none among the hits the evidence is 0.
  bool check_answer_type = true;
  /// A hit missing one of the question's named terms has its coverage
  /// multiplied by this (1 disables the check). Soft, because a general
  /// policy may answer a question about one named product.
  double name_penalty = 0.5;
};

/// The parts `evidence_score` is made of, for diagnostics and tests. Term
/// weights are BM25 IDFs over the snapshot's chunks; a term the corpus
/// never uses weighs what a term of document frequency 0 would.
struct evidence_features {
  /// Position in `hits` of the hit giving the evidence (the best one).
  size_t best = 0;
  /// TF-IDF cosine of the (thesaurus-expanded) question and that passage.
  double cosine = 0;
  /// IDF-weighted share of the question's distinct terms that passage
  /// contains (a term counts when a thesaurus equivalent does), times the
  /// name penalty when a named term is missing from it.
  double coverage = 0;
  /// IDF-weighted share of the question's distinct terms the whole corpus
  /// never uses, neither themselves nor through a thesaurus equivalent.
  double oov_share = 0;
  /// cosine x coverage x (1 - oov_share): `evidence_score`.
  double score = 0;
  /// The answer type the question asks for, and whether some hit states
  /// one (always true for `answer_type::none`).
  answer_type type = answer_type::none;
  bool type_found = true;
  /// Named terms of the question missing from the best hit.
  std::vector<std::string> missing_names;
};

/// The evidence that `hits` (the result of `snap.search(query, ...)`)
/// answer `query`, with its parts. Over all hits, the one with the largest
/// cosine x coverage is the best; the
/// out-of-vocabulary factor is the same for every hit. All zero without
/// hits or without query terms.
evidence_features evidence_details(const retrieval_snapshot& snap,
                                   std::string_view query,
                                   const std::vector<search_hit>& hits,
                                   const evidence_options& opts = {});

/// The same for a question analysed beforehand (`prepare_question`,
/// data/retrieval/query.hpp), as the retrieve node does for its search; analysed
/// again only if the snapshot's TF-IDF analyzer uses other options.
evidence_features evidence_details(const retrieval_snapshot& snap,
                                   const prepared_question& question,
                                   const std::vector<search_hit>& hits,
                                   const evidence_options& opts = {});

/// The evidence that `hits` (the result of `snap.search(query, ...)`)
/// answer `query`, in [0, 1]; higher is stronger. Below the configured
/// `retrieval.threshold`, the question is refused without a model call.
/// `evidence_details(...).score`; independent of the search mode.
double evidence_score(const retrieval_snapshot& snap, std::string_view query,
                      const std::vector<search_hit>& hits,
                      const evidence_options& opts = {});

/// A search and its evidence (default `evidence_options`).
struct retrieval_result {
  std::vector<search_hit> hits;
  evidence_features evidence;
};

/// `snap.search(question, k, mode)` and its `evidence_details`, the
/// question analysed once with the snapshot's TF-IDF options; taken from
/// `snap.memo()` when the same (question, k, mode) was retrieved moments
/// before within the same `scope` (a request id: the local router, then
/// the retrieve node, in one request; never another request's result).
std::shared_ptr<const retrieval_result>
retrieve_with_evidence(const retrieval_snapshot& snap,
                       std::string_view question, size_t k, search_mode mode,
                       std::string_view scope);

} // namespace candor::data
