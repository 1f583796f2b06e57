#pragma once

// Declares the Markdown chunker, its options and the chunks it produces.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

/// Markdown documents to retrieval chunks: by H2/H3 section, then by size
/// with an overlap made of whole sentences. Pure and deterministic.
namespace candor::data {

/// How sections are cut into chunks.
struct chunk_options {
  /// A chunk grows sentence by sentence up to about this many characters
  /// (a single sentence longer than this is cut at spaces).
  size_t target_chars = 600;
  /// The next chunk of the same section repeats the trailing sentences of
  /// the previous one, up to this many characters in total.
  size_t overlap_chars = 120;
  /// Run the ingestion sanitizer over every chunk (see domain/sanitizer).
  bool sanitize = true;

  /// Canonical text for fingerprints and the index's metadata, e.g.
  /// "target=600,overlap=120,sanitize=1".
  std::string describe() const;
};

/// One retrieval passage.
struct chunk {
  /// `<doc-slug>#<section-slug>-<n>`, n counting from 1 within a section.
  std::string id;
  std::string doc_slug;
  std::string doc_title;
  /// The heading path below the title, e.g. "Returns > Holiday extension";
  /// the document title for text before the first H2.
  std::string heading;
  /// Passage text (sanitized when the options say so): paragraphs separated
  /// by a blank line, wrapped lines joined, list items and table rows on
  /// lines of their own.
  std::string text;
  /// Position of the chunk within its document, from 0.
  int32_t ordinal = 0;
  /// True when the sanitizer removed at least one sentence.
  bool flagged = false;
  /// Sentences the sanitizer removed, verbatim.
  std::vector<std::string> redacted_spans;
  /// Input rules that caused the removals.
  std::vector<std::string> flag_reasons;
};

/// A chunked document.
struct chunked_document {
  std::string slug;
  std::string title;
  std::vector<chunk> chunks;
};

/// Lower-case ASCII slug: text is normalized (accents and case folded),
/// runs of anything but [a-z0-9] become one '-', and the ends are trimmed.
/// Empty when nothing alphanumeric is left.
std::string slugify(std::string_view text);

/// Chunks one Markdown document. The first `# ` heading is the title (the
/// slug when there is none); `## ` and `### ` start sections; deeper
/// headings and everything inside ``` fences stay text.
chunked_document chunk_markdown(std::string_view doc_slug,
                                std::string_view markdown,
                                const chunk_options& opts = {});

} // namespace candor::data
