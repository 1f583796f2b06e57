#pragma once

// Declares the retrieval ablation: the labelled question set, its splits,
// the retrieval metrics and `candor ablation`.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "data/retrieval/embedder.hpp"
#include "data/retrieval/index_store.hpp"
#include "domain/error.hpp"

/// The retrieval ablation: the labelled question set
/// `eval/retrieval.v1.json`, recall@k and MRR, and `candor ablation`,
/// which measures every search mode at several chunk sizes on the test
/// split with a threshold calibrated on the calibration split.
namespace candor::eval {

// -- labelled set -------------------------------------------------------------

/// Where the answer to a question is: a section of a document. A retrieved
/// chunk matches when its id, without the trailing "-<n>", is
/// "<doc>#<section>", so a label holds at any chunk size.
struct expected_passage {
  std::string doc;
  std::string section;
  /// The chunks holding the answer at the set's `chunk_size`.
  std::vector<std::string> chunks;
};

enum class split_kind : uint8_t { calibration, test };

std::string_view to_string(split_kind x) noexcept;

/// One labelled question.
struct labelled_question {
  std::string id;
  split_kind split = split_kind::calibration;
  bool answerable = true;
  /// For unanswerable questions: "company" or "off-topic".
  std::string kind;
  std::string question;
  /// Empty for unanswerable questions.
  std::vector<expected_passage> expected;
};

struct labelled_set {
  std::string name;
  /// The chunk size at which `expected_passage::chunks` were taken.
  size_t chunk_size = 0;
  std::vector<labelled_question> questions;

  /// The questions of one split, in file order.
  std::vector<const labelled_question*> of(split_kind s) const;
};

/// Parses a labelled set; an error names the first offending question.
/// Ids must be unique; answerable questions need at least one expected
/// passage, unanswerable ones none; questions are at most 500 bytes.
domain::outcome<labelled_set> parse_labelled_set(std::string_view json);

/// Reads and parses a labelled set file.
domain::outcome<labelled_set> load_labelled_set(const std::string& path);

/// `<source>/eval/retrieval.v1.json`.
std::string default_labelled_set_path();

// -- metrics ------------------------------------------------------------------

/// "<doc>#<section>" of a chunk id "<doc>#<section>-<n>" (the id itself
/// when it has no numeric suffix).
std::string_view section_of(std::string_view chunk_id) noexcept;

/// True when `chunk_id` falls in one of the question's expected sections.
bool matches(const labelled_question& q, std::string_view chunk_id);

/// 1-based rank of the first matching id in `ranked`, 0 when none matches.
size_t first_match_rank(const labelled_question& q,
                        const std::vector<std::string>& ranked);

/// Ranking quality over answerable questions: `ranks[i]` is the
/// `first_match_rank` of question i (0 = not retrieved).
struct ranking_metrics {
  size_t questions = 0;
  double recall_at_k = 0; ///< share with 0 < rank <= k
  double mrr = 0;         ///< mean of 1/rank (0 when not retrieved)
};

ranking_metrics ranking_quality(const std::vector<size_t>& ranks, size_t k);

// -- ablation -----------------------------------------------------------------

struct ablation_options {
  std::string kb_dir;
  std::vector<size_t> chunk_sizes{400, 600};
  std::vector<data::search_mode> modes{data::search_mode::tfidf,
                                       data::search_mode::bm25,
                                       data::search_mode::fusion};
  /// Recall is measured at k; evidence uses the top k hits too.
  size_t k = 3;
  /// How deep the ranking goes for MRR.
  size_t depth = 10;
  /// The split the figures are measured on. Thresholds always come from
  /// the calibration split; measuring on it is for developing the
  /// mechanism without looking at the test split.
  split_kind measure = split_kind::test;
  data::retrieval_params params;
};

/// One configuration's figures.
struct ablation_row {
  data::search_mode mode = data::search_mode::fusion;
  size_t chunk_size = 0;
  size_t chunks = 0;
  /// Test split, answerable questions.
  ranking_metrics ranking;
  /// Calibrated on the calibration split, applied to the test split.
  double threshold = 0;
  double calibration_accuracy = 0;
  double refusal_accuracy = 0;
  size_t test_questions = 0;
  /// True when recall@k >= 0.95, MRR >= 0.85 and refusal >= 0.95.
  bool meets_targets = false;
};

struct ablation_report {
  std::string set_name;
  split_kind measured = split_kind::test;
  size_t k = 3;
  std::vector<ablation_row> rows;
  /// Index of the winner in `rows`: meeting the targets first, then the
  /// highest sum of the three figures, then the smaller chunk size.
  size_t winner = 0;
};

/// Runs every configuration. Snapshots are built in memory from
/// `opts.kb_dir` for each chunk size.
domain::outcome<ablation_report> run_ablation(const labelled_set& set,
                                              const ablation_options& opts);

/// A fixed-width table with one row per configuration, the winner marked.
std::string format_table(const ablation_report& report);

boost::json::value to_json(const ablation_report& report);

/// The ranked chunk ids of a search (for MRR at `depth`).
std::vector<std::string> ranked_ids(const data::retrieval_snapshot& snap,
                                    std::string_view question,
                                    data::search_mode mode, size_t depth);

/// Builds an in-memory snapshot of the documents in `kb_dir` cut at
/// `chunk_size` characters, as `candor ingest` would index them.
domain::outcome<std::shared_ptr<const data::retrieval_snapshot>>
build_snapshot(const std::string& kb_dir, size_t chunk_size,
               const data::retrieval_params& params);

/// Per-question diagnostics for developing the mechanism: one line per
/// question of `split` with its id, class, the 1-based rank of the first
/// expected chunk within `depth` ("-" when missing; "u" for unanswerable
/// questions), its evidence and the evidence's parts (with the expected
/// answer type, "(none stated)" when no hit states one, and each named
/// term missing from the best hit as "-name:<term>"), the top `k` scores
/// and chunk ids, the question, each query term's IDF and whether the top
/// hits hold it, and for a miss the expected sections. The CLI allows it
/// on the calibration split only.
std::string explain_split(const data::retrieval_snapshot& snap,
                          const labelled_set& set, split_kind split,
                          data::search_mode mode, size_t k, size_t depth);

/// Retrieval targets on the test split.
inline constexpr double target_recall = 0.95;
inline constexpr double target_mrr = 0.85;
inline constexpr double target_refusal = 0.95;

} // namespace candor::eval
