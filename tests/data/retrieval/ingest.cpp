// Tests of `candor ingest`: incremental updates, rebuilds on other options,
// progress, bad inputs and an empty documents directory.

#include "data/retrieval/ingest.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "data/retrieval/index_store.hpp"
#include "data/sqlite.hpp"
#include "domain/build_info.hpp"
#include "domain/config.hpp"

using namespace candor;
using namespace candor::data;
namespace fs = std::filesystem;

namespace {

const std::string kb_dir = std::string{CANDOR_SOURCE_DIR} + "/data/kb";

/// A fresh directory under the system temp dir, removed with its contents.
struct temp_dir {
  fs::path path;

  temp_dir() {
    auto pattern
      = (fs::temp_directory_path() / "candor-ingest-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }

  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }

  std::string file(const std::string& name) const {
    return (path / name).string();
  }
};

void write(const fs::path& path, const std::string& text) {
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out << text;
}

ingest_report run(const std::string& kb, const std::string& index,
                  const ingest_options& opts = {}) {
  auto r = ingest(kb, index, opts);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  return *r;
}

int64_t count(const std::string& index, const std::string& sql) {
  auto db = database::open(index);
  BOOST_REQUIRE(db.ok());
  auto n = db->query_int64(sql);
  BOOST_REQUIRE_MESSAGE(n.ok(), (n.ok() ? "" : n.err().message));
  return *n;
}

/// chunk id -> text, for the whole index.
std::map<std::string, std::string> chunk_texts(const std::string& index) {
  std::map<std::string, std::string> out;
  auto db = database::open(index);
  BOOST_REQUIRE(db.ok());
  auto stmt = db->prepare("SELECT id, text FROM chunks");
  BOOST_REQUIRE(stmt.ok());
  for (;;) {
    auto row = stmt->step();
    BOOST_REQUIRE(row.ok());
    if (*row == step_result::done)
      break;
    out[stmt->column_text(0)] = stmt->column_text(1);
  }
  return out;
}

/// A small knowledge base of three documents.
struct small_kb {
  temp_dir dir;
  fs::path kb;
  std::string index;

  small_kb() : kb(dir.path / "kb"), index(dir.file("data/index.db")) {
    fs::create_directories(kb);
    write(kb / "alpha.md", "# Alpha\n\nAlpha intro about chains.\n\n"
                           "## Chains\n\nWax the chain every 300 km.\n\n"
                           "## Brakes\n\nBleed hydraulic brakes yearly.\n");
    write(kb / "beta.md", "# Beta\n\n## Tyres\n\nTubeless tyres need "
                          "sealant.\n\n## Pressure\n\nUse 4 bar on gravel.\n");
    write(kb / "gamma.md", "# Gamma\n\n## Helmets\n\nReplace a helmet after "
                           "any crash.\n");
    write(kb / "photo.png", "not a document");
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(data_ingest)

BOOST_AUTO_TEST_CASE(real_corpus_then_nothing_to_do) {
  temp_dir dir;
  auto index = dir.file("index.db");
  auto first = run(kb_dir, index);
  BOOST_TEST(first.documents_created >= 24u);
  BOOST_TEST(first.documents_total == first.documents_created);
  BOOST_TEST(first.chunks_total >= 200u);
  BOOST_TEST(first.chunks_created == first.chunks_total);
  BOOST_TEST(first.chunks_flagged >= 1u);
  BOOST_TEST(first.reindexed);
  BOOST_TEST(first.tfidf_fingerprint.rfind("tfidf(", 0) == 0);
  BOOST_TEST(first.bm25_fingerprint.rfind("bm25(", 0) == 0);
  BOOST_TEST_MESSAGE("ingest of the real corpus: " << summary(first) << " in "
                                                   << first.seconds << " s");
  auto second = run(kb_dir, index);
  BOOST_TEST(second.documents_created == 0u);
  BOOST_TEST(second.documents_updated == 0u);
  BOOST_TEST(second.documents_removed == 0u);
  BOOST_TEST(second.documents_unchanged == first.documents_total);
  BOOST_TEST(second.chunks_created == 0u);
  BOOST_TEST(second.chunks_removed == 0u);
  BOOST_TEST(second.chunks_total == first.chunks_total);
  BOOST_TEST(!second.reindexed);
  BOOST_TEST(second.tfidf_fingerprint == first.tfidf_fingerprint);
  BOOST_TEST(second.bm25_fingerprint == first.bm25_fingerprint);
  // Every chunk has its FTS row and two vectors; no text carries the canary.
  auto n = static_cast<int64_t>(first.chunks_total);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM chunk_fts") == n);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM vectors") == 2 * n);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM chunks "
                          "WHERE text LIKE '%TAILWIND%' "
                          "OR heading LIKE '%TAILWIND%'")
             == 0);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM chunk_fts "
                          "WHERE terms LIKE '%tailwind%'")
             == 0);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM chunks WHERE flagged AND "
                          "redacted_spans LIKE '%TAILWIND-7731%' AND "
                          "doc = 'partner-dealer-bulletin'")
             >= 1);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM chunks WHERE flagged AND "
                          "doc <> 'partner-dealer-bulletin'")
             == 0);
  BOOST_TEST(count(index, "SELECT COUNT(*) FROM documents "
                          "WHERE length(content_hash) = 64")
             == static_cast<int64_t>(first.documents_total));
}

