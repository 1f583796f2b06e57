// Text analysis for retrieval (stemming, stopwords, tokens), sparse vector
// encoding and hashing, and the embedder base classes (tf-idf and BM25 are
// in tfidf_bm25.cpp).

#include "data/retrieval/embedder.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include <libstemmer.h>
#include <openssl/evp.h>

#include "domain/text.hpp"

namespace candor::data {

namespace {

// -- binary helpers -----------------------------------------------------------

void put_u32(std::string& out, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>((x >> (8 * i)) & 0xFF);
}

uint32_t get_u32(const char* p) noexcept {
  uint32_t x = 0;
  for (int i = 0; i < 4; ++i)
    x |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return x;
}

// -- stemming -----------------------------------------------------------------

/// One Snowball stemmer per thread (sb_stemmer is not thread-safe), with a
/// small cache of stems.
class thread_stemmer {
public:
  thread_stemmer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {
    // nop
  }
  thread_stemmer(const thread_stemmer&) = delete;
  thread_stemmer& operator=(const thread_stemmer&) = delete;
  ~thread_stemmer() {
    sb_stemmer_delete(stemmer_);
  }

  std::string stem(std::string_view word) {
    if (stemmer_ == nullptr)
      return std::string{word};
    if (auto i = cache_.find(std::string{word}); i != cache_.end())
      return i->second;
    auto p = sb_stemmer_stem(stemmer_,
                             reinterpret_cast<const sb_symbol*>(word.data()),
                             static_cast<int>(word.size()));
    std::string out
      = p == nullptr
          ? std::string{word}
          : std::string(reinterpret_cast<const char*>(p),
                        static_cast<size_t>(sb_stemmer_length(stemmer_)));
    if (cache_.size() >= max_cache)
      cache_.clear();
    cache_.emplace(word, out);
    return out;
  }

private:
  static constexpr size_t max_cache = 65536;
  sb_stemmer* stemmer_;
  std::unordered_map<std::string, std::string> cache_;
};

std::string stem(std::string_view word) {
  thread_local thread_stemmer stemmer;
  return stemmer.stem(word);
}

const std::unordered_set<std::string_view>& stopwords() {
  static const std::unordered_set<std::string_view> words{
    "a",       "about",   "above",    "after",      "again",   "against",
    "all",     "also",    "am",       "an",         "and",     "any",
    "are",     "as",      "at",       "be",         "because", "been",
    "before",  "being",   "below",    "between",    "both",    "but",
    "by",      "can",     "could",    "d",          "did",     "do",
    "does",    "doing",   "don",      "down",       "during",  "each",
    "etc",     "few",     "for",      "from",       "further", "had",
    "has",     "have",    "having",   "he",         "her",     "here",
    "hers",    "herself", "him",      "himself",    "his",     "how",
    "i",       "if",      "in",       "into",       "is",      "it",
    "its",     "itself",  "just",     "ll",         "m",       "many",
    "me",      "might",   "more",     "most",       "much",    "must",
    "my",      "myself",  "no",       "nor",        "not",     "now",
    "of",      "off",     "on",       "once",       "only",    "or",
    "other",   "our",     "ours",     "ourselves",  "out",     "over",
    "own",     "re",      "s",        "same",       "shall",   "she",
    "should",  "so",      "some",     "such",       "t",       "than",
    "that",    "the",     "their",    "theirs",     "them",    "themselves",
    "then",    "there",   "these",    "they",       "this",    "those",
    "through", "to",      "too",      "under",      "until",   "up",
    "us",      "ve",      "very",     "was",        "we",      "were",
    "what",    "when",    "where",    "which",      "while",   "who",
    "whom",    "why",     "will",     "with",       "would",   "you",
    "your",    "yours",   "yourself", "yourselves",
  };
  return words;
}

} // namespace

// -- vectors ------------------------------------------------------------------

double dot(const sparse_vector& a, const sparse_vector& b) noexcept {
  double sum = 0;
  size_t i = 0;
  size_t j = 0;
  while (i < a.index.size() && j < b.index.size()) {
    if (a.index[i] < b.index[j]) {
      ++i;
    } else if (b.index[j] < a.index[i]) {
      ++j;
    } else {
      sum += static_cast<double>(a.value[i]) * b.value[j];
      ++i;
      ++j;
    }
  }
  return sum;
}

std::string encode(const sparse_vector& v) {
  std::string out;
  out.reserve(4 + 8 * v.size());
  put_u32(out, static_cast<uint32_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    put_u32(out, v.index[i]);
    uint32_t bits = 0;
    std::memcpy(&bits, &v.value[i], sizeof(bits));
    put_u32(out, bits);
  }
  return out;
}

domain::outcome<sparse_vector> decode(std::string_view blob) {
  auto bad = [](const char* why) {
    return domain::make_error(domain::ec::storage_failed,
                              std::string{"malformed vector blob: "} + why);
  };
  if (blob.size() < 4)
    return bad("too short");
  auto n = get_u32(blob.data());
  if (blob.size() != 4 + 8 * static_cast<size_t>(n))
    return bad("size does not match its count");
  sparse_vector v;
  v.index.resize(n);
  v.value.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const char* p = blob.data() + 4 + 8 * static_cast<size_t>(i);
    v.index[i] = get_u32(p);
    auto bits = get_u32(p + 4);
    std::memcpy(&v.value[i], &bits, sizeof(bits));
    if (i > 0 && v.index[i] <= v.index[i - 1])
      return bad("indices not ascending");
  }
  return v;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 0xF];
  }
  return out;
}

std::string short_hash(std::string_view bytes) {
  return sha256_hex(bytes).substr(0, 16);
}

// -- analysis -----------------------------------------------------------------

bool is_stopword(std::string_view word) noexcept {
  return stopwords().count(word) != 0;
}

std::vector<std::string> analyze(std::string_view text,
                                 const analyzer_options& opts) {
  std::vector<std::string> out;
  auto norm = domain::normalize(text);
  std::string_view rest{norm};
  while (!rest.empty()) {
    auto sp = rest.find(' ');
    auto word = rest.substr(0, sp);
    rest
      = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    if (word.empty() || (opts.stopwords && is_stopword(word)))
      continue;
    bool has_alpha = std::any_of(word.begin(), word.end(),
                                 [](char c) { return c >= 'a' && c <= 'z'; });
    if (opts.stem && has_alpha)
      out.push_back(stem(word));
    else
      out.emplace_back(word);
  }
  return out;
}

// -- embedder -----------------------------------------------------------------

std::string embedder::signature() const {
  return name() + "(" + parameters() + ")";
}

std::string embedder::fingerprint() const {
  return signature() + "#" + short_hash(state());
}

void lexical_embedder::fit(const std::vector<std::string>& passages) {
  std::vector<std::vector<std::string>> docs;
  docs.reserve(passages.size());
  for (const auto& p : passages)
    docs.push_back(analyze(p, analysis()));
  fit_terms(docs);
}

sparse_vector lexical_embedder::embed_document(std::string_view text) const {
  return embed_document_terms(analyze(text, analysis()));
}

sparse_vector lexical_embedder::embed_query(std::string_view text) const {
  return embed_query_terms(analyze(text, analysis()));
}

} // namespace candor::data
