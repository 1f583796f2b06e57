#pragma once

// The retrieval index: its file (index.db) and the in-memory snapshot that
// searches run on.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/retrieval/chunker.hpp"
#include "data/retrieval/embedder.hpp"
#include "data/sqlite.hpp"
#include "domain/error.hpp"

/// The retrieval index: its SQLite file (`<dataDir>/index.db`, written by
/// data/ingest) and the immutable in-memory snapshot that serves queries.
///
/// Tables: `meta` (schema version), `documents` (slug, title, path, SHA-256
/// content hash, chunking options), `chunks` (id, doc, ordinal, heading,
/// sanitized text, flagged, redacted spans and flag reasons as JSON
/// arrays), `chunk_fts` (FTS5 over the analyzed terms of each chunk, the
/// reference for BM25), `embedders` (name, parameters, fingerprint, learned
/// state) and `vectors` (one encoded sparse vector per chunk and embedder).
namespace candor::data {

struct prepared_question; // data/retrieval/query.hpp
class thesaurus_extension; // data/retrieval/query.hpp

/// Bumped when the tables change incompatibly.
inline constexpr int index_schema_version = 1;

/// Opens (creating when missing) an index file for writing, in WAL mode,
/// with the tables in place.
domain::outcome<database> open_index_for_writing(const std::string& path);

/// Opens an existing index file read-only; an error names the path when the
/// file is missing or is not an index of this schema version.
domain::outcome<database> open_index_for_reading(const std::string& path);

/// The text a chunk is indexed under: the document title, the heading
/// path, its last heading once more (headings summarise; the repeat is a
/// field boost that measurably helps on the real corpus), then the text.
/// The heading is left out where it is the title (text before the first
/// section).
std::string indexed_text(const chunk& c);

/// The terms FTS5 stores for a chunk: `analyze(indexed_text(c))` joined by
/// single spaces (FTS5's unicode61 tokenizer splits them back exactly).
std::string fts_terms(const chunk& c, const analyzer_options& opts);

// -- search -------------------------------------------------------------------

enum class search_mode : uint8_t {
  tfidf,  ///< cosine of hashed TF-IDF vectors
  bm25,   ///< Okapi BM25
  fusion, ///< reciprocal-rank fusion of both lists
};

std::string_view to_string(search_mode x) noexcept;

/// Parses "tfidf", "bm25", "fusion"; false on anything else.
bool parse_search_mode(std::string_view text, search_mode& out) noexcept;

/// One retrieved chunk.
struct search_hit {
  /// Position in `retrieval_snapshot::chunks()`.
  uint32_t index = 0;
  std::string chunk_id;
  /// The mode's score: cosine (tfidf), BM25 score (bm25), or the RRF sum
  /// (fusion). Higher is better.
  double score = 0;
  /// Component scores: cosine and BM25 (0 when the chunk was not in that
  /// list); in a single mode the other one is 0.
  double tfidf = 0;
  double bm25 = 0;
};

/// Knobs of a query; the defaults are what the server uses.
struct search_options {
  /// Accumulator pruning: a query feature or posting whose contribution is
  /// below `prune_ratio` times the query's maximum possible score is
  /// skipped. 0 scores exhaustively.
  double prune_ratio = 1e-3;
  /// Ranking prior on a document's introduction (the text before its
  /// first section, whose heading is the title): its score is multiplied
  /// by this. An introduction names every topic of its page, so it
  /// matches many questions while the answer sits in a section; 0.8 was
  /// chosen on the calibration split of eval/retrieval.v1.json. The
  /// component scores (`tfidf`, `bm25`) stay unweighted. 1 disables it.
  double intro_weight = 0.8;
  /// Document-level evidence: a chunk's score (in tfidf and bm25 modes
  /// and in each list fused) gets `document_weight` x the best chunk
  /// score of the query x its document's BM25 score over the whole
  /// document relative to the best document's, so that a question phrased
  /// at the level of a page ("dealer", "Club") favours that page's
  /// sections. The component scores (`tfidf`, `bm25`) stay unweighted.
  /// 0.2 was chosen on the calibration split; 0 disables it.
  double document_weight = 0.2;
  /// Field-aware scoring (BM25F-style): the BM25 list also adds
  /// `heading_weight` x a BM25 over the heading field alone (each section's
  /// heading path, with its own length normalisation), on top of the
  /// indexed text that already holds the heading; the tfidf list is
  /// unchanged. `search_hit::bm25` includes this part. 0.2 was chosen on
  /// the calibration split; 0 disables it.
  double heading_weight = 0.2;
  /// Expected answer type (data/retrieval/answer_type.hpp): when the question asks
  /// for a kind of answer (a price, a duration, a phone number, ...), a
  /// chunk whose text states none has its score multiplied by this, and
  /// the candidates looked at go `answer_type_depth` deeper than k so that
  /// a chunk stating one can move up. The component scores stay
  /// unweighted. Chosen on the calibration split; 1 disables it.
  double answer_type_weight = 0.6;
  size_t answer_type_depth = 10;
};

/// Inverted lists over vector indices, each sorted by weight (descending),
/// then by chunk position. Built once, read-only afterwards.
struct posting_lists {
  std::vector<uint32_t> offsets; ///< list of index i: [offsets[i], [i+1])
  std::vector<uint32_t> docs;
  std::vector<float> weights;

