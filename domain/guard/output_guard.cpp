// The output guard: checks text about to leave the server for the canary,
// protected texts, remote images and links, on normalised text.

#include "domain/guard/output_guard.hpp"

#include <algorithm>
#include <functional>
#include <initializer_list>

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
                        needle.end(),
                        [](char a, char b) { return ascii_lower(a) == b; });
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

// -- markup that makes a renderer fetch ---------------------------------------

bool is_ascii_letter(char ch) noexcept {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

bool is_tag_space(char ch) noexcept {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

bool one_of(std::string_view w, std::initializer_list<std::string_view> xs) {
  for (auto x : xs)
    if (w == x)
      return true;
  return false;
}

/// Elements that load or embed something when rendered, whatever their
/// attributes say (`<image>` is parsed as `<img>`; `<input>` fetches with
/// type=image; `<meta>` refreshes, `<base>` redirects relative URLs). Names
/// are lower case.
bool is_fetching_element(std::string_view name) {
  return one_of(name, {"applet",      "audio",  "base",     "bgsound", "embed",
                       "fencedframe", "frame",  "frameset", "iframe",  "image",
                       "img",         "input",  "link",     "meta",    "object",
                       "picture",     "portal", "script",   "source",  "style",
                       "svg",         "track",  "video"});
}

/// Attributes whose value is a URL a renderer (or a click) may fetch, on
/// any element. Names are lower case.
bool is_url_attribute(std::string_view name) {
  return one_of(name, {"action",     "archive",   "background", "cite",
                       "classid",    "codebase",  "data",       "dynsrc",
                       "formaction", "href",      "icon",       "imagesrcset",
                       "longdesc",   "lowsrc",    "manifest",   "ping",
                       "poster",     "profile",   "src",        "srcset",
                       "usemap",     "xlink:href"});
}

/// Whether a URL is absolute: it names a scheme ("https:", "https:host",
/// "data:", "javascript:") or another host ("//host", "\\host", "/\host").
/// Browsers skip leading spaces and control characters and ignore tabs
/// and line breaks anywhere in a URL, so this does too.
bool is_absolute_url(std::string_view url) {
  size_t i = 0;
  while (i < url.size() && static_cast<unsigned char>(url[i]) <= 0x20)
    ++i;
  size_t letters = 0;
  char first = 0;
  for (; i < url.size(); ++i) {
    char ch = url[i];
    if (ch == '\t' || ch == '\n' || ch == '\r')
      continue;
    bool slash = ch == '/' || ch == '\\';
    if (letters == 0) {
      if (!slash && !is_ascii_letter(ch))
        return false;
      first = ch;
      letters = 1;
      continue;
    }
    if (first == '/' || first == '\\')
      return slash; // a second slash: another host
    if (ch == ':')
      return true; // "scheme:"
    bool scheme_char = is_ascii_letter(ch) || (ch >= '0' && ch <= '9')
                       || ch == '+' || ch == '-' || ch == '.';
    if (!scheme_char)
      return false;
    ++letters;
  }
  return false;
}

/// Whether a `srcset` names an absolute URL in any of its candidates.
bool srcset_is_absolute(std::string_view value) {
  for (size_t i = 0; i <= value.size();) {
    auto comma = value.find(',', i);
    if (comma == std::string_view::npos)
      comma = value.size();
    if (is_absolute_url(value.substr(i, comma - i)))
      return true;
    i = comma + 1;
  }
  return false;
}

/// Whether an attribute of any element makes a renderer fetch: a URL
/// attribute with an absolute target, an event handler (script can fetch)
/// or a style that can (url(), image-set(), any function or CSS escape).
bool attribute_fetches(std::string_view name, std::string_view value) {
  if (name == "srcset" || name == "imagesrcset")
    return srcset_is_absolute(value);
  if (is_url_attribute(name))
    return is_absolute_url(value);
  if (name == "style")
    return value.find_first_of("(\\@") != std::string_view::npos;
  return name.size() > 2 && name[0] == 'o' && name[1] == 'n';
}

/// Reads the HTML start tag whose '<' is at `text[i]` the way a browser's
/// tokenizer does (name up to white space, '/' or '>'; attribute values
/// quoted across lines or unquoted) and tells whether it fetches. The scan
/// stops at an unquoted '<' before a letter: a Markdown renderer may start
/// a tag there where a browser sees an attribute, and the caller scans
/// every '<' as a tag of its own. `budget` is what the scans may still
/// read; `tag_fetches` takes what it reads from it.
bool tag_fetches(std::string_view text, size_t i, size_t& budget) {
  const size_t n = text.size();
  size_t j = i + 1;
  if (j >= n || !is_ascii_letter(text[j]))
    return false;
  auto new_tag = [&] {
    return text[j] == '<' && j + 1 < n && is_ascii_letter(text[j + 1]);
  };
  // A name ends at white space, '/' or '>', and after its first character
  // also at '=' or a new tag.
  auto read_name = [&](std::string& out) {
    while (j < n && !is_tag_space(text[j]) && text[j] != '/' && text[j] != '>'
           && (out.empty() || (text[j] != '=' && !new_tag()))) {
      if (out.size() < 32)
        out.push_back(ascii_lower(text[j]));
      ++j;
    }
  };
  std::string name;
  read_name(name);
  if (is_fetching_element(name))
    return true;
  std::string attr;
  while (j < n && !new_tag()) {
    while (j < n && (is_tag_space(text[j]) || text[j] == '/'))
      ++j;
    if (j >= n || text[j] == '>' || new_tag())
      break;
    attr.clear();
    read_name(attr);
    while (j < n && is_tag_space(text[j]))
      ++j;
    std::string_view value;
    if (j < n && text[j] == '=') {
      ++j;
      while (j < n && is_tag_space(text[j]))
        ++j;
      size_t begin = j;
      if (j < n && (text[j] == '"' || text[j] == '\'')) {
        auto close = text.find(text[j], j + 1);
        begin = j + 1;
        j = close == std::string_view::npos ? n : close;
        value = text.substr(begin, j - begin);
        if (j < n)
          ++j;
      } else {
        while (j < n && !is_tag_space(text[j]) && text[j] != '>'
               && !(j > begin && new_tag()))
          ++j;
        value = text.substr(begin, j - begin);
      }
    }
    if (attribute_fetches(attr, value))
      return true;
  }
  size_t read = j - i;
  budget = read < budget ? budget - read : 0;
  return false;
}

bool starts_with_ci(std::string_view text, size_t pos, std::string_view w) {
  if (text.size() - pos < w.size())
    return false;
  for (size_t k = 0; k < w.size(); ++k)
    if (ascii_lower(text[pos + k]) != w[k])
      return false;
  return true;
}

/// Whether markup in `text` (HTML character references already decoded)
/// makes a client that renders it fetch something, which can carry data
/// to another host in its URL:
/// - any Markdown image: "![" with a "]" after it, inline or by reference,
///   whatever the target, the alt text's length or its line breaks;
/// - an HTML element that loads or embeds (`is_fetching_element`), or any
///   element with an attribute that fetches (`attribute_fetches`);
/// - CSS: `url(` with an absolute target, `@import` followed by a space,
///   a quote or `url(`.
/// Each construct starts at a '!', '<', '(' or '@': their occurrences are
/// found with memchr, so a text with none of them costs four fast scans.
/// Tags may overlap (every '<' starts one), so their scans share a budget
/// linear in the text; a text that exhausts it (thousands of unclosed
/// tags) is refused rather than scanned quadratically.
bool fetches_when_rendered(std::string_view text) {
  constexpr auto npos = std::string_view::npos;
  const size_t n = text.size();
  // A later "![" has no ']' after it when the first one has none.
  if (auto i = text.find("!["); i != npos && text.find(']', i + 2) != npos)
    return true;
  size_t budget = 16 * n + 4096;
  for (auto i = text.find('<'); i != npos; i = text.find('<', i + 1))
    if (tag_fetches(text, i, budget) || budget == 0)
      return true;
  for (auto i = text.find('('); i != npos; i = text.find('(', i + 1)) {
    if (i < 3 || !starts_with_ci(text, i - 3, "url"))
      continue;
    size_t j = i + 1;
    while (j < n
           && (is_tag_space(text[j]) || text[j] == '"' || text[j] == '\''))
      ++j;
    if (is_absolute_url(text.substr(j)))
      return true;
  }
  for (auto i = text.find('@'); i != npos; i = text.find('@', i + 1)) {
    size_t j = i + 7; // after "@import"
    if (starts_with_ci(text, i + 1, "import") && j < n
        && (is_tag_space(text[j]) || text[j] == '"' || text[j] == '\''
            || starts_with_ci(text, j, "url(")))
      return true;
  }
  return false;
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
      bool echoed = std::any_of(
        echo_texts.begin(), echo_texts.end(),
        [&](const std::string& e) { return contains_phrase(e, norm); });
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
  // Every check reads the text as a browser shows it: HTML character
  // references ("TAILWIND&#45;7731", "https&colon;//") decoded. Only a
  // text with an '&' is copied.
  std::string decoded;
  if (text.find('&') != std::string_view::npos) {
    decoded = decode_html_references(text);
    text = decoded;
  }
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
    for_each_leak_shingle(s, words_,
                          [&](uint64_t x) { shared = shared || in_mine(x); });
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
  // 4. Markup a client would fetch something for when it renders the
  // text: images, embedding elements, URL attributes, CSS.
  if (fetches_when_rendered(text))
    return "remote_image";
  return {};
}

} // namespace candor::domain
