// The two lexical embedders of data/retrieval/embedder.hpp: hashed TF-IDF
// and BM25, with their parameter text and the saved form of their state.

#include "data/retrieval/embedder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace candor::data {

namespace {

// -- hashing ------------------------------------------------------------------

uint64_t fnv1a(std::string_view s) noexcept {
  uint64_t h = 14695981039346656037ull;
  for (auto c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

/// MurmurHash3's 64-bit finalizer: spreads FNV's weak low bits.
uint64_t mix(uint64_t h) noexcept {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

std::string format_double(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x);
  return std::string(buf, res.ptr);
}

std::string analysis_parameters(const analyzer_options& a) {
  return std::string{"stopwords="} + (a.stopwords ? "1" : "0")
         + ",stem=" + (a.stem ? "english" : "none");
}

/// Splits saved state text into lines; the first must be `header`.
bool state_lines(std::string_view saved, std::string_view header,
                 std::vector<std::string_view>& lines) {
  while (!saved.empty()) {
    auto nl = saved.find('\n');
    lines.push_back(saved.substr(0, nl));
    if (nl == std::string_view::npos)
      break;
    saved.remove_prefix(nl + 1);
  }
  return !lines.empty() && lines.front() == header;
}

/// Parses "<key> <unsigned>".
template <class T>
bool parse_pair(std::string_view line, std::string_view& key, T& value) {
  auto sp = line.rfind(' ');
  if (sp == std::string_view::npos || sp == 0)
    return false;
  key = line.substr(0, sp);
  auto num = line.substr(sp + 1);
  auto res = std::from_chars(num.data(), num.data() + num.size(), value);
  return res.ec == std::errc{} && res.ptr == num.data() + num.size();
}

domain::error bad_state(const std::string& who, std::string_view why) {
  return domain::make_error(domain::ec::storage_failed,
                            who + " state: " + std::string{why});
}

} // namespace

// -- hashed TF-IDF ------------------------------------------------------------

tfidf_embedder::tfidf_embedder(tfidf_params params)
    : params_(std::move(params)) {
  if (params_.dimensions == 0)
    params_.dimensions = 1;
  df_.assign(params_.dimensions, 0);
}

std::string tfidf_embedder::name() const {
  return "tfidf";
}

std::string tfidf_embedder::parameters() const {
  return "dims=" + std::to_string(params_.dimensions)
         + ",bigrams=" + (params_.bigrams ? "1" : "0") + ","
         + analysis_parameters(params_.analysis)
         + ",tf=log,idf=smooth,norm=l2,hash=fnv1a-fmix64";
}

std::vector<uint32_t>
tfidf_embedder::features(const std::vector<std::string>& terms) const {
  std::vector<uint32_t> out;
  out.reserve(params_.bigrams ? 2 * terms.size() : terms.size());
  std::vector<uint64_t> hashes;
  hashes.reserve(terms.size());
  for (const auto& t : terms) {
    auto h = fnv1a(t);
    hashes.push_back(h);
    out.push_back(static_cast<uint32_t>(mix(h) % params_.dimensions));
  }
  if (params_.bigrams)
    for (size_t i = 1; i < hashes.size(); ++i) {
      auto h = mix(hashes[i - 1] ^ (hashes[i] * 0x9E3779B97F4A7C15ull)
                   ^ 0x62696772616d3273ull);
      out.push_back(static_cast<uint32_t>(h % params_.dimensions));
    }
  return out;
}

double tfidf_embedder::idf(uint32_t feature) const noexcept {
  auto df = feature < df_.size() ? df_[feature] : 0u;
  return std::log((1.0 + n_) / (1.0 + df)) + 1.0;
}

void tfidf_embedder::fit_terms(
  const std::vector<std::vector<std::string>>& docs) {
  df_.assign(params_.dimensions, 0);
  n_ = static_cast<uint32_t>(docs.size());
  for (const auto& terms : docs) {
    auto fs = features(terms);
    std::sort(fs.begin(), fs.end());
    fs.erase(std::unique(fs.begin(), fs.end()), fs.end());
    for (auto f : fs)
      ++df_[f];
  }
}

sparse_vector
tfidf_embedder::weigh(const std::vector<std::string>& terms) const {
  auto fs = features(terms);
  std::sort(fs.begin(), fs.end());
  sparse_vector v;
  double norm = 0;
  for (size_t i = 0; i < fs.size();) {
    auto j = i;
    while (j < fs.size() && fs[j] == fs[i])
      ++j;
    auto w = (1.0 + std::log(static_cast<double>(j - i))) * idf(fs[i]);
    v.index.push_back(fs[i]);
    v.value.push_back(static_cast<float>(w));
    norm += w * w;
    i = j;
  }
  if (norm > 0) {
    auto inv = 1.0 / std::sqrt(norm);
    for (auto& x : v.value)
      x = static_cast<float>(x * inv);
  }
  return v;
}

sparse_vector tfidf_embedder::embed_document_terms(
  const std::vector<std::string>& terms) const {
  return weigh(terms);
}

sparse_vector
tfidf_embedder::embed_query_terms(const std::vector<std::string>& terms) const {
  return weigh(terms);
}

std::string tfidf_embedder::state() const {
  std::string out = "tfidf-state v1\nN " + std::to_string(n_) + "\n";
  for (uint32_t i = 0; i < df_.size(); ++i)
    if (df_[i] != 0) {
      out += std::to_string(i);
      out += ' ';
      out += std::to_string(df_[i]);
      out += '\n';
    }
  return out;
}

domain::error tfidf_embedder::restore(std::string_view saved) {
  std::vector<std::string_view> lines;
  if (!state_lines(saved, "tfidf-state v1", lines) || lines.size() < 2)
    return bad_state("tfidf", "missing header");
  std::string_view key;
  uint32_t n = 0;
  if (!parse_pair(lines[1], key, n) || key != "N")
    return bad_state("tfidf", "missing N");
  std::vector<uint32_t> df(params_.dimensions, 0);
  for (size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].empty())
      continue;
    uint32_t count = 0;
    uint32_t feature = 0;
    if (!parse_pair(lines[i], key, count)
        || std::from_chars(key.data(), key.data() + key.size(), feature).ptr
             != key.data() + key.size())
      return bad_state("tfidf", "malformed line");
    if (feature >= params_.dimensions)
      return bad_state("tfidf",
                       "feature " + std::to_string(feature) + " outside "
                         + std::to_string(params_.dimensions) + " dimensions");
    if (count > n)
      return bad_state("tfidf", "document frequency above N");
    df[feature] = count;
  }
  n_ = n;
  df_ = std::move(df);
  return {};
}

