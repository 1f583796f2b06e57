// `candor ingest`: reads the Markdown documents of a directory and updates
// the retrieval index file incrementally, refitting embedders when needed.

#include "data/retrieval/ingest.hpp"

#include "data/retrieval/formats.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "data/retrieval/index_store.hpp"
#include "data/retrieval/query.hpp"
#include "data/sqlite.hpp"
#include "domain/config.hpp"

namespace candor::data {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::string to_json(const std::vector<std::string>& xs) {
  json::array a;
  for (const auto& x : xs)
    a.emplace_back(x);
  return json::serialize(a);
}

domain::outcome<std::string> read_file(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return storage_error("cannot read " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad())
    return storage_error("cannot read " + path.string());
  return buf.str();
}

/// Deletes a document's chunks with their vectors and FTS rows; returns
/// how many chunks went.
domain::outcome<size_t> remove_chunks(database& db, const std::string& slug) {
  auto n = db.prepare("SELECT COUNT(*) FROM chunks WHERE doc = ?1");
  if (!n)
    return n.err();
  n->bind_text(1, slug);
  auto row = n->step();
  if (!row)
    return row.err();
  auto count = static_cast<size_t>(n->column_int64(0));
  for (auto sql : {
         "DELETE FROM vectors WHERE chunk_id IN "
         "(SELECT id FROM chunks WHERE doc = ?1)",
         "DELETE FROM chunk_fts WHERE chunk_id IN "
         "(SELECT id FROM chunks WHERE doc = ?1)",
         "DELETE FROM chunks WHERE doc = ?1",
       }) {
    auto stmt = db.prepare(sql);
    if (!stmt)
      return stmt.err();
    stmt->bind_text(1, slug);
    if (auto err = stmt->run())
      return err;
  }
  return count;
}

/// True when the index's embedders were built with other parameters than
/// the configured ones (or are missing).
domain::outcome<bool> embedders_differ(database& db,
                                       const retrieval_params& params) {
  tfidf_embedder tfidf{params.tfidf};
  bm25_embedder bm25{params.bm25};
  auto stmt = db.prepare("SELECT fingerprint FROM embedders WHERE name = ?1");
  if (!stmt)
    return stmt.err();
  for (const embedder* e : {static_cast<const embedder*>(&tfidf),
                            static_cast<const embedder*>(&bm25)}) {
    stmt->bind_text(1, e->name());
    auto row = stmt->step();
    if (!row)
      return row.err();
    if (*row != step_result::row)
      return true;
    auto fp = stmt->column_text(0);
    auto sig = e->signature() + "#";
    if (fp.compare(0, sig.size(), sig) != 0)
      return true;
  }
  return false;
}

/// Refits both embedders on every chunk of the index and rewrites the FTS
/// rows, the vectors and the embedder records.
domain::error reindex(database& db, const ingest_options& opts,
                      const ingest_progress_fn& progress,
                      ingest_report& report) {
  auto sel = db.prepare(R"sql(
    SELECT c.id, d.title, c.heading, c.text
      FROM chunks c JOIN documents d ON d.slug = c.doc
     ORDER BY c.doc, c.ordinal
  )sql");
  if (!sel)
    return sel.err();
  std::vector<chunk> chunks;
  for (;;) {
    auto row = sel->step();
    if (!row)
      return row.err();
    if (*row == step_result::done)
      break;
    chunk c;
    c.id = sel->column_text(0);
    c.doc_title = sel->column_text(1);
    c.heading = sel->column_text(2);
    c.text = sel->column_text(3);
    chunks.push_back(std::move(c));
  }
  const auto& p = opts.retrieval;
  tfidf_embedder tfidf{p.tfidf};
  bm25_embedder bm25{p.bm25};
  bool same = p.tfidf.analysis.stem == p.bm25.analysis.stem
              && p.tfidf.analysis.stopwords == p.bm25.analysis.stopwords;
  std::vector<std::vector<std::string>> t_terms;
  std::vector<std::vector<std::string>> b_terms;
  t_terms.reserve(chunks.size());
  for (const auto& c : chunks) {
    t_terms.push_back(analyze(indexed_text(c), tfidf.analysis()));
    if (!same)
      b_terms.push_back(analyze(indexed_text(c), bm25.analysis()));
  }
  const auto& bt = same ? t_terms : b_terms;
  tfidf.fit_terms(t_terms);
  bm25.fit_terms(bt);
  if (auto err = db.exec("DELETE FROM vectors; DELETE FROM chunk_fts;"))
    return err;
  auto ins_fts
    = db.prepare("INSERT INTO chunk_fts(terms, chunk_id) VALUES(?1, ?2)");
  if (!ins_fts)
    return ins_fts.err();
  auto ins_vec = db.prepare(
    "INSERT INTO vectors(chunk_id, embedder, data) VALUES(?1, ?2, ?3)");
  if (!ins_vec)
    return ins_vec.err();
  auto put_vector = [&](const std::string& id, const char* name,
                        const sparse_vector& v) -> domain::error {
    auto blob = encode(v);
    ins_vec->bind_text(1, id);
    ins_vec->bind_text(2, name);
    if (sqlite3_bind_blob(ins_vec->handle(), 3, blob.data(),
                          static_cast<int>(blob.size()), SQLITE_TRANSIENT)
        != SQLITE_OK)
      return db.last_error();
    return ins_vec->run();
  };
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::string joined;
    for (const auto& t : bt[i]) {
      if (!joined.empty())
        joined += ' ';
      joined += t;
    }
    ins_fts->bind_text(1, joined);
    ins_fts->bind_text(2, chunks[i].id);
    if (auto err = ins_fts->run())
      return err;
    if (auto err = put_vector(chunks[i].id, "tfidf",
                              tfidf.embed_document_terms(t_terms[i])))
      return err;
    if (auto err
        = put_vector(chunks[i].id, "bm25", bm25.embed_document_terms(bt[i])))
      return err;
    if (progress && ((i + 1) % 256 == 0 || i + 1 == chunks.size()))
      progress(ingest_progress{"index", "", i + 1, chunks.size()});
  }
  auto ins_emb = db.prepare(
    "INSERT OR REPLACE INTO embedders(name, parameters, fingerprint, state, "
    "built_at) VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!ins_emb)
    return ins_emb.err();
  auto now = static_cast<int64_t>(std::time(nullptr));
  for (const embedder* e : {static_cast<const embedder*>(&tfidf),
                            static_cast<const embedder*>(&bm25)}) {
    ins_emb->bind_text(1, e->name());
    ins_emb->bind_text(2, e->parameters());
    ins_emb->bind_text(3, e->fingerprint());
    ins_emb->bind_text(4, e->state());
    ins_emb->bind_int64(5, now);
    if (auto err = ins_emb->run())
      return err;
  }
  report.reindexed = true;
  report.tfidf_fingerprint = tfidf.fingerprint();
  report.bm25_fingerprint = bm25.fingerprint();
  return {};
}

struct document_file {
  fs::path path;
  std::string slug;
  doc_format format = doc_format::markdown;
};

/// The document files of `kb_dir` (every format of format_of) in file-name
/// order, with their slugs.
domain::outcome<std::vector<document_file>>
list_documents(const std::string& kb_dir) {
  std::error_code fs_ec;
  if (!fs::is_directory(kb_dir, fs_ec))
    return domain::make_error(domain::ec::config_invalid,
                              "no documents directory at " + kb_dir);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator{kb_dir, fs_ec})
    if (entry.is_regular_file(fs_ec) && format_of(entry.path()))
      files.push_back(entry.path());
  if (fs_ec)
    return storage_error("cannot list " + kb_dir + ": " + fs_ec.message());
  std::sort(files.begin(), files.end());
  std::vector<document_file> out;
  std::map<std::string, std::string> seen; // slug -> file
  for (auto& file : files) {
    auto slug = slugify(file.stem().string());
    if (slug.empty())
      return domain::make_error(domain::ec::config_invalid,
                                "document file name " + file.string()
                                  + " gives an empty slug");
    if (auto [it, fresh] = seen.emplace(slug, file.string()); !fresh)
      return domain::make_error(domain::ec::config_invalid,
                                "documents " + it->second + " and "
                                  + file.string() + " share the slug " + slug);
    auto format = *format_of(file);
    out.push_back(document_file{std::move(file), std::move(slug), format});
  }
  return out;
}

} // namespace

