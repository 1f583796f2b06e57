#pragma once

// Declares the citation check of the documents branch and its verdicts.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "domain/types.hpp"

/// The citation check of the documents branch (DESIGN.md §4): code, not
/// the model, decides which citations stand. Pure and deterministic.
namespace candor::domain {

/// Why the check refused, or `none` when it answered.
enum class citation_verdict : uint8_t {
  answered,
  model_refused,     ///< the model said refused: true
  not_confident,     ///< the model said confident: false
  no_valid_citation, ///< nothing it cited was retrieved
};

std::string_view to_string(citation_verdict x) noexcept;

struct citation_check {
  citation_verdict verdict = citation_verdict::no_valid_citation;
  /// At most `max_citations`, in the order the model cited them.
  std::vector<citation> citations;
  /// Cited ids that were not among the retrieved passages (deduplicated,
  /// each cut to 80 characters for logs).
  std::vector<std::string> dropped;
};

/// Checks the model's citations against the passages that were actually
/// retrieved: ids outside that set are dropped; duplicates count once.
/// Refused, not confident, or no valid citation left means no answer.
citation_check check_citations(const std::vector<passage>& retrieved,
                               const std::vector<std::string>& cited,
                               bool refused, bool confident,
                               size_t max_citations = 3);

/// A passage's text cut to about `max_chars` characters at a word
/// boundary (never inside a UTF-8 sequence), with "…" when cut.
std::string make_snippet(std::string_view text, size_t max_chars = 300);

} // namespace candor::domain
