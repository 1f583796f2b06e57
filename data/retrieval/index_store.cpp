#include "data/retrieval/index_store.hpp"

#include "data/retrieval/answer_type.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include <boost/json.hpp>

#include "data/retrieval/query.hpp"

namespace candor::data {

namespace json = boost::json;

namespace {

domain::error fail(std::string message) {
  return storage_error(std::move(message));
}

/// Parses a JSON array of strings; anything else gives an empty list.
std::vector<std::string> string_array(const std::string& text) {
  std::vector<std::string> out;
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_array())
    return out;
  for (const auto& x : v.as_array())
    if (x.is_string())
      out.emplace_back(x.as_string());
  return out;
}

} // namespace

// -- opening ------------------------------------------------------------------

domain::outcome<database> open_index_for_writing(const std::string& path) {
  std::error_code fs_ec;
  auto parent = std::filesystem::path{path}.parent_path();
  if (!parent.empty())
    std::filesystem::create_directories(parent, fs_ec);
  auto db = database::open(path);
  if (!db)
    return db.err();
  if (auto err = db->busy_timeout(std::chrono::seconds{10}))
    return err;
  if (auto err = db->exec("PRAGMA journal_mode=WAL"))
    return err;
  static const std::string schema = R"sql(
    CREATE TABLE IF NOT EXISTS meta(
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS documents(
      slug TEXT PRIMARY KEY,
      title TEXT NOT NULL,
      path TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      chunking TEXT NOT NULL,
      chunk_count INTEGER NOT NULL,
      ingested_at INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS chunks(
      id TEXT PRIMARY KEY,
      doc TEXT NOT NULL REFERENCES documents(slug),
      ordinal INTEGER NOT NULL,
      heading TEXT NOT NULL,
      text TEXT NOT NULL,
      flagged INTEGER NOT NULL,
      redacted_spans TEXT NOT NULL,
      flag_reasons TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc, ordinal);
    CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts
      USING fts5(terms, chunk_id UNINDEXED, tokenize = 'unicode61');
    CREATE TABLE IF NOT EXISTS embedders(
      name TEXT PRIMARY KEY,
      parameters TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      state TEXT NOT NULL,
      built_at INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS vectors(
      chunk_id TEXT NOT NULL,
      embedder TEXT NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY(chunk_id, embedder)
    ) WITHOUT ROWID;
  )sql";
  auto tx = transaction::begin(*db);
  if (!tx)
    return tx.err();
  if (auto err = db->exec(schema))
    return err;
  auto version = db->query_text(
    "SELECT value FROM meta WHERE key = 'schema_version'");
  if (version.ok()) {
    if (*version != std::to_string(index_schema_version))
      return fail(path + ": index schema version " + *version
                  + ", this build uses "
                  + std::to_string(index_schema_version));
  } else if (auto err = db->exec(
               "INSERT INTO meta(key, value) VALUES('schema_version', '"
               + std::to_string(index_schema_version) + "')")) {
    return err;
  }
  if (auto err = tx->commit())
    return err;
  return std::move(*db);
}

domain::outcome<database> open_index_for_reading(const std::string& path) {
  std::error_code fs_ec;
  if (!std::filesystem::is_regular_file(path, fs_ec))
    return fail("no retrieval index at " + path + "; run `candor ingest`");
  auto db = database::open(path, SQLITE_OPEN_READONLY);
  if (!db)
    return db.err();
  if (auto err = db->busy_timeout(std::chrono::seconds{10}))
    return err;
  auto version = db->query_text(
    "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version)
    return fail(path + " is not a retrieval index: " + version.err().message);
  if (*version != std::to_string(index_schema_version))
    return fail(path + ": index schema version " + *version
                + ", this build uses "
                + std::to_string(index_schema_version));
  return std::move(*db);
}

std::string indexed_text(const chunk& c) {
  // A heading summarises its passage, so it counts twice: the whole path
  // once, then its last part again. Text before the first section has the
  // title as its heading, which is not repeated.
  std::string out;
  out.reserve(c.doc_title.size() + 2 * c.heading.size() + c.text.size() + 3);
  out += c.doc_title;
  out += '\n';
  if (c.heading != c.doc_title) {
    std::string_view leaf{c.heading};
    if (auto at = leaf.rfind(" > "); at != std::string_view::npos)
      leaf.remove_prefix(at + 3);
    out += c.heading;
    out += '\n';
    out += leaf;
    out += '\n';
  }
  out += c.text;
  return out;
}

std::string fts_terms(const chunk& c, const analyzer_options& opts) {
  std::string out;
  for (const auto& t : analyze(indexed_text(c), opts)) {
    if (!out.empty())
      out += ' ';
    out += t;
  }
  return out;
}

// -- snapshot -----------------------------------------------------------------

retrieval_snapshot::~retrieval_snapshot() {
  for (size_t i = 0; i < chunks_.size(); ++i)
    delete terms_[i].load(std::memory_order_acquire);
}

const retrieval_snapshot::chunk_terms&
retrieval_snapshot::terms_of(size_t i) const {
  auto& slot = terms_[i];
  if (const auto* cached = slot.load(std::memory_order_acquire))
    return *cached;
  auto terms = analyze(indexed_text(chunks_[i]), tfidf_.analysis());
  auto fresh = std::make_unique<chunk_terms>();
  fresh->tfidf = tfidf_.embed_document_terms(terms);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  fresh->distinct = std::move(terms);
  const chunk_terms* expected = nullptr;
  if (slot.compare_exchange_strong(expected, fresh.get(),
                                   std::memory_order_acq_rel,
                                   std::memory_order_acquire))
    return *fresh.release();
  return *expected; // another thread stored the same terms first
}

retrieval_snapshot::retrieval_snapshot(
  std::vector<chunk> chunks, retrieval_params params, tfidf_embedder tfidf,
  bm25_embedder bm25, const std::vector<sparse_vector>& tfidf_vectors,
  const std::vector<sparse_vector>& bm25_vectors)
  : params_(std::move(params)),
    chunks_(std::move(chunks)),
    tfidf_(std::move(tfidf)),
    bm25_(std::move(bm25)),
    terms_(new std::atomic<const chunk_terms*>[chunks_.size()]) {
  for (size_t i = 0; i < chunks_.size(); ++i)
    terms_[i].store(nullptr, std::memory_order_relaxed);
  std::unordered_map<std::string_view, uint32_t> docs;
  std::vector<std::vector<std::string>> document_terms;
  by_id_.reserve(chunks_.size());
  chunk_document_.reserve(chunks_.size());
  for (uint32_t i = 0; i < chunks_.size(); ++i) {
    by_id_.emplace(chunks_[i].id, i);
    auto [at, added] = docs.emplace(chunks_[i].doc_slug,
                                    static_cast<uint32_t>(docs.size()));
    if (added)
      document_terms.emplace_back();
    chunk_document_.push_back(at->second);
    auto terms = analyze(indexed_text(chunks_[i]), bm25_.analysis());
    auto& all = document_terms[at->second];
    all.insert(all.end(), std::make_move_iterator(terms.begin()),
               std::make_move_iterator(terms.end()));
  }
  documents_ = docs.size();
  answer_types_.reserve(chunks_.size());
  for (const auto& c : chunks_)
    answer_types_.push_back(answer_type_mask(c.text));
  {
    // The heading field: a section's heading path (empty for a document's
    // introduction, whose heading is the title).
    std::vector<std::vector<std::string>> heading_terms;
    heading_terms.reserve(chunks_.size());
    for (const auto& c : chunks_)
      heading_terms.push_back(c.heading == c.doc_title
                                ? std::vector<std::string>{}
                                : analyze(c.heading, bm25_.analysis()));
    heading_bm25_ = bm25_embedder{params_.bm25};
    heading_bm25_.fit_terms(heading_terms);
    std::vector<sparse_vector> hv;
    hv.reserve(heading_terms.size());
    for (const auto& t : heading_terms)
      hv.push_back(heading_bm25_.embed_document_terms(t));
    heading_postings_ = posting_lists::build(hv, heading_bm25_.dimensions());
  }
  document_bm25_ = bm25_embedder{params_.bm25};
  document_bm25_.fit_terms(document_terms);
  {
    std::vector<sparse_vector> dv;
    dv.reserve(document_terms.size());
    for (const auto& t : document_terms)
      dv.push_back(document_bm25_.embed_document_terms(t));
    document_postings_
      = posting_lists::build(dv, document_bm25_.dimensions());
  }
  tfidf_postings_ = posting_lists::build(tfidf_vectors, tfidf_.dimensions());
  bm25_postings_ = posting_lists::build(bm25_vectors, bm25_.dimensions());
  fingerprints_[0] = tfidf_.fingerprint();
  fingerprints_[1] = bm25_.fingerprint();
  fingerprints_[2] = "rrf(k=" + std::to_string(params_.rrf_k) + ",depth="
                     + std::to_string(params_.fusion_depth) + ")["
                     + fingerprints_[0] + "|" + fingerprints_[1] + "]";
}

std::shared_ptr<const retrieval_snapshot>
retrieval_snapshot::build(std::vector<chunk> chunks,
                          const retrieval_params& params) {
  std::stable_sort(chunks.begin(), chunks.end(),
                   [](const chunk& a, const chunk& b) {
                     return a.doc_slug != b.doc_slug
                              ? a.doc_slug < b.doc_slug
                              : a.ordinal < b.ordinal;
                   });
  tfidf_embedder tfidf{params.tfidf};
  bm25_embedder bm25{params.bm25};
  std::vector<std::vector<std::string>> tfidf_terms;
  std::vector<std::vector<std::string>> bm25_terms;
  tfidf_terms.reserve(chunks.size());
  for (const auto& c : chunks)
    tfidf_terms.push_back(analyze(indexed_text(c), tfidf.analysis()));
  bool same_analysis = params.tfidf.analysis.stem == params.bm25.analysis.stem
                       && params.tfidf.analysis.stopwords
                            == params.bm25.analysis.stopwords;
  if (!same_analysis) {
    bm25_terms.reserve(chunks.size());
    for (const auto& c : chunks)
      bm25_terms.push_back(analyze(indexed_text(c), bm25.analysis()));
  }
  const auto& b_terms = same_analysis ? tfidf_terms : bm25_terms;
  tfidf.fit_terms(tfidf_terms);
  bm25.fit_terms(b_terms);
  std::vector<sparse_vector> tv;
  std::vector<sparse_vector> bv;
  tv.reserve(chunks.size());
  bv.reserve(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    tv.push_back(tfidf.embed_document_terms(tfidf_terms[i]));
    bv.push_back(bm25.embed_document_terms(b_terms[i]));
  }
  return std::make_shared<const retrieval_snapshot>(
    std::move(chunks), params, std::move(tfidf), std::move(bm25), tv, bv);
}

const chunk* retrieval_snapshot::find(std::string_view id) const {
  auto i = by_id_.find(std::string{id});
  return i == by_id_.end() ? nullptr : &chunks_[i->second];
}

std::vector<std::string> retrieval_snapshot::redacted_spans() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& c : chunks_)
    for (const auto& s : c.redacted_spans)
      if (seen.insert(s).second)
        out.push_back(s);
  return out;
}

const std::string&
retrieval_snapshot::fingerprint(search_mode mode) const noexcept {
  return fingerprints_[static_cast<size_t>(mode)];
}

// -- loading ------------------------------------------------------------------

namespace {

/// Checks one configured embedder against the index's record and restores
/// its learned state.
domain::error check_embedder(database& db, const std::string& path,
                             embedder& configured) {
  auto stmt = db.prepare(
    "SELECT parameters, fingerprint, state FROM embedders WHERE name = ?1");
  if (!stmt)
    return stmt.err();
  stmt->bind_text(1, configured.name());
  auto row = stmt->step();
  if (!row)
    return row.err();
  if (*row != step_result::row)
    return domain::make_error(domain::ec::config_invalid,
                              "retrieval index " + path + " has no "
                                + configured.name()
                                + " embedder; run `candor ingest`");
  auto stored = stmt->column_text(1);
  auto state = stmt->column_text(2);
  auto mismatch = [&](const std::string& mine) {
    return domain::make_error(
      domain::ec::config_invalid,
      "retrieval index " + path + " was built with embedder fingerprint "
        + stored + " but the configured embedder is " + mine
        + "; re-run `candor ingest` with this configuration");
  };
  auto signature = configured.signature();
  if (stored.compare(0, signature.size() + 1, signature + "#") != 0)
    return mismatch(signature);
  if (auto err = configured.restore(state))
    return mismatch(signature + " (" + err.message + ")");
  auto mine = configured.fingerprint();
  if (mine != stored)
    return mismatch(mine);
  return {};
}

/// Checks that every document of the index was cut with `expected`.
domain::error check_chunking(database& db, const std::string& path,
                             const chunk_options& expected) {
  auto stmt = db.prepare(
    "SELECT DISTINCT chunking FROM documents ORDER BY chunking");
  if (!stmt)
    return stmt.err();
  auto wanted = expected.describe();
  std::string built;
  bool other = false;
  for (;;) {
    auto row = stmt->step();
    if (!row)
      return row.err();
    if (*row == step_result::done)
      break;
    auto text = stmt->column_text(0);
    other = other || text != wanted;
    built += (built.empty() ? "" : " and ") + text;
  }
  if (!other)
    return {};
  return domain::make_error(
    domain::ec::config_invalid,
    "retrieval index " + path + " was chunked with " + built
      + " but the configuration asks for " + wanted
      + " (retrieval.chunkSize " + std::to_string(expected.target_chars)
      + "); re-run `candor ingest` with this configuration to re-chunk the "
        "documents");
}

} // namespace

domain::outcome<std::shared_ptr<const retrieval_snapshot>>
load_snapshot(const std::string& index_path, const retrieval_params& params,
              const std::optional<chunk_options>& chunking) {
  auto db = open_index_for_reading(index_path);
  if (!db)
    return db.err();
  auto tx = transaction::begin(*db, tx_mode::deferred);
  if (!tx)
    return tx.err();
  if (chunking)
    if (auto err = check_chunking(*db, index_path, *chunking))
      return err;
  tfidf_embedder tfidf{params.tfidf};
  bm25_embedder bm25{params.bm25};
  if (auto err = check_embedder(*db, index_path, tfidf))
    return err;
  if (auto err = check_embedder(*db, index_path, bm25))
    return err;
  auto stmt = db->prepare(R"sql(
    SELECT c.id, c.doc, d.title, c.heading, c.text, c.ordinal, c.flagged,
           c.redacted_spans, c.flag_reasons, vt.data, vb.data
      FROM chunks c
      JOIN documents d ON d.slug = c.doc
      LEFT JOIN vectors vt ON vt.chunk_id = c.id AND vt.embedder = 'tfidf'
      LEFT JOIN vectors vb ON vb.chunk_id = c.id AND vb.embedder = 'bm25'
     ORDER BY c.doc, c.ordinal
  )sql");
  if (!stmt)
    return stmt.err();
  std::vector<chunk> chunks;
  std::vector<sparse_vector> tv;
  std::vector<sparse_vector> bv;
  auto blob = [&](int col) {
    auto p = static_cast<const char*>(sqlite3_column_blob(stmt->handle(), col));
    auto n = sqlite3_column_bytes(stmt->handle(), col);
    return p == nullptr ? std::string_view{}
                        : std::string_view{p, static_cast<size_t>(n)};
  };
  for (;;) {
    auto row = stmt->step();
    if (!row)
      return row.err();
    if (*row == step_result::done)
      break;
    chunk c;
    c.id = stmt->column_text(0);
    c.doc_slug = stmt->column_text(1);
    c.doc_title = stmt->column_text(2);
    c.heading = stmt->column_text(3);
    c.text = stmt->column_text(4);
    c.ordinal = static_cast<int32_t>(stmt->column_int64(5));
    c.flagged = stmt->column_int64(6) != 0;
    c.redacted_spans = string_array(stmt->column_text(7));
    c.flag_reasons = string_array(stmt->column_text(8));
    if (stmt->is_null(9) || stmt->is_null(10))
      return fail("retrieval index " + index_path + ": chunk " + c.id
                  + " has no vector; run `candor ingest`");
    auto t = decode(blob(9));
    if (!t)
      return t.err();
    auto b = decode(blob(10));
    if (!b)
      return b.err();
    tv.push_back(std::move(*t));
    bv.push_back(std::move(*b));
    chunks.push_back(std::move(c));
  }
  if (chunks.size() != tfidf.corpus_size()
      || chunks.size() != bm25.corpus_size())
    return fail("retrieval index " + index_path + " holds "
                + std::to_string(chunks.size())
                + " chunks but its embedders were fitted on "
                + std::to_string(tfidf.corpus_size())
                + "; run `candor ingest`");
  return std::shared_ptr<const retrieval_snapshot>{
    std::make_shared<const retrieval_snapshot>(std::move(chunks), params,
                                               std::move(tfidf),
                                               std::move(bm25), tv, bv)};
}

// -- FTS5 reference -----------------------------------------------------------

domain::outcome<std::vector<fts_hit>>
fts5_search(database& db, std::string_view query, size_t k,
            const analyzer_options& opts) {
  std::vector<fts_hit> out;
  // The same query analysis as `retrieval_snapshot::search`.
  auto terms = analyze_query(query, opts).search_terms();
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  if (terms.empty() || k == 0)
    return out;
  std::string match;
  for (const auto& t : terms) {
    if (!match.empty())
      match += " OR ";
    match += '"' + t + '"';
  }
  auto stmt = db.prepare(
    "SELECT chunk_id, -bm25(chunk_fts) AS s FROM chunk_fts "
    "WHERE chunk_fts MATCH ?1 ORDER BY bm25(chunk_fts), chunk_id LIMIT ?2");
  if (!stmt)
    return stmt.err();
  stmt->bind_text(1, match);
  stmt->bind_int64(2, static_cast<int64_t>(k));
  for (;;) {
    auto row = stmt->step();
    if (!row)
      return row.err();
    if (*row == step_result::done)
      break;
    out.push_back(fts_hit{stmt->column_text(0), stmt->column_double(1)});
  }
  return out;
}

} // namespace candor::data