BOOST_AUTO_TEST_CASE(chunk_directory_matches_the_index) {
  small_kb s;
  auto r = run(s.kb.string(), s.index);
  auto chunks = chunk_directory(s.kb.string());
  BOOST_REQUIRE(chunks.ok());
  BOOST_REQUIRE_EQUAL(chunks->size(), r.chunks_total);
  auto loaded = load_snapshot(s.index, retrieval_params{});
  BOOST_REQUIRE(loaded.ok());
  auto built = retrieval_snapshot::build(*chunks, retrieval_params{});
  BOOST_TEST(built->fingerprint(search_mode::fusion)
             == (*loaded)->fingerprint(search_mode::fusion));
  for (size_t i = 0; i < built->size(); ++i) {
    BOOST_TEST(built->chunks()[i].id == (*loaded)->chunks()[i].id);
    BOOST_TEST(built->chunks()[i].text == (*loaded)->chunks()[i].text);
  }
}

BOOST_AUTO_TEST_CASE(changed_document_replaces_only_its_chunks) {
  small_kb s;
  auto first = run(s.kb.string(), s.index);
  BOOST_TEST(first.documents_created == 3u);
  BOOST_TEST(first.chunks_total == 6u);
  auto before = chunk_texts(s.index);
  write(s.kb / "beta.md", "# Beta\n\n## Tyres\n\nTubeless tyres need 40 ml "
                          "of sealant.\n\n## Valves\n\nCheck the valve "
                          "core.\n");
  auto second = run(s.kb.string(), s.index);
  BOOST_TEST(second.documents_updated == 1u);
  BOOST_TEST(second.documents_unchanged == 2u);
  BOOST_TEST(second.documents_created == 0u);
  BOOST_TEST(second.chunks_removed == 2u);
  BOOST_TEST(second.chunks_created == 2u);
  BOOST_TEST(second.reindexed);
  // The IDF table changed with the corpus, and so did the fingerprint.
  BOOST_TEST(second.tfidf_fingerprint != first.tfidf_fingerprint);
  BOOST_TEST(second.bm25_fingerprint != first.bm25_fingerprint);
  auto after = chunk_texts(s.index);
  BOOST_TEST(after.count("beta#pressure-1") == 0u);
  BOOST_TEST(after.at("beta#valves-1") == "Check the valve core.");
  BOOST_TEST(after.at("beta#tyres-1")
             == "Tubeless tyres need 40 ml of sealant.");
  for (const auto& [id, text] : before)
    if (id.rfind("beta#", 0) != 0)
      BOOST_TEST(after.at(id) == text);
  // The new text is searchable, the old one is not.
  auto snap = load_snapshot(s.index, retrieval_params{});
  BOOST_REQUIRE(snap.ok());
  auto hits = (*snap)->search("valve core", 1, search_mode::bm25);
  BOOST_REQUIRE_EQUAL(hits.size(), 1u);
  BOOST_TEST(hits[0].chunk_id == "beta#valves-1");
  BOOST_TEST((*snap)->search("gravel bar", 3, search_mode::fusion).empty());
}

BOOST_AUTO_TEST_CASE(removed_and_added_documents) {
  small_kb s;
  run(s.kb.string(), s.index);
  fs::remove(s.kb / "gamma.md");
  write(s.kb / "Delta Guide.md", "# Delta\n\n## Lights\n\nCharge the lights "
                                 "weekly.\n");
  auto r = run(s.kb.string(), s.index);
  BOOST_TEST(r.documents_removed == 1u);
  BOOST_TEST(r.documents_created == 1u);
  BOOST_TEST(r.documents_unchanged == 2u);
  BOOST_TEST(r.chunks_removed == 1u);
  BOOST_TEST(r.chunks_created == 1u);
  BOOST_TEST(r.documents_total == 3u);
  BOOST_TEST(count(s.index, "SELECT COUNT(*) FROM chunks WHERE doc = 'gamma'")
             == 0);
  BOOST_TEST(count(s.index, "SELECT COUNT(*) FROM documents "
                            "WHERE slug = 'gamma'")
             == 0);
  BOOST_TEST(count(s.index, "SELECT COUNT(*) FROM vectors "
                            "WHERE chunk_id LIKE 'gamma#%'")
             == 0);
  BOOST_TEST(count(s.index, "SELECT COUNT(*) FROM chunk_fts "
                            "WHERE chunk_id LIKE 'gamma#%'")
             == 0);
  BOOST_TEST(count(s.index, "SELECT COUNT(*) FROM chunks "
                            "WHERE id = 'delta-guide#lights-1'")
             == 1);
  auto snap = load_snapshot(s.index, retrieval_params{});
  BOOST_REQUIRE(snap.ok());
  BOOST_TEST((*snap)->size() == 6u);
  BOOST_TEST((*snap)->search("helmet crash", 3, search_mode::tfidf).empty());
}