  static posting_lists build(const std::vector<sparse_vector>& vectors,
                             uint32_t dimensions);

  /// Number of postings in all lists.
  size_t size() const noexcept {
    return docs.size();
  }
};

/// An immutable retrieval snapshot: chunks, both lexical embedders with
/// their corpus statistics, and posting lists. `search` is const and keeps
/// its scratch space per thread, so one snapshot can be shared through a
/// `shared_ptr<const retrieval_snapshot>` by any number of threads.
struct retrieval_result; // data/retrieval/evidence.hpp

/// The few most recent retrievals on one snapshot, by question, depth and
/// mode (`retrieve_with_evidence`, data/retrieval/evidence.hpp): within
/// one request the local provider's router and the retrieve node search
/// for the same question, and the second finds the first's result here.
/// Thread-safe; holds at most `capacity` results, the oldest dropped.
class retrieval_memo {
public:
  static constexpr size_t capacity = 8;

  std::shared_ptr<const retrieval_result> find(std::string_view key) const;
  void put(std::string key, std::shared_ptr<const retrieval_result> value);

private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const retrieval_result>>>
    entries_; ///< oldest first
};

class retrieval_snapshot {
public:
  /// Builds a snapshot in memory (fits both embedders on `chunks`), for
  /// tests, benchmarks and the ablation. Chunks are ordered by document
  /// slug, then ordinal.
  /// `thesaurus`: the documents' own phrase groups (query.hpp), if any.
  static std::shared_ptr<const retrieval_snapshot>
  build(std::vector<chunk> chunks, const retrieval_params& params,
        std::shared_ptr<const thesaurus_extension> thesaurus = {});

  /// Top `k` chunks for `query`, best first. Ties are broken by chunk
  /// position, so results are deterministic. An empty query, or one with
  /// no known term, gives no hits.
  std::vector<search_hit> search(std::string_view query, size_t k,
                                 search_mode mode,
                                 const search_options& opts = {}) const;

  /// The same for a question analysed beforehand (`prepare_question`,
  /// data/retrieval/query.hpp); analysed again only if this snapshot's analyzers use
  /// other options.
  std::vector<search_hit> search(const prepared_question& question, size_t k,
                                 search_mode mode,
                                 const search_options& opts = {}) const;

  const std::vector<chunk>& chunks() const noexcept {
    return chunks_;
  }

  size_t size() const noexcept {
    return chunks_.size();
  }

  /// The memo of recent retrievals on this snapshot.
  retrieval_memo& memo() const noexcept {
    return *memo_;
  }

  /// Number of distinct documents.
  size_t document_count() const noexcept {
    return documents_;
  }

