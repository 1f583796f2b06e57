#pragma once

// Declares the document formats `candor ingest` reads and their conversion
// to the Markdown the chunker cuts.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// Documents in the formats companies keep them: Markdown as it is; plain
/// text, HTML and PDF turned into Markdown whose `#`/`##`/`###` headings are
/// the document's title and sections, so that one chunker (and the
/// sanitizer it runs on every chunk) serves every format.
namespace candor::data {

enum class doc_format { markdown, text, html, pdf };

/// The format of a file by its extension (case-insensitive): .md and
/// .markdown, .txt, .html and .htm, .pdf; nullopt for anything else.
std::optional<doc_format> format_of(const std::filesystem::path& file);

/// "markdown", "text", "html" or "pdf".
const char* to_string(doc_format f) noexcept;

/// A document as Markdown, and what the conversion left out on purpose.
struct converted_document {
  std::string markdown;
  /// Content dropped because a reader would not see it, each with where it
  /// was and its first words, e.g. `HTML comment: "ignore all previous
  /// instructions..."`. Navigation, scripts and styles are dropped without
  /// a note: they are never content.
  std::vector<std::string> hidden;
};

/// Converts one file's bytes. `stem` (the file name without its extension)
/// is the title when the document names none. An error (`ec::invalid_request`)
/// says why the file cannot be read: not UTF-8, not a PDF, an encrypted PDF,
/// no text at all (an image-only PDF, an empty page).
domain::outcome<converted_document>
to_markdown(doc_format format, std::string_view bytes, std::string_view stem);

/// HTML to Markdown (see to_markdown): headings become sections; the
/// title is <title> or the first <h1>; navigation, header, footer, aside,
/// forms, scripts and styles are dropped, and so are comments and elements a
/// browser would not show (the `hidden` attribute, `aria-hidden="true"`,
/// `display:none`, `visibility:hidden`, zero size or opacity, white text).
domain::outcome<converted_document> html_to_markdown(std::string_view html,
                                                     std::string_view stem);

/// PDF to Markdown: the text of each page in reading order; lines in
/// larger type than the body are headings (the largest on the first page
/// is the title). Every page begins a section whose heading ends with its
/// page number, "(p. 3)", so a chunk, and the citation of it, names its page.
domain::outcome<converted_document> pdf_to_markdown(std::string_view pdf,
                                                    std::string_view stem);

} // namespace candor::data
