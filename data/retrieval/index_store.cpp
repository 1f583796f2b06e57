// The index file (index.db): opening it, checking it matches the configured
// embedder and chunking, loading it and full-text search over it (building
// the in-memory snapshot is in snapshot.cpp).

#include "data/retrieval/index_store.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

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
  auto version
    = db->query_text("SELECT value FROM meta WHERE key = 'schema_version'");
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
  auto version
    = db->query_text("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version)
    return fail(path + " is not a retrieval index: " + version.err().message);
  if (*version != std::to_string(index_schema_version))
    return fail(path + ": index schema version " + *version
                + ", this build uses " + std::to_string(index_schema_version));
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
  auto stmt
    = db.prepare("SELECT DISTINCT chunking FROM documents ORDER BY chunking");
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
      + " but the configuration asks for " + wanted + " (retrieval.chunkSize "
      + std::to_string(expected.target_chars)
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
  auto thesaurus = load_thesaurus(*db);
  if (!thesaurus)
    return fail(index_path + ": its thesaurus: " + thesaurus.err().message
                + "; run `candor ingest`");
  return std::shared_ptr<const retrieval_snapshot>{
    std::make_shared<const retrieval_snapshot>(
      std::move(chunks), params, std::move(tfidf), std::move(bm25), tv, bv,
      std::move(*thesaurus))};
}

// -- the documents' thesaurus -------------------------------------------------

domain::outcome<std::shared_ptr<const thesaurus_extension>>
load_thesaurus(database& db) {
  auto stmt = db.prepare("SELECT value FROM meta WHERE key = 'thesaurus'");
  if (!stmt)
    return stmt.err();
  auto row = stmt->step();
  if (!row)
    return row.err();
  if (*row != step_result::row)
    return std::shared_ptr<const thesaurus_extension>{};
  return thesaurus_extension::parse(stmt->column_text(0));
}

domain::error store_thesaurus(database& db, const thesaurus_extension* t) {
  if (t == nullptr)
    return db.exec("DELETE FROM meta WHERE key = 'thesaurus'");
  auto stmt = db.prepare("INSERT INTO meta(key, value) VALUES('thesaurus', ?1) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!stmt)
    return stmt.err();
  if (auto err = stmt->bind_text(1, t->json()))
    return err;
  return stmt->run();
}

// -- FTS5 reference -----------------------------------------------------------

domain::outcome<std::vector<fts_hit>>
fts5_search(database& db, std::string_view query, size_t k,
            const analyzer_options& opts) {
  std::vector<fts_hit> out;
  // The same query analysis as `retrieval_snapshot::search`, with the
  // thesaurus the index keeps.
  auto thesaurus = load_thesaurus(db);
  if (!thesaurus)
    return thesaurus.err();
  auto terms = analyze_query(query, opts, thesaurus->get()).search_terms();
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