  /// Whether `term` (analysed with `bm25().analysis()`) occurs in some
  /// document's title or section heading: the subjects the documents are
  /// about, as their authors named them.
  bool in_titles_or_headings(const std::string& term) const {
    return std::binary_search(title_terms_.begin(), title_terms_.end(), term);
  }

  /// The chunk with this id, or nullptr.
  const chunk* find(std::string_view id) const;

  /// Every span the sanitizer removed, for the output guard.
  std::vector<std::string> redacted_spans() const;

  /// The fingerprint serving `mode`: an embedder's, or for fusion
  /// "rrf(k=..,depth=..)[<tfidf>|<bm25>]".
  const std::string& fingerprint(search_mode mode) const noexcept;

  const tfidf_embedder& tfidf() const noexcept {
    return tfidf_;
  }

  const bm25_embedder& bm25() const noexcept {
    return bm25_;
  }

  const retrieval_params& params() const noexcept {
    return params_;
  }

  /// The answer types chunk `i`'s text states (`answer_type_mask`),
  /// computed when the snapshot is assembled.
  uint32_t answer_types(size_t i) const noexcept {
    return i < answer_types_.size() ? answer_types_[i] : 0;
  }

  /// What evidence scoring (data/retrieval/evidence.hpp) needs from one chunk:
  /// `analyze(indexed_text(c), tfidf().analysis())` as sorted distinct
  /// terms, and the TF-IDF vector of all of them.
  struct chunk_terms {
    std::vector<std::string> distinct;
    sparse_vector tfidf;

    bool contains(const std::string& term) const {
      return std::binary_search(distinct.begin(), distinct.end(), term);
    }
  };

  /// The terms of chunk `i` (< size()), computed on first use and kept
  /// for the snapshot's life: the snapshot never changes, so neither do
  /// they, and a chunk that comes up again (the same passage for many
  /// questions) is not analysed again. Safe from any number of threads
  /// (two threads may both compute a missing entry; one result is kept).
  const chunk_terms& terms_of(size_t i) const;

  ~retrieval_snapshot();
  retrieval_snapshot(const retrieval_snapshot&) = delete;
  retrieval_snapshot& operator=(const retrieval_snapshot&) = delete;

  /// Total postings (both lists), a size figure for logs and /health.
  size_t posting_count() const noexcept {
    return tfidf_postings_.size() + bm25_postings_.size();
  }

  /// Assembles a snapshot from parts (used by `build` and
  /// `load_snapshot`). Vectors are parallel to `chunks`.
  retrieval_snapshot(std::vector<chunk> chunks, retrieval_params params,
                     tfidf_embedder tfidf, bm25_embedder bm25,
                     const std::vector<sparse_vector>& tfidf_vectors,
                     const std::vector<sparse_vector>& bm25_vectors,
                     std::shared_ptr<const thesaurus_extension> thesaurus
                     = {});

  /// The documents' own thesaurus groups (`<kb>/thesaurus.json`, kept in
  /// the index), or nullptr: every query analysis on this snapshot uses
  /// them after the built-in ones.
  const thesaurus_extension* thesaurus() const noexcept {
    return thesaurus_.get();
  }

  /// The same, shared: to build another snapshot with it.
  const std::shared_ptr<const thesaurus_extension>&
  shared_thesaurus() const noexcept {
    return thesaurus_;
  }

  /// A chunk (index into `chunks()`) as the search ranks it.
  struct scored {
    uint32_t doc;
    double score;
    double raw; ///< without the document-level part (with the field)
  };

  /// Up to this many scored chunks, the top k are picked by selection (a
  /// linear pass, then a sort of the k); beyond, by a k-sized heap, where
  /// most chunks cost one comparison with the worst one kept.
  static constexpr size_t select_at_most = 2048;

private:
  /// A second field searched with the same query terms.
  struct field_query {
    const posting_lists* lists;
    sparse_vector query;
    double weight;
  };