// -- BM25 ---------------------------------------------------------------------

bm25_embedder::bm25_embedder(bm25_params params) : params_(std::move(params)) {
  // nop
}

std::string bm25_embedder::name() const {
  return "bm25";
}

std::string bm25_embedder::parameters() const {
  return "k1=" + format_double(params_.k1) + ",b=" + format_double(params_.b)
         + "," + analysis_parameters(params_.analysis) + ",idf=fts5";
}

double bm25_embedder::idf(uint32_t term) const noexcept {
  auto df = term < df_.size() ? static_cast<double>(df_[term]) : 0.0;
  auto x = std::log((n_ - df + 0.5) / (df + 0.5));
  return x <= 0 ? 1e-6 : x;
}

double bm25_embedder::average_length() const noexcept {
  return n_ == 0 ? 0.0 : static_cast<double>(total_terms_) / n_;
}

void bm25_embedder::index_vocabulary() {
  ids_.clear();
  ids_.reserve(vocabulary_.size());
  for (uint32_t i = 0; i < vocabulary_.size(); ++i)
    ids_.emplace(vocabulary_[i], i);
}

void bm25_embedder::fit_terms(
  const std::vector<std::vector<std::string>>& docs) {
  std::unordered_map<std::string, uint32_t> df;
  n_ = static_cast<uint32_t>(docs.size());
  total_terms_ = 0;
  std::vector<std::string_view> distinct;
  for (const auto& terms : docs) {
    total_terms_ += terms.size();
    distinct.assign(terms.begin(), terms.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()),
                   distinct.end());
    for (auto t : distinct)
      ++df[std::string{t}];
  }
  vocabulary_.clear();
  vocabulary_.reserve(df.size());
  for (const auto& kv : df)
    vocabulary_.push_back(kv.first);
  std::sort(vocabulary_.begin(), vocabulary_.end());
  df_.clear();
  df_.reserve(vocabulary_.size());
  for (const auto& t : vocabulary_)
    df_.push_back(df[t]);
  index_vocabulary();
}

