#include "domain/output_guard.hpp"

#include <algorithm>
#include <functional>
#include <initializer_list>

#include <re2/re2.h>

#include "domain/text.hpp"

namespace candor::domain {

namespace {

/// Below this many letters and digits the space-free canary check would
/// hit ordinary text, so only the word-boundary check runs.
constexpr size_t min_compact_canary = 6;

char ascii_lower(char ch) {
  return (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
}

std::string lower_ascii(std::string_view s) {
  std::string out{s};
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
  if (needle.empty())
    return false;
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(),
                        needle.end(), [](char a, char b) {
                          return ascii_lower(a) == b;
                        });
  return it != haystack.end();
}

/// Whether the normalized `phrase` occurs in the normalized `text` on word
/// boundaries.
bool contains_phrase(std::string_view text, std::string_view phrase) {
  if (phrase.empty())
    return false;
  for (size_t pos = text.find(phrase); pos != std::string_view::npos;
       pos = text.find(phrase, pos + 1)) {
    bool left = pos == 0 || text[pos - 1] == ' ';
    size_t end = pos + phrase.size();
    bool right = end == text.size() || text[end] == ' ';
    if (left && right)
      return true;
  }
  return false;
}

/// Whether `needle` (no spaces) occurs in `text` once the spaces of
/// `text` are removed: `without_spaces(text).find(needle) != npos`
/// without building that copy (this runs on every response).
bool contains_ignoring_spaces(std::string_view text, std::string_view needle) {
  if (needle.empty())
    return true;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != needle[0])
      continue;
    size_t j = 1;
    for (size_t t = i + 1; j < needle.size() && t < text.size(); ++t) {
      if (text[t] == ' ')
        continue;
      if (text[t] != needle[j])
        break;
      ++j;
    }
    if (j == needle.size())
      return true;
  }
  return false;
}

std::string without_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s)
    if (ch != ' ')
      out.push_back(ch);
  return out;
}

/// Words that carry no content: an attacker can drop, add or swap them
/// ("and" for "&") without changing what a leaked sentence says.
bool is_function_word(std::string_view w) noexcept {
  // By length, so that a word is compared with a few candidates at most.
  auto any = [w](std::initializer_list<std::string_view> xs) {
    for (auto x : xs)
      if (w == x)
        return true;
    return false;
  };
  switch (w.size()) {
    case 1: return w == "a";
    case 2:
      return any({"an", "as", "at", "be", "by", "in", "is", "it", "of", "on",
                  "or", "so", "to"});
    case 3: return any({"and", "are", "for", "the", "was"});
    case 4: return any({"from", "that", "then", "this", "with"});
    default: return false;
  }
}

/// Calls `fn(hash)` for each `k`-word shingle of `hashes` (one hash per
/// word): the words' hashes mixed in order, so that the same k words give
/// the same shingle wherever they occur.
template <class F>
void for_each_shingle(const std::vector<uint64_t>& hashes, size_t k, F fn) {
  for (size_t i = 0; i + k <= hashes.size(); ++i) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t j = i; j < i + k; ++j) {
      h ^= hashes[j] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdull;
    }
    fn(h ^ (h >> 33));
  }
}

/// Calls `fn(hash)` for each `k`-word shingle of a normalized text (single
/// spaces between words) and of its content words (function words
/// dropped), so that a copy with function words changed still shares
/// shingles with the original. Each word is hashed once.
template <class F>
void for_each_leak_shingle(std::string_view norm, size_t k, F fn) {
  std::vector<uint64_t> all;
  std::vector<uint64_t> content;
  all.reserve(norm.size() / 4 + 1);
  content.reserve(norm.size() / 4 + 1);
  std::hash<std::string_view> hash;
  size_t i = 0;
  while (i < norm.size()) {
    auto end = norm.find(' ', i);
    if (end == std::string_view::npos)
      end = norm.size();
    auto w = norm.substr(i, end - i);
    if (!w.empty()) {
      auto h = static_cast<uint64_t>(hash(w));
      all.push_back(h);
      if (!is_function_word(w))
        content.push_back(h);
    }
    i = end + 1;
  }
  for_each_shingle(all, k, fn);
  for_each_shingle(content, k, fn);
}

