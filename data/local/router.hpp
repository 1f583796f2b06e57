#pragma once

// Declares the local provider's router: documents, data or out of scope,
// decided from the sales catalog's vocabulary and the retrieval evidence.

#include <memory>
#include <set>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "data/retrieval/evidence.hpp"
#include "data/retrieval/index_store.hpp"
#include "domain/types.hpp"

namespace candor::data {

class catalog;

/// What the question says that points at the sales database, each cue
/// with its weight (see `data_cues`).
struct data_cue {
  std::string kind; ///< metric, table, dimension, value, time, aggregate,
                    ///< we, customer, policy
  std::string text; ///< the words of the question that matched
  double weight = 0;
};

/// The thresholds of the decision, chosen on the calibration split of
/// eval/routing.v1.json (`candor-eval routing` prints the figures).
struct local_router_options {
  /// A data score at or above this routes to data whatever the documents
  /// say.
  double data_strong = 2.5;
  /// Below `data_strong`, the documents' evidence at or above this routes
  /// to docs.
  double docs_evidence = 0.06;
  /// Otherwise a data score at or above this routes to data.
  double data_weak = 1.5;
  /// Otherwise a question addressed to the company (it says "I", "my",
  /// "you", "we", the company's name from the catalog's `filler` phrases,
  /// or names something the documents name)
  /// with at least this evidence goes to docs, where the evidence
  /// threshold refuses it if nothing answers; anything else is out of
  /// scope.
  double docs_floor = 0.02;
};

/// A decision with the evidence behind it.
struct local_route {
  domain::route_kind route = domain::route_kind::out_of_scope;
  /// One sentence a reader can check: which rule decided and on what.
  std::string reason;
  double data_score = 0;
  std::vector<data_cue> cues;
  evidence_features evidence;
};

/// The router of the local provider. Built once from the catalog (an
/// immutable value afterwards, safe to share between threads).
class local_router {
public:
  explicit local_router(const catalog& cat, local_router_options opts = {});

  /// The cues of `question` that point at (or, weighted negatively, away
  /// from) the sales database, and their sum.
  std::vector<data_cue> data_cues(std::string_view question) const;

  /// Routes `question`: the data score and the retrieval evidence on
  /// `snap` (searched with `mode` and `top_k`), through the rules of
  /// `local_router_options`, in that order.
  /// `scope` (the request id) lets the retrieve node reuse the search
  /// (`retrieve_with_evidence`).
  local_route decide(std::string_view question, const retrieval_snapshot& snap,
                     search_mode mode, size_t top_k,
                     std::string_view scope = {}) const;

  const local_router_options& options() const noexcept {
    return opts_;
  }

  /// Lower-case words of the company's name (the catalog's `filler`).
  const std::set<std::string, std::less<>>& company_words() const noexcept {
    return company_words_;
  }

  /// The first word of `question` that names a subject of the documents:
  /// its term occurs in a title or heading of `snap` and is not one of
  /// the generic words headings also use ("first", "time", places). Empty
  /// if none.
  std::string subject_term(std::string_view question,
                           const retrieval_snapshot& snap) const;

private:
  struct phrase {
    std::vector<std::string> words; ///< lower-case words
    std::string kind;
    double weight = 0;
  };
  std::vector<phrase> phrases_;
  /// Positions in `phrases_` (longest phrase first) by first word.
  std::unordered_map<std::string, std::vector<size_t>> by_first_word_;
  /// Words of headings that name no subject: the built-in
  /// `generic_heading_words` and the catalog's `router.heading_words`.
  std::vector<std::string> heading_words_;
  /// `heading_words_` analysed with the default analyzer options.
  std::set<std::string, std::less<>> generic_stems_;
  /// Words of the company's name (the catalog's `filler` phrases).
  std::set<std::string, std::less<>> company_words_;
  /// Every word of the catalog's phrases (a name the catalog knows).
  std::set<std::string, std::less<>> known_words_;
  local_router_options opts_;
};

/// Lower-case words of `text` (letters, digits, and inner '-' or '\'').
std::vector<std::string> plain_words(std::string_view text);

} // namespace candor::data
