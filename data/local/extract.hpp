#pragma once

// Declares the local provider's extractive answerer: the sentence of the
// retrieved passages that answers the question, or none.

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/retrieval/answer_type.hpp"
#include "data/retrieval/embedder.hpp"
#include "domain/types.hpp"

namespace candor::data {

class retrieval_snapshot;

/// The thresholds of the answerer, chosen on the calibration split of
/// eval/local_answers.v1.json (`candor-eval local-answers` prints them).
struct extract_options {
  /// A sentence answers when its score reaches this: the IDF-weighted
  /// share of the question's terms found in the sentence (counted in
  /// full) or in its passage's heading and title (counted at
  /// `heading_credit`).
  double min_score = 0.6;
  /// The same for a question that asks for a type of answer (a duration,
  /// an amount, ...): a sentence stating one needs less of the wording.
  double min_score_typed = 0.6;
  double heading_credit = 0.6;
  /// When the retrieval evidence (`evidence_details`) of the passages is
  /// at least `strong_evidence`, a sentence needs only
  /// `min_score_strong`: the passage is surely about the question, and
  /// the sentence may use its own words. On the calibration split this
  /// answered 0.49 of answerable questions with the fact instead of 0.42,
  /// refusing the same share of unanswerable ones (0.78).
  double strong_evidence = 0.10;
  double min_score_strong = 0.30;
  /// Sentences longer than this are not quoted whole.
  size_t max_sentence_chars = 420;
  /// Lower-case words of the company's own name: a sentence naming only
  /// the company does not state the name a question asks for. The local
  /// provider fills it from the catalog's `filler` phrases.
  std::set<std::string, std::less<>> own_names;
};

/// One sentence of a passage, as the answerer considers it.
struct scored_sentence {
  size_t passage = 0;  ///< index into the passages
  size_t sentence = 0; ///< index into that passage's sentences
  std::string text;    ///< set for `extracted_answer::best` only
  double score = 0;
  bool type_ok = true; ///< states the answer type the question asks for
};

/// What the answerer found.
struct extracted_answer {
  bool found = false;
  /// The quoted sentence(s) with where they come from; empty when not
  /// found.
  std::string answer;
  std::vector<std::string> cited; ///< chunk ids of the quoted passages
  /// Headings of the passages, best first ("Heading" in Title), for a
  /// refusal that says where to look.
  std::vector<std::string> nearest;
  /// Why nothing was found (for the log and the refusal), e.g. "no
  /// sentence states a duration".
  std::string why;
  answer_type type = answer_type::none;
  scored_sentence best;
};

/// Sentences of a passage text: split after '.', '!' or '?' followed by
/// a space and an upper-case letter, a digit or a quote, and at line ends
/// (list items and table rows are lines of their own). Abbreviations such
/// as "e.g." and decimals such as "12.50" do not split.
std::vector<std::string> split_sentences(std::string_view text);

/// A passage as the answerer reads it: its sentences, the terms and the
/// answer types (`answer_type_mask`) of each, and the terms of its heading
/// and title. Depends on the passage and the analyzer options only.
struct analysed_passage {
  std::string text, heading, doc_title; ///< what it was computed from
  analyzer_options options;
  std::vector<std::string> sentences;
  std::vector<std::set<std::string>> terms;
  std::vector<uint32_t> types;
  std::set<std::string> context;
};

/// `p` analysed with `snap`'s TF-IDF analyzer options (the defaults when
/// `snap` is null).
analysed_passage analyse_passage(const domain::passage& p,
                                 const retrieval_snapshot* snap);

/// Analyses of the passages met so far, by chunk id, shared between
/// threads: the same few hundred chunks are quoted again and again, and
/// splitting and stemming them is most of an answer's cost. An entry is
/// used only when the passage's text, heading, title and the analyzer
/// options are the ones it was computed from (a reindexed chunk is
/// analysed again); the cache is emptied when it reaches `capacity`.
class passage_cache {
public:
  explicit passage_cache(size_t capacity = 4096) : capacity_(capacity) {}

  std::shared_ptr<const analysed_passage> get(const domain::passage& p,
                                              const retrieval_snapshot* snap);

private:
  size_t capacity_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const analysed_passage>>
    entries_;
};

/// Picks the sentence of `passages` that answers `question`: it must state
/// the expected answer type when the question asks for one, and its score
/// must reach `opts.min_score`. The term weights are `snap`'s BM25 IDFs
/// (uniform when `snap` is null). A sentence ending in ':' is quoted with
/// the list lines that follow it.
/// The passages' analyses come from `cache` when one is given;
/// `evidence` is the retrieval evidence of the passages (0: unknown).
extracted_answer extract_answer(std::string_view question,
                                const std::vector<domain::passage>& passages,
                                const retrieval_snapshot* snap,
                                const extract_options& opts = {},
                                passage_cache* cache = nullptr,
                                double evidence = 0);

} // namespace candor::data
