#pragma once

// Declares the local provider's extractive answerer: the sentence of the
// retrieved passages that answers the question, or none.

#include <string>
#include <string_view>
#include <vector>

#include "data/retrieval/answer_type.hpp"
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
  /// Sentences longer than this are not quoted whole.
  size_t max_sentence_chars = 420;
};

/// One sentence of a passage, as the answerer considers it.
struct scored_sentence {
  size_t passage = 0;  ///< index into the passages
  size_t sentence = 0; ///< index into that passage's sentences
  std::string text;
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

/// Picks the sentence of `passages` that answers `question`: it must state
/// the expected answer type when the question asks for one, and its score
/// must reach `opts.min_score`. The term weights are `snap`'s BM25 IDFs
/// (uniform when `snap` is null). A sentence ending in ':' is quoted with
/// the list lines that follow it.
extracted_answer extract_answer(std::string_view question,
                                const std::vector<domain::passage>& passages,
                                const retrieval_snapshot* snap,
                                const extract_options& opts = {});

} // namespace candor::data
