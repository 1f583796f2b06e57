#include "data/index_store.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include <boost/json.hpp>

#include "data/query.hpp"

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

/// True when both ranked lists order a before b.
bool better(double a_score, uint32_t a_doc, double b_score,
            uint32_t b_doc) noexcept {
  return a_score > b_score || (a_score == b_score && a_doc < b_doc);
}

/// Per-thread accumulators, reused across queries and snapshots. Entries
/// are zero between queries.
struct scratch {
  std::vector<double> acc;
  std::vector<uint32_t> touched;
};

scratch& thread_scratch() {
  thread_local scratch s;
  return s;
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

// -- search modes -------------------------------------------------------------

std::string_view to_string(search_mode x) noexcept {
  switch (x) {
    case search_mode::tfidf:
      return "tfidf";
    case search_mode::bm25:
      return "bm25";
    case search_mode::fusion:
      return "fusion";
  }
  return "fusion";
}

bool parse_search_mode(std::string_view text, search_mode& out) noexcept {
  for (auto m : {search_mode::tfidf, search_mode::bm25, search_mode::fusion})
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  return false;
}

// -- posting lists ------------------------------------------------------------

posting_lists posting_lists::build(const std::vector<sparse_vector>& vectors,
                                   uint32_t dimensions) {
  posting_lists p;
  p.offsets.assign(static_cast<size_t>(dimensions) + 1, 0);
  for (const auto& v : vectors)
    for (auto i : v.index)
      if (i < dimensions)
        ++p.offsets[i + 1];
  for (size_t i = 1; i < p.offsets.size(); ++i)
    p.offsets[i] += p.offsets[i - 1];
  p.docs.resize(p.offsets.back());
  p.weights.resize(p.offsets.back());
  auto fill = p.offsets;
  for (uint32_t d = 0; d < vectors.size(); ++d) {
    const auto& v = vectors[d];
    for (size_t j = 0; j < v.size(); ++j) {
      if (v.index[j] >= dimensions || !(v.value[j] > 0))
        continue;
      auto at = fill[v.index[j]]++;
      p.docs[at] = d;
      p.weights[at] = v.value[j];
    }
  }
  // Sort each list by weight, descending (documents are already ascending,
  // and a stable sort keeps them so among equal weights).
  std::vector<std::pair<float, uint32_t>> buf;
  for (size_t i = 0; i + 1 < p.offsets.size(); ++i) {
    auto b = p.offsets[i];
    auto e = fill[i];
    if (e - b < 2)
      continue;
    buf.clear();
    for (auto j = b; j < e; ++j)
      buf.emplace_back(p.weights[j], p.docs[j]);
    std::stable_sort(buf.begin(), buf.end(), [](auto& x, auto& y) {
      return x.first > y.first;
    });
    for (auto j = b; j < e; ++j) {
      p.weights[j] = buf[j - b].first;
      p.docs[j] = buf[j - b].second;
    }
  }
  // Postings skipped above (non-positive weights) leave holes: compact.
  if (fill != std::vector<uint32_t>(p.offsets.begin() + 1, p.offsets.end())) {
    posting_lists q;
    q.offsets.assign(p.offsets.size(), 0);
    for (size_t i = 0; i + 1 < p.offsets.size(); ++i) {
      for (auto j = p.offsets[i]; j < fill[i]; ++j) {
        q.docs.push_back(p.docs[j]);
        q.weights.push_back(p.weights[j]);
      }
      q.offsets[i + 1] = static_cast<uint32_t>(q.docs.size());
    }
    return q;
  }
  return p;
}

// -- snapshot -----------------------------------------------------------------

retrieval_snapshot::retrieval_snapshot(
  std::vector<chunk> chunks, retrieval_params params, tfidf_embedder tfidf,
  bm25_embedder bm25, const std::vector<sparse_vector>& tfidf_vectors,
  const std::vector<sparse_vector>& bm25_vectors)
  : params_(std::move(params)),
    chunks_(std::move(chunks)),
    tfidf_(std::move(tfidf)),
    bm25_(std::move(bm25)) {
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

std::vector<double> retrieval_snapshot::document_relevance(
  const std::vector<std::string>& terms) const {
  std::vector<double> out(documents_, 0.0);
  auto q = document_bm25_.embed_query_terms(terms);
  double best = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    auto f = q.index[i];
    if (f + 1 >= document_postings_.offsets.size())
      continue;
    for (auto j = document_postings_.offsets[f];
         j < document_postings_.offsets[f + 1]; ++j) {
      auto& x = out[document_postings_.docs[j]];
      x += q.value[i] * document_postings_.weights[j];
      best = std::max(best, x);
    }
  }
  if (best > 0)
    for (auto& x : out)
      x /= best;
  return out;
}

std::vector<retrieval_snapshot::scored>
retrieval_snapshot::top(const posting_lists& lists, const sparse_vector& q,
                        size_t k, double prune_ratio,
                        const std::vector<double>* document_relevance,
                        double document_weight, const field_query* field)
  const {
  std::vector<scored> out;
  if (k == 0 || q.size() == 0 || chunks_.empty())
    return out;
  // Query features with postings, by their largest possible contribution.
  struct term {
    const posting_lists* lists;
    int source; ///< 0 for `lists`, 1 for the field
    uint32_t begin;
    uint32_t end;
    double weight;
    double bound;
  };
  std::vector<term> terms;
  double total = 0;
  auto add_terms = [&](const posting_lists& ls, const sparse_vector& v,
                       double scale, int source) {
    for (size_t i = 0; i < v.size(); ++i) {
      auto f = v.index[i];
      if (f + 1 >= ls.offsets.size() || !(v.value[i] > 0))
        continue;
      auto b = ls.offsets[f];
      auto e = ls.offsets[f + 1];
      if (b == e)
        continue;
      double w = scale * v.value[i];
      terms.push_back(term{&ls, source, b, e, w, w * ls.weights[b]});
      total += terms.back().bound;
    }
  };
  add_terms(lists, q, 1.0, 0);
  if (field != nullptr && field->weight > 0)
    add_terms(*field->lists, field->query, field->weight, 1);
  if (terms.empty())
    return out;
  std::sort(terms.begin(), terms.end(), [](const term& x, const term& y) {
    if (x.bound != y.bound)
      return x.bound > y.bound;
    return x.source != y.source ? x.source < y.source : x.begin < y.begin;
  });
  auto cut = prune_ratio > 0 ? prune_ratio * total : 0.0;
  auto& s = thread_scratch();
  if (s.acc.size() < chunks_.size())
    s.acc.resize(chunks_.size(), 0.0);
  s.touched.clear();
  for (const auto& t : terms) {
    if (t.bound < cut)
      break; // the rest are smaller still
    for (auto j = t.begin; j < t.end; ++j) {
      auto c = t.weight * t.lists->weights[j];
      if (c < cut)
        break; // lists are sorted by weight
      auto d = t.lists->docs[j];
      if (s.acc[d] == 0)
        s.touched.push_back(d);
      s.acc[d] += c;
    }
  }
  // Top k with a min-heap whose root is the worst kept hit.
  auto worse = [](const scored& a, const scored& b) {
    return better(a.score, a.doc, b.score, b.doc);
  };
  out.reserve(std::min(k, s.touched.size()) + 1);
  double bonus = 0;
  if (document_relevance != nullptr && document_weight > 0) {
    double best = 0;
    for (auto d : s.touched)
      best = std::max(best, s.acc[d]);
    bonus = document_weight * best;
  }
  for (auto d : s.touched) {
    scored x{d, s.acc[d], s.acc[d]};
    if (bonus > 0)
      x.score += bonus * (*document_relevance)[chunk_document_[d]];
    s.acc[d] = 0;
    if (out.size() < k) {
      out.push_back(x);
      std::push_heap(out.begin(), out.end(), worse);
    } else if (better(x.score, x.doc, out.front().score, out.front().doc)) {
      std::pop_heap(out.begin(), out.end(), worse);
      out.back() = x;
      std::push_heap(out.begin(), out.end(), worse);
    }
  }
  s.touched.clear();
  std::sort(out.begin(), out.end(), worse);
  return out;
}

std::vector<search_hit>
retrieval_snapshot::search(std::string_view query, size_t k, search_mode mode,
                           const search_options& opts) const {
  std::vector<search_hit> hits;
  if (k == 0)
    return hits;
  auto make_hit = [&](uint32_t doc, double score) {
    search_hit h;
    h.index = doc;
    h.chunk_id = chunks_[doc].id;
    h.score = score;
    return h;
  };
  // Query analysis (thesaurus expansion) happens once per analyzer.
  auto same_analysis = params_.tfidf.analysis.stem == params_.bm25.analysis.stem
                       && params_.tfidf.analysis.stopwords
                            == params_.bm25.analysis.stopwords;
  auto terms = analyze_query(query, params_.tfidf.analysis).search_terms();
  auto bm25_terms = same_analysis
                      ? terms
                      : analyze_query(query, params_.bm25.analysis)
                          .search_terms();
  // Document-level evidence and the heading field (see search_options).
  auto dw = opts.document_weight;
  auto hw = opts.heading_weight;
  field_query heading{&heading_postings_,
                      heading_bm25_.embed_query_terms(bm25_terms), hw};
  const auto* hf = hw > 0 ? &heading : nullptr;
  std::vector<double> relevance;
  if (dw > 0)
    relevance = document_relevance(bm25_terms);
  const auto* rel = dw > 0 ? &relevance : nullptr;
  auto weighted = opts.intro_weight >= 0 && opts.intro_weight < 1;
  auto prior = [&](uint32_t doc) {
    const auto& c = chunks_[doc];
    return weighted && c.heading == c.doc_title ? opts.intro_weight : 1.0;
  };
  if (mode == search_mode::tfidf || mode == search_mode::bm25) {
    // With the prior, an introduction can drop below a chunk ranked after
    // it: look past k by at most one introduction per document.
    auto extra = weighted ? std::min<size_t>(documents_, 64) : 0;
    auto tfidf = mode == search_mode::tfidf;
    auto list = tfidf ? top(tfidf_postings_, tfidf_.embed_query_terms(terms),
                            k + extra, opts.prune_ratio, rel,
                            dw)
                      : top(bm25_postings_,
                            bm25_.embed_query_terms(bm25_terms), k + extra,
                            opts.prune_ratio, rel, dw, hf);
    for (const auto& x : list) {
      hits.push_back(make_hit(x.doc, x.score * prior(x.doc)));
      (tfidf ? hits.back().tfidf : hits.back().bm25) = x.raw;
    }
    std::stable_sort(hits.begin(), hits.end(),
                     [](const search_hit& a, const search_hit& b) {
                       return better(a.score, a.index, b.score, b.index);
                     });
    if (hits.size() > k)
      hits.resize(k);
    return hits;
  }
  // Reciprocal-rank fusion.
  auto depth = std::max<size_t>(k, params_.fusion_depth);
  auto a = top(tfidf_postings_, tfidf_.embed_query_terms(terms), depth,
               opts.prune_ratio, rel, dw);
  auto b = top(bm25_postings_, bm25_.embed_query_terms(bm25_terms), depth,
               opts.prune_ratio, rel, dw, hf);
  struct fused {
    double rrf = 0;
    double tfidf = 0;
    double bm25 = 0;
    size_t best_rank = SIZE_MAX;
  };
  std::unordered_map<uint32_t, fused> by_doc;
  const double rrf_k = params_.rrf_k;
  for (size_t r = 0; r < a.size(); ++r) {
    auto& f = by_doc[a[r].doc];
    f.rrf += 1.0 / (rrf_k + static_cast<double>(r + 1));
    f.tfidf = a[r].raw;
    f.best_rank = std::min(f.best_rank, r);
  }
  for (size_t r = 0; r < b.size(); ++r) {
    auto& f = by_doc[b[r].doc];
    f.rrf += 1.0 / (rrf_k + static_cast<double>(r + 1));
    f.bm25 = b[r].raw;
    f.best_rank = std::min(f.best_rank, r);
  }
  for (auto& [doc, f] : by_doc)
    f.rrf *= prior(doc);
  std::vector<std::pair<uint32_t, fused>> all(by_doc.begin(), by_doc.end());
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
    if (x.second.rrf != y.second.rrf)
      return x.second.rrf > y.second.rrf;
    if (x.second.best_rank != y.second.best_rank)
      return x.second.best_rank < y.second.best_rank;
    return x.first < y.first;
  });
  for (size_t i = 0; i < all.size() && i < k; ++i) {
    hits.push_back(make_hit(all[i].first, all[i].second.rrf));
    hits.back().tfidf = all[i].second.tfidf;
    hits.back().bm25 = all[i].second.bm25;
  }
  return hits;
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

} // namespace

domain::outcome<std::shared_ptr<const retrieval_snapshot>>
load_snapshot(const std::string& index_path, const retrieval_params& params) {
  auto db = open_index_for_reading(index_path);
  if (!db)
    return db.err();
  auto tx = transaction::begin(*db, tx_mode::deferred);
  if (!tx)
    return tx.err();
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