domain::outcome<std::shared_ptr<const thesaurus_extension>>
read_kb_thesaurus(const std::string& kb_dir) {
  auto path = fs::path{kb_dir} / "thesaurus.json";
  std::error_code fs_ec;
  if (!fs::is_regular_file(path, fs_ec))
    return std::shared_ptr<const thesaurus_extension>{};
  std::ifstream in{path, std::ios::binary};
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof())
    return domain::make_error(domain::ec::config_invalid,
                              "cannot read " + path.string());
  auto t = thesaurus_extension::parse(text.str());
  if (!t) {
    auto e = t.err();
    e.message = path.string() + ": " + e.message;
    return e;
  }
  return t;
}

domain::outcome<std::vector<chunk>> chunk_directory(const std::string& kb_dir,
                                                    const chunk_options& opts) {
  auto files = list_documents(kb_dir);
  if (!files)
    return files.err();
  if (files->empty())
    return domain::make_error(domain::ec::config_invalid,
                              "no documents (" + std::string{document_kinds}
                                + ") in " + kb_dir);
  std::vector<chunk> out;
  for (const auto& f : *files) {
    auto bytes = read_file(f.path);
    if (!bytes)
      return bytes.err();
    auto md = to_markdown(f.format, *bytes, f.path.stem().string());
    if (!md)
      continue; // unreadable: `candor ingest` reports it
    for (auto& c : chunk_markdown(f.slug, md->markdown, opts).chunks)
      out.push_back(std::move(c));
  }
  return out;
}

