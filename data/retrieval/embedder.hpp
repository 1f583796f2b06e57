#pragma once

// Embedders: turn text into vectors for retrieval (tf-idf, BM25),
// with their saved state and fingerprints.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "domain/error.hpp"

/// Text to vectors for retrieval, behind one interface. Two lexical
/// embedders live here (hashed TF-IDF and BM25); a remote embedding
/// endpoint would be a third `embedder` whose vectors are dense (every
/// index present) and whose state is empty. Everything here is
/// deterministic, offline, and safe to use from many threads once fitted.
namespace candor::data {

// -- vectors ------------------------------------------------------------------

/// A sparse vector: indices strictly ascending, one value each. A dense
/// vector of n dimensions is the same thing with indices 0..n-1.
struct sparse_vector {
  std::vector<uint32_t> index;
  std::vector<float> value;

  size_t size() const noexcept {
    return index.size();
  }
};

/// Dot product of two sparse vectors (a cosine when both are L2-unit).
double dot(const sparse_vector& a, const sparse_vector& b) noexcept;

/// Little-endian binary form (u32 count, then count x (u32 index, f32
/// value)) for the index store, and back. `decode` fails on a malformed
/// blob (wrong size, indices not ascending).
std::string encode(const sparse_vector& v);
domain::outcome<sparse_vector> decode(std::string_view blob);

/// First 16 hex digits of the SHA-256 of `bytes` (OpenSSL EVP).
std::string short_hash(std::string_view bytes);

/// Full lower-case hex SHA-256 of `bytes` (OpenSSL EVP).
std::string sha256_hex(std::string_view bytes);

// -- analysis -----------------------------------------------------------------

/// How text becomes terms.
struct analyzer_options {
  bool stopwords = true; ///< drop English stopwords (a fixed list)
  bool stem = true;      ///< Snowball English stemming (libstemmer)

  friend bool operator==(const analyzer_options&, const analyzer_options&)
    = default;
};

/// Terms of `text`: `domain::normalize()`d words (lower-case ASCII a-z0-9),
/// stopwords dropped, then stemmed. The same text always gives the same
/// terms; thread-safe (each thread has its own stemmer).
std::vector<std::string> analyze(std::string_view text,
                                 const analyzer_options& opts = {});

/// True for a word of the stopword list (input already normalized).
bool is_stopword(std::string_view word) noexcept;

// -- parameters ---------------------------------------------------------------

struct tfidf_params {
  /// Features are hashed into this many dimensions.
  uint32_t dimensions = 1u << 18;
  /// Adds adjacent term pairs as features.
  bool bigrams = true;
  analyzer_options analysis;
};

struct bm25_params {
  double k1 = 1.2;
  double b = 0.75;
  analyzer_options analysis;
};

/// Everything that configures retrieval; the embedders' part of it must
/// match what the index was built with.
struct retrieval_params {
  tfidf_params tfidf;
  bm25_params bm25;
  /// Reciprocal-rank fusion constant.
  uint32_t rrf_k = 60;
  /// How deep each list goes before fusion.
  uint32_t fusion_depth = 50;
};

// -- embedder -----------------------------------------------------------------

/// One way of turning passages and questions into comparable vectors.
///
/// Life cycle: construct with parameters, then either `fit` on the corpus
/// (learns corpus statistics such as IDF) or `restore` a saved state; after
/// that, the const members are safe to call from many threads. Scores are
/// dot products of `embed_query` and `embed_document` vectors.
class embedder {
public:
  virtual ~embedder() = default;

  /// Short stable name: "tfidf", "bm25".
  virtual std::string name() const = 0;

  /// Canonical parameter text, e.g. "dims=262144,bigrams=1,...".
  virtual std::string parameters() const = 0;

  /// `name(parameters)#<hash of the learned state>`: two embedders with
  /// the same fingerprint produce the same vectors.
  std::string fingerprint() const;

  /// `name(parameters)`, the configured part of the fingerprint.
  std::string signature() const;

  /// Learns corpus statistics from the passages (one string each).
  virtual void fit(const std::vector<std::string>& passages) = 0;

  /// Number of passages seen by `fit` or recorded in the restored state.
  virtual size_t corpus_size() const noexcept = 0;

  /// Vector of a passage, using the fitted statistics.
  virtual sparse_vector embed_document(std::string_view text) const = 0;

  /// Vector of a question.
  virtual sparse_vector embed_query(std::string_view text) const = 0;

  /// Upper bound on vector indices (dimensions or vocabulary size).
  virtual uint32_t dimensions() const noexcept = 0;

