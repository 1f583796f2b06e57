#pragma once

// Declares `candor ingest`'s options, progress and report, and the
// ingest function itself.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/retrieval/chunker.hpp"
#include "data/retrieval/embedder.hpp"
#include "domain/error.hpp"

/// `candor ingest`: Markdown documents of a directory into the retrieval
/// index file, incrementally.
namespace candor::domain {
struct config;
} // namespace candor::domain

namespace candor::data {

class thesaurus_extension; // data/retrieval/query.hpp

struct ingest_options {
  chunk_options chunking;
  retrieval_params retrieval;
};

/// The chunking and embedder options the configuration asks for
/// (`retrieval.chunkSize`, `retrieval.dimensions`): what `candor ingest`
/// indexes with, and the `retrieval` part is what `load_snapshot` must be
/// given for the index to match.
ingest_options ingest_options_from(const domain::config& cfg);

/// Where an ingest run is, for a progress display.
struct ingest_progress {
  /// "scan" (one call per document file), "index" (embedding the corpus,
  /// called every few hundred chunks) or "done".
  std::string_view stage;
  /// The document (scan) or "" (index, done).
  std::string_view item;
  size_t done = 0;
  size_t total = 0;
};

using ingest_progress_fn = std::function<void(const ingest_progress&)>;

/// What an ingest run did. Documents are compared by the SHA-256 of their
/// bytes (and the chunking options they were cut with).
struct ingest_report {
  size_t documents_created = 0;   ///< new files
  size_t documents_updated = 0;   ///< changed files, their chunks replaced
  size_t documents_unchanged = 0; ///< same hash: nothing written
  size_t documents_removed = 0;   ///< gone from the directory
  size_t documents_total = 0;
  size_t chunks_created = 0;
  size_t chunks_removed = 0;
  size_t chunks_total = 0;
  size_t chunks_flagged = 0;
  /// True when the embedders were refitted and every vector rewritten
  /// (any document change, or embedder parameters that differ from the
  /// index's). False for a run that changed nothing.
  bool reindexed = false;
  std::string tfidf_fingerprint;
  std::string bm25_fingerprint;
  double seconds = 0;
  /// A file and a reason: files that could not be read (skipped; the rest
  /// of the run goes on, and an earlier readable version stays indexed),
  /// and passages a reader would not see that were left out (see
  /// converted_document::hidden).
  using file_note = std::pair<std::string, std::string>;
  std::vector<file_note> skipped;
  std::vector<file_note> hidden;
};

/// What `candor ingest` reads, for messages: "*.md, *.markdown, *.txt,
/// *.html, *.htm or *.pdf files".
inline constexpr std::string_view document_kinds
  = "*.md, *.markdown, *.txt, *.html, *.htm or *.pdf files";

/// One line for the CLI, e.g. "documents: 2 created, 1 updated, 27
/// unchanged, 0 removed; chunks: 12 created, 5 removed, 431 total".
std::string summary(const ingest_report& report);

/// Chunks every document file directly inside `kb_dir` (file-name order,
/// the same slugs and chunks as `ingest`; unreadable files left out),
/// without an index file: for
/// in-memory snapshots (`retrieval_snapshot::build`), e.g. the chunk-size
/// ablation.
domain::outcome<std::vector<chunk>>
chunk_directory(const std::string& kb_dir, const chunk_options& opts = {});

/// The documents' own thesaurus, `<kb_dir>/thesaurus.json` (see
/// thesaurus_extension in query.hpp), or nullptr when there is none;
/// `config_invalid` naming the file when it is not a valid one.
domain::outcome<std::shared_ptr<const thesaurus_extension>>
read_kb_thesaurus(const std::string& kb_dir);

/// Ingests every document file directly inside `kb_dir` (Markdown, plain
/// text, HTML, PDF: data/retrieval/formats.hpp) into the index at
/// `index_path` (created when missing), in one write transaction: readers
/// see the old index or the new one. A document's slug is its file name
/// without its extension, slugified; two files with the same slug are an
/// error. A file that cannot be read is reported in `skipped` and the run
/// goes on. `<kb_dir>/thesaurus.json`, when there is one, is kept in the
/// index for the snapshots loaded from it (and removed when it is gone).
domain::outcome<ingest_report> ingest(const std::string& kb_dir,
                                      const std::string& index_path,
                                      const ingest_options& opts = {},
                                      const ingest_progress_fn& progress = {});

} // namespace candor::data