ingest_options ingest_options_from(const domain::config& cfg) {
  ingest_options opts;
  opts.chunking.target_chars = static_cast<size_t>(cfg.retrieval.chunk_size);
  opts.retrieval.tfidf.dimensions
    = static_cast<uint32_t>(cfg.retrieval.dimensions);
  return opts;
}

std::string summary(const ingest_report& r) {
  auto s = "documents: " + std::to_string(r.documents_created) + " created, "
           + std::to_string(r.documents_updated) + " updated, "
           + std::to_string(r.documents_unchanged) + " unchanged, "
           + std::to_string(r.documents_removed) + " removed ("
           + std::to_string(r.documents_total)
           + " total); chunks: " + std::to_string(r.chunks_created)
           + " created, " + std::to_string(r.chunks_removed) + " removed, "
           + std::to_string(r.chunks_total) + " total, "
           + std::to_string(r.chunks_flagged) + " flagged; "
           + (r.reindexed ? "vectors rebuilt" : "vectors unchanged");
  if (!r.skipped.empty())
    s += "; " + std::to_string(r.skipped.size()) + " file(s) skipped";
  if (!r.hidden.empty())
    s += "; " + std::to_string(r.hidden.size())
         + " hidden passage(s) left out";
  return s;
}

domain::outcome<ingest_report> ingest(const std::string& kb_dir,
                                      const std::string& index_path,
                                      const ingest_options& opts,
                                      const ingest_progress_fn& progress) {
  auto started = std::chrono::steady_clock::now();
  ingest_report report;
  auto files = list_documents(kb_dir);
  if (!files)
    return files.err();
  // Syncing with an empty directory would remove every document: far more
  // likely a wrong --kb than an intent.
  if (files->empty())
    return domain::make_error(domain::ec::config_invalid,
                              "no documents (" + std::string{document_kinds}
                                + ") in " + kb_dir
                                + "; refusing to empty the index "
                                + index_path);
  // The index, in one write transaction.
  auto db = open_index_for_writing(index_path);
  if (!db)
    return db.err();
  auto thesaurus = read_kb_thesaurus(kb_dir);
  if (!thesaurus)
    return thesaurus.err();
  auto tx = transaction::begin(*db);
  if (!tx)
    return tx.err();
  struct known {
    std::string hash;
    std::string chunking;
  };
  std::map<std::string, known> existing;
  {
    auto sel = db->prepare("SELECT slug, content_hash, chunking "
                           "FROM documents");
    if (!sel)
      return sel.err();
    for (;;) {
      auto row = sel->step();
      if (!row)
        return row.err();
      if (*row == step_result::done)
        break;
      existing[sel->column_text(0)]
        = known{sel->column_text(1), sel->column_text(2)};
    }
  }
  auto ins_doc = db->prepare(
    "INSERT OR REPLACE INTO documents(slug, title, path, content_hash, "
    "chunking, chunk_count, ingested_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!ins_doc)
    return ins_doc.err();
  auto ins_chunk = db->prepare(
    "INSERT INTO chunks(id, doc, ordinal, heading, text, flagged, "
    "redacted_spans, flag_reasons) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!ins_chunk)
    return ins_chunk.err();
  const auto chunking = opts.chunking.describe();
  const auto now = static_cast<int64_t>(std::time(nullptr));
  std::set<std::string> seen;
  for (size_t i = 0; i < files->size(); ++i) {
    const auto& file = (*files)[i].path;
    const auto& slug = (*files)[i].slug;
    seen.insert(slug);
    if (progress)
      progress(ingest_progress{"scan", slug, i + 1, files->size()});
    auto bytes = read_file(file);
    if (!bytes)
      return bytes.err();
    auto hash = sha256_hex(*bytes);
    auto old = existing.find(slug);
    if (old != existing.end() && old->second.hash == hash
        && old->second.chunking == chunking) {
      ++report.documents_unchanged;
      continue;
    }
    auto md = to_markdown((*files)[i].format, *bytes, file.stem().string());
    if (!md) {
      // Reported by name and skipped; an earlier version stays indexed
      // (its chunks are only replaced by a version that can be read).
      report.skipped.push_back({file.filename().string(), md.err().message});
      if (old != existing.end())
        ++report.documents_unchanged;
      continue;
    }
    for (auto& why : md->hidden)
      report.hidden.push_back({file.filename().string(), std::move(why)});
    if (old != existing.end()) {
      auto n = remove_chunks(*db, slug);
      if (!n)
        return n.err();
      report.chunks_removed += *n;
      ++report.documents_updated;
    } else {
      ++report.documents_created;
    }
    auto doc = chunk_markdown(slug, md->markdown, opts.chunking);
    ins_doc->bind_text(1, slug);
    ins_doc->bind_text(2, doc.title);
    ins_doc->bind_text(3, file.string());
    ins_doc->bind_text(4, hash);
    ins_doc->bind_text(5, chunking);
    ins_doc->bind_int64(6, static_cast<int64_t>(doc.chunks.size()));
    ins_doc->bind_int64(7, now);
    if (auto err = ins_doc->run())
      return err;
    for (const auto& c : doc.chunks) {
      ins_chunk->bind_text(1, c.id);
      ins_chunk->bind_text(2, slug);
      ins_chunk->bind_int64(3, c.ordinal);
      ins_chunk->bind_text(4, c.heading);
      ins_chunk->bind_text(5, c.text);
      ins_chunk->bind_int64(6, c.flagged ? 1 : 0);
      ins_chunk->bind_text(7, to_json(c.redacted_spans));
      ins_chunk->bind_text(8, to_json(c.flag_reasons));
      if (auto err = ins_chunk->run())
        return err;
    }
    report.chunks_created += doc.chunks.size();
  }
  // Documents whose files are gone.
  for (const auto& kv : existing) {
    if (seen.count(kv.first) != 0)
      continue;
    auto n = remove_chunks(*db, kv.first);
    if (!n)
      return n.err();
    report.chunks_removed += *n;
    auto del = db->prepare("DELETE FROM documents WHERE slug = ?1");
    if (!del)
      return del.err();
    del->bind_text(1, kv.first);
    if (auto err = del->run())
      return err;
    ++report.documents_removed;
  }
  // Vectors: rebuilt when anything changed, since IDF depends on the whole
  // corpus, or when the configured embedders differ from the recorded ones.
  bool changed = report.documents_created + report.documents_updated
                   + report.documents_removed
                 > 0;
  auto differ = embedders_differ(*db, opts.retrieval);
  if (!differ)
    return differ.err();
  if (changed || *differ) {
    if (auto err = reindex(*db, opts, progress, report))
      return err;
  } else {
    auto sel = db->prepare("SELECT fingerprint FROM embedders "
                           "WHERE name = ?1");
    if (!sel)
      return sel.err();
    for (auto [name, out] : {std::pair{"tfidf", &report.tfidf_fingerprint},
                             std::pair{"bm25", &report.bm25_fingerprint}}) {
      sel->bind_text(1, name);
      auto row = sel->step();
      if (!row)
        return row.err();
      if (*row == step_result::row)
        *out = sel->column_text(0);
    }
  }
  auto count = [&](const char* sql) -> size_t {
    auto n = db->query_int64(sql);
    return n ? static_cast<size_t>(*n) : 0;
  };
  report.documents_total = count("SELECT COUNT(*) FROM documents");
  report.chunks_total = count("SELECT COUNT(*) FROM chunks");
  report.chunks_flagged = count("SELECT COUNT(*) FROM chunks WHERE flagged");
  if (auto err = store_thesaurus(*db, thesaurus->get()))
    return err;
  if (auto err = tx->commit())
    return err;
  report.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
        .count();
  if (progress)
    progress(
      ingest_progress{"done", "", report.chunks_total, report.chunks_total});
  return report;
}

} // namespace candor::data