sparse_vector bm25_embedder::embed_document_terms(
  const std::vector<std::string>& terms) const {
  std::vector<uint32_t> ids;
  ids.reserve(terms.size());
  for (const auto& t : terms)
    if (auto i = ids_.find(t); i != ids_.end())
      ids.push_back(i->second);
  std::sort(ids.begin(), ids.end());
  sparse_vector v;
  auto avgdl = average_length();
  auto dl = static_cast<double>(terms.size());
  auto norm = avgdl > 0 ? 1.0 - params_.b + params_.b * dl / avgdl : 1.0;
  for (size_t i = 0; i < ids.size();) {
    auto j = i;
    while (j < ids.size() && ids[j] == ids[i])
      ++j;
    auto tf = static_cast<double>(j - i);
    auto w = idf(ids[i]) * tf * (params_.k1 + 1) / (tf + params_.k1 * norm);
    v.index.push_back(ids[i]);
    v.value.push_back(static_cast<float>(w));
    i = j;
  }
  return v;
}

sparse_vector
bm25_embedder::embed_query_terms(const std::vector<std::string>& terms) const {
  sparse_vector v;
  for (const auto& t : terms)
    if (auto i = ids_.find(t); i != ids_.end())
      v.index.push_back(i->second);
  std::sort(v.index.begin(), v.index.end());
  v.index.erase(std::unique(v.index.begin(), v.index.end()), v.index.end());
  v.value.assign(v.index.size(), 1.0f);
  return v;
}

std::optional<uint32_t> bm25_embedder::term_id(const std::string& term) const {
  if (auto i = ids_.find(term); i != ids_.end())
    return i->second;
  return std::nullopt;
}

std::string bm25_embedder::state() const {
  std::string out = "bm25-state v1\nN " + std::to_string(n_) + "\nterms "
                    + std::to_string(total_terms_) + "\n";
  for (size_t i = 0; i < vocabulary_.size(); ++i) {
    out += vocabulary_[i];
    out += ' ';
    out += std::to_string(df_[i]);
    out += '\n';
  }
  return out;
}

domain::error bm25_embedder::restore(std::string_view saved) {
  std::vector<std::string_view> lines;
  if (!state_lines(saved, "bm25-state v1", lines) || lines.size() < 3)
    return bad_state("bm25", "missing header");
  std::string_view key;
  uint32_t n = 0;
  uint64_t total = 0;
  if (!parse_pair(lines[1], key, n) || key != "N")
    return bad_state("bm25", "missing N");
  if (!parse_pair(lines[2], key, total) || key != "terms")
    return bad_state("bm25", "missing term count");
  std::vector<std::string> vocabulary;
  std::vector<uint32_t> df;
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty())
      continue;
    uint32_t count = 0;
    if (!parse_pair(lines[i], key, count) || count > n)
      return bad_state("bm25", "malformed line");
    if (!vocabulary.empty() && !(vocabulary.back() < key))
      return bad_state("bm25", "vocabulary not sorted");
    vocabulary.emplace_back(key);
    df.push_back(count);
  }
  n_ = n;
  total_terms_ = total;
  vocabulary_ = std::move(vocabulary);
  df_ = std::move(df);
  index_vocabulary();
  return {};
}

} // namespace candor::data