  /// The learned state in a stable text form (stored in the index).
  virtual std::string state() const = 0;

  /// Replaces the learned state with a saved one; an error when the text
  /// is malformed or does not fit these parameters.
  virtual domain::error restore(std::string_view saved) = 0;
};

/// Embedders that work on analyzed terms: the index analyzes each passage
/// once and feeds the terms to both lexical embedders.
class lexical_embedder : public embedder {
public:
  virtual const analyzer_options& analysis() const noexcept = 0;

  /// `fit` on already analyzed passages.
  virtual void fit_terms(const std::vector<std::vector<std::string>>& docs) = 0;

  /// `embed_document` on already analyzed terms.
  virtual sparse_vector
  embed_document_terms(const std::vector<std::string>& terms) const = 0;

  /// `embed_query` on already analyzed terms.
  virtual sparse_vector
  embed_query_terms(const std::vector<std::string>& terms) const = 0;

  void fit(const std::vector<std::string>& passages) override;
  sparse_vector embed_document(std::string_view text) const override;
  sparse_vector embed_query(std::string_view text) const override;
};

// -- hashed TF-IDF ------------------------------------------------------------

/// Unigram and bigram features hashed into `dimensions` buckets, weighted
/// by (1 + ln tf) x idf with idf = ln((1 + N) / (1 + df)) + 1, L2-normalized.
/// Scores are cosines in [0, 1].
class tfidf_embedder final : public lexical_embedder {
public:
  explicit tfidf_embedder(tfidf_params params = {});

  std::string name() const override;
  std::string parameters() const override;
  size_t corpus_size() const noexcept override {
    return n_;
  }
  uint32_t dimensions() const noexcept override {
    return params_.dimensions;
  }
  std::string state() const override;
  domain::error restore(std::string_view saved) override;

  const analyzer_options& analysis() const noexcept override {
    return params_.analysis;
  }
  void fit_terms(const std::vector<std::vector<std::string>>& docs) override;
  sparse_vector
  embed_document_terms(const std::vector<std::string>& terms) const override;
  sparse_vector
  embed_query_terms(const std::vector<std::string>& terms) const override;

  /// The hashed feature indices of `terms` (unigrams, then bigrams), one
  /// per occurrence, unsorted.
  std::vector<uint32_t> features(const std::vector<std::string>& terms) const;

  /// IDF of a feature index (the unseen-feature value for df = 0).
  double idf(uint32_t feature) const noexcept;

private:
  sparse_vector weigh(const std::vector<std::string>& terms) const;

  tfidf_params params_;
  uint32_t n_ = 0;
  std::vector<uint32_t> df_;
};

// -- BM25 ---------------------------------------------------------------------

/// Okapi BM25 with the same formula as SQLite FTS5's bm25(): idf =
/// ln((N - df + 0.5) / (df + 0.5)), clamped to 1e-6 when not positive;
/// a passage weight is idf x tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)).
/// Indices are positions in the sorted vocabulary; a query vector holds 1
/// for each distinct known term, so the dot product is the BM25 score.
class bm25_embedder final : public lexical_embedder {
public:
  explicit bm25_embedder(bm25_params params = {});

  std::string name() const override;
  std::string parameters() const override;
  size_t corpus_size() const noexcept override {
    return n_;
  }
  uint32_t dimensions() const noexcept override {
    return static_cast<uint32_t>(vocabulary_.size());
  }
  std::string state() const override;
  domain::error restore(std::string_view saved) override;

  const analyzer_options& analysis() const noexcept override {
    return params_.analysis;
  }
  void fit_terms(const std::vector<std::vector<std::string>>& docs) override;
  sparse_vector
  embed_document_terms(const std::vector<std::string>& terms) const override;
  sparse_vector
  embed_query_terms(const std::vector<std::string>& terms) const override;

  double idf(uint32_t term) const noexcept;

  /// The feature of one analysed term, or nothing when the corpus never
  /// uses it (what `embed_query_terms({term})` finds, without building a
  /// vector).
  std::optional<uint32_t> term_id(const std::string& term) const;

  /// Average passage length in terms.
  double average_length() const noexcept;

private:
  void index_vocabulary();

  bm25_params params_;
  uint32_t n_ = 0;
  uint64_t total_terms_ = 0;
  std::vector<std::string> vocabulary_; ///< sorted
  std::vector<uint32_t> df_;            ///< parallel to vocabulary_
  std::unordered_map<std::string, uint32_t> ids_;
};

} // namespace candor::data
