#pragma once

// Declares the ingestion sanitizer and its sentence splitting.

#include <string>
#include <string_view>
#include <vector>

#include "domain/guard/input_rules.hpp"

/// The ingestion sanitizer: sentences of a document that carry embedded
/// instructions are replaced by a fixed marker before any model sees them.
/// Pure and deterministic; safe to call from many threads.
namespace candor::domain {

/// What replaces a redacted sentence in the passage text.
inline constexpr std::string_view redaction_marker
  = "[passage removed: possible embedded instruction]";

/// One sentence of a text: `[begin, end)` holds the sentence itself, and
/// `[end, next)` the whitespace that follows it (so the pieces tile the
/// whole text).
struct sentence_span {
  size_t begin = 0;
  size_t end = 0;
  size_t next = 0;
};

/// Splits `text` into sentences. A sentence ends after '.', '!' or '?'
/// followed by whitespace, or at a newline. Leading whitespace of the text
/// belongs to no sentence; a sentence is never empty. Deterministic.
std::vector<sentence_span> split_sentences(std::string_view text);

/// The result of sanitizing one passage.
struct sanitized_text {
  /// The text with every blocked sentence replaced by `redaction_marker`.
  std::string text;
  /// The removed sentences, verbatim, in order (for the output guard).
  std::vector<std::string> redacted_spans;
  /// Names of the rules that fired, deduplicated, in first-seen order.
  std::vector<std::string> flag_reasons;

  bool flagged() const noexcept {
    return !redacted_spans.empty();
  }
};

/// Evaluates every sentence of `text` against `rules` with
/// `rule_scope::document` and redacts the blocked ones. Whitespace between
/// sentences is kept as it was.
sanitized_text sanitize(std::string_view text,
                        const rule_set& rules = rule_set::builtin());

} // namespace candor::domain