/// A Markdown image or an HTML <img> whose source is on another host: a
/// client that renders the answer fetches it, and its URL can carry data
/// out (the query string of an attacker's image).
const re2::RE2& remote_image_pattern() {
  static const re2::RE2 re{
    R"re((?i)!\[[^\]\n]{0,500}\]\(\s*<?\s*(?:[a-z][a-z0-9+.-]*:)?//)re"
    R"re(|<\s*img\b[^>]{0,500}?\bsrc\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//)re"};
  return re;
}

size_t word_count(std::string_view norm) {
  if (norm.empty())
    return 0;
  return static_cast<size_t>(std::count(norm.begin(), norm.end(), ' ')) + 1;
}

} // namespace

output_guard::output_guard(output_guard_config cfg)
  : words_(std::max<size_t>(cfg.shingle_words, 1)),
    canary_lower_(lower_ascii(cfg.canary)),
    canary_normalized_(normalize(cfg.canary)),
    canary_compact_(without_spaces(canary_normalized_)) {
  std::unordered_set<uint64_t> echoes;
  std::vector<std::string> echo_texts;
  for (const auto& e : cfg.allowed_echoes) {
    echo_texts.push_back(normalize(e));
    for_each_leak_shingle(echo_texts.back(), words_,
                          [&](uint64_t x) { echoes.insert(x); });
  }
  for (const auto& p : cfg.protected_texts) {
    auto norm = normalize(p);
    if (norm.empty())
      continue;
    if (word_count(norm) < words_) {
      bool echoed = std::any_of(echo_texts.begin(), echo_texts.end(),
                                [&](const std::string& e) {
                                  return contains_phrase(e, norm);
                                });
      if (!echoed)
        short_phrases_.push_back(std::move(norm));
      continue;
    }
    for_each_leak_shingle(norm, words_, [&](uint64_t x) {
      if (echoes.count(x) == 0)
        shingles_.insert(x);
    });
  }
  // The allowed echoes are the server's own fixed texts (refusals): their
  // verdict depends only on this configuration, so it is taken once here.
  for (const auto& e : cfg.allowed_echoes)
    fixed_verdicts_.emplace(e, check(e, {}));
}

std::string
output_guard::check(std::string_view text,
                    const std::vector<std::string>& redacted_spans) const {
  if (redacted_spans.empty() && !fixed_verdicts_.empty())
    if (auto it = fixed_verdicts_.find(text); it != fixed_verdicts_.end())
      return it->second;
  auto norm = normalize(text);
  // 1. The canary, raw, normalized, and with every space removed.
  if (!canary_lower_.empty() && contains_ci(text, canary_lower_))
    return "canary";
  if (!canary_normalized_.empty()) {
    if (contains_phrase(norm, canary_normalized_))
      return "canary";
    if (canary_compact_.size() >= min_compact_canary
        && contains_ignoring_spaces(norm, canary_compact_))
      return "canary";
  }
  // Shingles of the outgoing text, computed once for steps 2 and 3 (a
  // vector: answers are short, and this runs on every response). Step 2
  // searches it, so it is sorted only when there are spans to look for.
  std::vector<uint64_t> mine;
  for_each_leak_shingle(norm, words_, [&](uint64_t x) { mine.push_back(x); });
  if (!redacted_spans.empty())
    std::sort(mine.begin(), mine.end());
  auto in_mine = [&](uint64_t x) {
    return std::binary_search(mine.begin(), mine.end(), x);
  };
  // 2. Spans the sanitizer removed from passages.
  for (const auto& span : redacted_spans) {
    auto s = normalize(span);
    if (s.empty())
      continue;
    if (word_count(s) < words_) {
      if (contains_phrase(norm, s))
        return "redacted_span";
      continue;
    }
    bool shared = false;
    for_each_leak_shingle(s, words_, [&](uint64_t x) {
      shared = shared || in_mine(x);
    });
    if (shared)
      return "redacted_span";
  }
  // 3. System prompts and other protected texts.
  for (auto x : mine)
    if (shingles_.count(x) > 0)
      return "prompt_leak";
  for (const auto& phrase : short_phrases_)
    if (contains_phrase(norm, phrase))
      return "prompt_leak";
  // 4. Images that would be fetched from another host when rendered (the
  // pattern needs "![" or a '<': most answers have neither).
  bool maybe_image = text.find("![") != std::string_view::npos
                     || text.find('<') != std::string_view::npos;
  if (maybe_image && re2::RE2::PartialMatch(text, remote_image_pattern()))
    return "remote_image";
  return {};
}

} // namespace candor::domain