  /// Top `k` chunks of `q` over `lists`, plus `field->weight` x the
  /// field's score when `field` is given; with `document_relevance` (one
  /// value in [0, 1] per document), each chunk's score also gets
  /// `document_weight` x the best raw score x its document's value.
  std::vector<scored>
  top(const posting_lists& lists, const sparse_vector& q, size_t k,
      double prune_ratio,
      const std::vector<double>* document_relevance = nullptr,
      double document_weight = 0, const field_query* field = nullptr) const;

  /// BM25 of `terms` against each whole document, divided by the best
  /// document's (all 0 when no document matches).
  std::vector<double>
  document_relevance(const std::vector<std::string>& terms) const;

  retrieval_params params_;
  std::shared_ptr<const thesaurus_extension> thesaurus_;
  std::vector<chunk> chunks_;
  size_t documents_ = 0;
  std::unordered_map<std::string, uint32_t> by_id_;
  tfidf_embedder tfidf_;
  bm25_embedder bm25_;
  posting_lists tfidf_postings_;
  posting_lists bm25_postings_;
  /// Document of each chunk (an index into the documents in chunk order).
  std::vector<uint32_t> chunk_document_;
  /// BM25 over whole documents (each the concatenation of its chunks'
  /// indexed terms), fitted when the snapshot is assembled; derived from
  /// the chunks, so it needs no fingerprint of its own.
  bm25_embedder document_bm25_;
  /// BM25 over the heading field of each chunk (empty for introductions).
  bm25_embedder heading_bm25_;
  posting_lists heading_postings_;
  posting_lists document_postings_;
  /// `answer_type_mask` of each chunk's text.
  std::vector<uint32_t> answer_types_;
  /// Distinct terms of every title and heading, sorted.
  std::vector<std::string> title_terms_;
  std::string fingerprints_[3];
  /// terms_of's entries (null until first use), one per chunk.
  mutable std::unique_ptr<std::atomic<const chunk_terms*>[]> terms_;
  std::unique_ptr<retrieval_memo> memo_ = std::make_unique<retrieval_memo>();
};

/// Loads the index at `index_path` into a snapshot for serving. Refuses,
/// with an error (`config_invalid`) that names both fingerprints, when an
/// embedder recorded in the index differs from the configured one (other
/// parameters, or a learned state that does not hash to the recorded
/// fingerprint). With `chunking`, refuses the same way, naming both option
/// sets (`chunk_options::describe`), when a document of the index was cut
/// with other chunking options (e.g. another `retrieval.chunkSize`): the
/// remedy is `candor ingest` with the configuration, which re-chunks. Reads
/// in one transaction, so a concurrent ingest is seen either entirely or
/// not at all.
domain::outcome<std::shared_ptr<const retrieval_snapshot>>
load_snapshot(const std::string& index_path, const retrieval_params& params,
              const std::optional<chunk_options>& chunking = std::nullopt);

// -- FTS5 reference -----------------------------------------------------------

struct fts_hit {
  std::string chunk_id;
  /// -bm25(chunk_fts): higher is better, as in the snapshot.
  double score = 0;
};

/// The documents' thesaurus kept in the index (meta key `thesaurus`), or
/// nullptr when it has none; `storage_failed` or `config_invalid` when it
/// cannot be read.
domain::outcome<std::shared_ptr<const thesaurus_extension>>
load_thesaurus(database& db);

/// Keeps `t` in the index (nullptr: removes it). Inside the writer's
/// transaction.
domain::error store_thesaurus(database& db, const thesaurus_extension* t);

/// BM25 through SQLite FTS5 (k1 = 1.2, b = 0.75, FTS5's constants) over the
/// index's `chunk_fts`, with the query analyzed as `search` does
/// (`analyze_query(...).search_terms()`, data/retrieval/query.hpp). The
/// reference the in-memory BM25 is tested against; not used for serving.
domain::outcome<std::vector<fts_hit>>
fts5_search(database& db, std::string_view query, size_t k,
            const analyzer_options& opts = {});

} // namespace candor::data
