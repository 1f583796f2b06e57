#pragma once

// Declares query analysis for retrieval: a question's terms, its thesaurus
// expansions and the prepared question the retrieve node uses.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/retrieval/answer_type.hpp"
#include "data/retrieval/embedder.hpp"
#include "domain/error.hpp"

/// Query analysis for retrieval: a question's terms plus the phrases a
/// small built-in thesaurus makes equivalent to phrases in it, so that a
/// customer's words ("working days", "terminate", "shop") reach the
/// documents' words ("business days", "end", "store"). Query side only:
/// passages and the index are unchanged, so no fingerprint changes.
namespace candor::data {

/// One phrase of the query that the thesaurus knows.
struct query_expansion {
  /// Positions of the phrase's terms in `analyzed_query::terms`.
  size_t first = 0;
  size_t count = 0;
  /// Equivalent phrases, each analyzed (stemmed, stopwords dropped).
  std::vector<std::vector<std::string>> alternatives;
};

struct analyzed_query {
  /// `analyze(text, opts)`.
  std::vector<std::string> terms;
  std::vector<query_expansion> expansions;

  /// The terms to search for: `terms`, then every alternative phrase's
  /// terms not already present, in order.
  std::vector<std::string> search_terms() const;
};

struct compiled_thesaurus;

/// The phrase groups of one set of documents, after the built-in ones:
/// places and the regions the documents use for them, product names, house
/// words. Read by `candor ingest` from `<kb>/thesaurus.json`
/// (`{"groups": [["phrase", "phrase", ...], ...]}`, each phrase expanding
/// to the ones after it), kept in the index and loaded with its snapshot.
/// Immutable; compiled once for every analyzer option.
class thesaurus_extension {
public:
  /// Parses and checks the file's text; `config_invalid` naming the group.
  static domain::outcome<std::shared_ptr<const thesaurus_extension>>
  parse(std::string_view json);

  thesaurus_extension(std::vector<std::vector<std::string>> groups,
                      std::string json);

  const std::vector<std::vector<std::string>>& groups() const noexcept {
    return groups_;
  }

  /// The text it was parsed from (what the index keeps).
  const std::string& json() const noexcept {
    return json_;
  }

  /// The built-in groups and these, for `opts` (internal to query.cpp).
  const compiled_thesaurus& compiled(const analyzer_options& opts) const;

private:
  struct compiled_set;
  std::vector<std::vector<std::string>> groups_;
  std::string json_;
  std::shared_ptr<const compiled_set> compiled_;
};

/// Analyzes a question and finds its thesaurus phrases (longest match
/// first, left to right): the built-in groups and, when given, those of the
/// documents (`extra`). Deterministic and thread-safe.
analyzed_query analyze_query(std::string_view text,
                             const analyzer_options& opts = {},
                             const thesaurus_extension* extra = nullptr);

/// A question analysed once for one retrieval: the retrieve node hands it
/// to both `retrieval_snapshot::search` and `evidence_details`, which
/// would otherwise each analyse the text and work out its answer type.
struct prepared_question {
  std::string text;
  analyzer_options options;
  /// `analyze_query(text, options)`.
  analyzed_query query;
  /// `expected_answer_type(text)`.
  answer_type type = answer_type::none;
};

prepared_question prepare_question(std::string_view text,
                                   const analyzer_options& opts = {},
                                   const thesaurus_extension* extra = nullptr);

/// Terms of the names in `text`: words of two letters or more written with
/// a capital that do not start a sentence ("City Cruiser", "Black Friday",
/// "VAT"), analyzed like the rest of the query, each once, in order. A
/// question naming a product, place or event can only be answered by a
/// passage that names it too.
std::vector<std::string> named_terms(std::string_view text,
                                     const analyzer_options& opts = {});

/// Number of phrase groups in the built-in thesaurus (for tests).
size_t thesaurus_size(const analyzer_options& opts = {});

} // namespace candor::data