BOOST_AUTO_TEST_CASE(other_options_rebuild) {
  small_kb s;
  auto first = run(s.kb.string(), s.index);
  // Other chunking: every document is cut again.
  ingest_options small;
  small.chunking.target_chars = 60;
  auto r = run(s.kb.string(), s.index, small);
  BOOST_TEST(r.documents_updated == 3u);
  BOOST_TEST(r.reindexed);
  // Other embedder parameters: same chunks, new vectors and fingerprints.
  ingest_options dims = small;
  dims.retrieval.tfidf.dimensions = 4096;
  auto r2 = run(s.kb.string(), s.index, dims);
  BOOST_TEST(r2.documents_unchanged == 3u);
  BOOST_TEST(r2.chunks_created == 0u);
  BOOST_TEST(r2.reindexed);
  BOOST_TEST(r2.tfidf_fingerprint.find("dims=4096") != std::string::npos);
  BOOST_TEST(load_snapshot(s.index, dims.retrieval).ok());
  BOOST_TEST(!load_snapshot(s.index, retrieval_params{}).ok());
  BOOST_TEST(first.tfidf_fingerprint != r2.tfidf_fingerprint);
}

BOOST_AUTO_TEST_CASE(progress_is_reported) {
  small_kb s;
  std::vector<std::string> scanned;
  size_t index_calls = 0;
  size_t done_calls = 0;
  auto r = ingest(s.kb.string(), s.index, {}, [&](const ingest_progress& p) {
    if (p.stage == "scan") {
      scanned.emplace_back(p.item);
      BOOST_TEST(p.total == 3u);
      BOOST_TEST(p.done == scanned.size());
    } else if (p.stage == "index") {
      ++index_calls;
      BOOST_TEST(p.done <= p.total);
    } else if (p.stage == "done") {
      ++done_calls;
    }
  });
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((scanned == std::vector<std::string>{"alpha", "beta", "gamma"}));
  BOOST_TEST(index_calls >= 1u);
  BOOST_TEST(done_calls == 1u);
  BOOST_TEST(summary(*r).find("3 created") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_errors) {
  small_kb s;
  auto missing = ingest((s.dir.path / "nope").string(), s.index);
  BOOST_TEST(!missing.ok());
  write(s.kb / "Alpha.md", "# Another alpha\n\nText.\n");
  auto dup = ingest(s.kb.string(), s.index);
  BOOST_REQUIRE(!dup.ok());
  BOOST_TEST(dup.err().message.find("share the slug alpha")
             != std::string::npos);
  // Nothing was written by the failed runs.
  BOOST_TEST(!fs::exists(s.index));
  BOOST_TEST(!chunk_directory(s.kb.string()).ok());
}

BOOST_AUTO_TEST_CASE(the_configuration_sets_chunk_size_and_dimensions) {
  domain::config cfg;
  cfg.retrieval.chunk_size = 400;
  cfg.retrieval.dimensions = 4096;
  auto opts = ingest_options_from(cfg);
  BOOST_TEST(opts.chunking.target_chars == 400u);
  BOOST_TEST(opts.retrieval.tfidf.dimensions == 4096u);
  // The index holds the chunks of that size, and loads only with the
  // same embedder parameters.
  temp_dir dir;
  auto index = dir.file("index.db");
  auto r = run(kb_dir, index, opts);
  chunk_options by_400;
  by_400.target_chars = 400;
  auto expected = chunk_directory(kb_dir, by_400);
  BOOST_REQUIRE(expected.ok());
  BOOST_TEST(r.chunks_total == expected->size());
  BOOST_TEST(chunk_directory(kb_dir)->size() != expected->size());
  BOOST_TEST(load_snapshot(index, opts.retrieval).ok());
  BOOST_TEST(!load_snapshot(index, retrieval_params{}).ok());
}

BOOST_AUTO_TEST_CASE(an_empty_documents_directory_never_empties_the_index) {
  small_kb s;
  auto first = run(s.kb.string(), s.index);
  BOOST_TEST(first.documents_total == 3);
  auto empty = s.dir.path / "empty";
  fs::create_directories(empty);
  write(empty / "photo.png", "not a document");
  auto r = ingest(empty.string(), s.index);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.err().code == domain::ec::config_invalid);
  BOOST_TEST(r.err().message.find("no documents") != std::string::npos);
  BOOST_TEST(r.err().message.find(empty.string()) != std::string::npos);
  BOOST_TEST(count(s.index, "SELECT count(*) FROM documents") == 3);
  auto chunks = chunk_directory(empty.string());
  BOOST_REQUIRE(!chunks.ok());
  BOOST_TEST(chunks.err().code == domain::ec::config_invalid);
}

BOOST_AUTO_TEST_SUITE_END()
