#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/embedder.hpp"

/// Query expansion from the Princeton WordNet 3.0 database (Debian package
/// `wordnet-base`, files `index.<pos>` and `data.<pos>` under
/// /usr/share/wordnet). A general English lexicon, not fitted to any
/// question set: a query word reaches the lemmas of its most frequent
/// senses' synsets, mapped through the retrieval analyzer and kept only
/// when the corpus uses them.
namespace candor::data {

/// Where the database is looked for when nothing else is configured.
inline constexpr std::string_view default_wordnet_dir = "/usr/share/wordnet";

/// Synonyms of analyzed terms: term -> distinct analyzed terms of the
/// same synsets (never the term itself), each known to the corpus, in a
/// deterministic (sorted) order.
struct synonym_table {
  std::unordered_map<std::string, std::vector<std::string>> synonyms;
  /// Empty when the database was read; otherwise why there is no
  /// expansion (the table is then empty).
  std::string error;

  /// The synonyms of `term`, or an empty list.
  const std::vector<std::string>& of(const std::string& term) const;
};

struct wordnet_options {
  std::string dir{default_wordnet_dir};
  /// Senses per word and part of speech taken, most frequent first
  /// (WordNet orders them by tagged frequency). 0 takes none.
  size_t senses = 1;
};

/// Reads the four parts of speech and builds the table: for each
/// single-word lemma (no spaces, hyphens or digits) of `index.<pos>`, the
/// single-word lemmas of its first `opts.senses` synsets, both analyzed
/// with `analysis` (a lemma whose analysis is not exactly one term is
/// skipped), the synonym kept when `known(term)` holds. Deterministic.
/// A missing or unreadable file gives an empty table with `error` set.
synonym_table load_wordnet(const wordnet_options& opts,
                           const analyzer_options& analysis,
                           const std::function<bool(const std::string&)>&
                             known);

} // namespace candor::data
