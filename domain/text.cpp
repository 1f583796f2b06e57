// Canonical form of untrusted text: UTF-8 decoding, normalisation, case
// folding and confusable mapping through a per-code-point table.

#include "domain/text.hpp"

#include "domain/swar.hpp"

#include <algorithm>
#include <stdexcept>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <unordered_map>
#include <vector>

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uspoof.h>

namespace candor::domain {

namespace {

// -- UTF-8 decoding -----------------------------------------------------------

/// Decodes one code point at `s` (n > 0 bytes available). Returns it and
/// sets `len`; an ill-formed or truncated sequence returns -1 with len = 1.
/// Rejects overlongs, surrogates and code points above U+10FFFF (RFC 3629).
inline int32_t decode_utf8(const unsigned char* s, size_t n,
                           size_t& len) noexcept {
  len = 1;
  unsigned b0 = s[0];
  if (b0 < 0x80)
    return static_cast<int32_t>(b0);
  auto cont = [](unsigned b) { return (b & 0xC0) == 0x80; };
  if (b0 < 0xC2)
    return -1;
  if (b0 < 0xE0) {
    if (n < 2 || !cont(s[1]))
      return -1;
    len = 2;
    return static_cast<int32_t>(((b0 & 0x1F) << 6) | (s[1] & 0x3F));
  }
  if (b0 < 0xF0) {
    unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    if (n < 3 || s[1] < lo || s[1] > hi || !cont(s[2]))
      return -1;
    len = 3;
    return static_cast<int32_t>(((b0 & 0x0F) << 12) | ((s[1] & 0x3F) << 6)
                                | (s[2] & 0x3F));
  }
  if (b0 < 0xF5) {
    unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (n < 4 || s[1] < lo || s[1] > hi || !cont(s[2]) || !cont(s[3]))
      return -1;
    len = 4;
    return static_cast<int32_t>(((b0 & 0x07) << 18) | ((s[1] & 0x3F) << 12)
                                | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F));
  }
  return -1;
}

// -- per code point mapping (ICU, used to build the table) -------------------

/// ASCII byte -> its canonical character: a-z0-9 kept (A-Z lowered),
/// everything else a separator (' ').
constexpr std::array<char, 128> ascii_map = [] {
  std::array<char, 128> m{};
  for (int c = 0; c < 128; ++c) {
    if (c >= 'a' && c <= 'z')
      m[c] = static_cast<char>(c);
    else if (c >= '0' && c <= '9')
      m[c] = static_cast<char>(c);
    else if (c >= 'A' && c <= 'Z')
      m[c] = static_cast<char>(c - 'A' + 'a');
    else
      m[c] = ' ';
  }
  return m;
}();

bool is_mark(UChar32 c) {
  auto t = u_charType(c);
  return t == U_NON_SPACING_MARK || t == U_ENCLOSING_MARK
         || t == U_COMBINING_SPACING_MARK;
}

bool is_dropped(UChar32 c) {
  return is_mark(c)
         || u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT);
}

/// Appends `ch` to `out`, never two separators in a row.
void push(std::string& out, char ch) {
  if (ch == ' ' && !out.empty() && out.back() == ' ')
    return;
  out.push_back(ch);
}

const icu::Normalizer2& nfkc_casefold_instance();

/// ICU's NFKC_Casefold (compatibility composition, full case folding,
/// default-ignorable code points removed), then NFKD so that accents come
/// apart from their letters and can be dropped as marks ("É" -> "e" +
/// U+0301).
icu::UnicodeString fold_decompose(const icu::UnicodeString& s,
                                  const icu::Normalizer2& nfkd) {
  UErrorCode st = U_ZERO_ERROR;
  auto r = nfkc_casefold_instance().normalize(s, st);
  r = nfkd.normalize(r, st);
  if (U_FAILURE(st))
    return icu::UnicodeString{};
  return r;
}

/// The ASCII letters/digits a non-ASCII code point is confusable with, or
/// an empty string when its skeleton is not (only) ASCII letters/digits.
std::string skeleton_ascii(UChar32 d, const USpoofChecker* sc,
                           const icu::Normalizer2& nfkd) {
  UErrorCode st = U_ZERO_ERROR;
  icu::UnicodeString src{d};
  icu::UnicodeString dst;
  uspoof_getSkeletonUnicodeString(sc, 0, src, dst, &st);
  if (U_FAILURE(st))
    return {};
  auto folded = fold_decompose(dst, nfkd);
  std::string out;
  for (int32_t i = 0; i < folded.length();) {
    UChar32 x = folded.char32At(i);
    i += U16_LENGTH(x);
    if (is_dropped(x))
      continue;
    if (x >= 0x80 || ascii_map[x] == ' ')
      return {};
    out.push_back(ascii_map[x]);
  }
  if (out.size() > 3)
    return {};
  return out;
}

/// Whether the confusable skeleton is worth consulting for `d`: scripts
/// that look like Latin (not CJK ideographs, kana or Hangul syllables).
bool skeleton_candidate(UChar32 d) {
  return d < 0x3000 || (d >= 0xA640 && d < 0xAC00)
         || (d >= 0xFB00 && d <= 0xFFFF);
}

/// The canonical text (a-z, 0-9, ' ') of one code point; empty = dropped.
std::string map_code_point(UChar32 c, const icu::Normalizer2& nfkd,
                           const USpoofChecker* sc) {
  if (c < 0x80)
    return std::string(1, ascii_map[c]);
  if (c >= 0xE0020 && c <= 0xE007E) // tag characters mirror ASCII
    return std::string(1, ascii_map[c - 0xE0000]);
  if (is_dropped(c))
    return {};
  auto s = fold_decompose(icu::UnicodeString{c}, nfkd);
  std::string out;
  for (int32_t i = 0; i < s.length();) {
    UChar32 d = s.char32At(i);
    i += U16_LENGTH(d);
    if (is_dropped(d))
      continue;
    if (d < 0x80) {
      push(out, ascii_map[d]);
      continue;
    }
    if (sc != nullptr && skeleton_candidate(d)) {
      // Lower case first (Cyrillic 'а' -> "a"), then the upper-case form,
      // whose skeleton is often the only Latin one (Cyrillic 'к' -> 'К'
      // -> "k").
      auto sk = skeleton_ascii(d, sc, nfkd);
      if (sk.empty() && u_toupper(d) != d)
        sk = skeleton_ascii(u_toupper(d), sc, nfkd);
      if (!sk.empty()) {
        for (auto ch : sk)
          push(out, ch);
        continue;
      }
    }
    push(out, ' ');
  }
  return out;
}

const icu::Normalizer2& nfkd_instance() {
  static const icu::Normalizer2* nfkd = [] {
    UErrorCode st = U_ZERO_ERROR;
    auto* n = icu::Normalizer2::getNFKDInstance(st);
    if (U_FAILURE(st) || n == nullptr) {
      // ICU's data ships with the library: without it nothing can be
      // checked, and the process ends with this text (the runtime prints
      // it).
      throw std::runtime_error(std::string{"candor: ICU NFKD data "
                                           "unavailable: "}
                               + u_errorName(st));
    }
    return n;
  }();
  return *nfkd;
}

const icu::Normalizer2& nfkc_casefold_instance() {
  static const icu::Normalizer2* n = [] {
    UErrorCode st = U_ZERO_ERROR;
    auto* x = icu::Normalizer2::getNFKCCasefoldInstance(st);
    if (U_FAILURE(st) || x == nullptr)
      throw std::runtime_error(std::string{"candor: ICU NFKC_Casefold data "
                                           "unavailable: "}
                               + u_errorName(st));
    return x;
  }();
  return *n;
}

// -- the precomputed table ----------------------------------------------------

/// Canonical text of every BMP code point: entry = offset << 8 | length
/// into `pool` (length 0 = dropped).
struct bmp_table {
  std::vector<uint32_t> entries;
  std::string pool;

  bmp_table() : entries(0x10000, 0) {
    const auto& nfkd = nfkd_instance();
    UErrorCode st = U_ZERO_ERROR;
    USpoofChecker* sc = uspoof_open(&st);
    if (U_FAILURE(st)) {
      throw std::runtime_error(std::string{"candor: ICU spoof checker "
                                           "unavailable: "}
                               + u_errorName(st));
    }
    std::unordered_map<std::string, uint32_t> seen;
    for (UChar32 c = 0; c < 0x10000; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF)
        continue; // surrogates never come out of the decoder
      auto s = map_code_point(c, nfkd, sc);
      if (s.empty())
        continue;
      if (s.size() > 0xFF)
        s.resize(0xFF);
      auto [it, added] = seen.emplace(s, static_cast<uint32_t>(pool.size()));
      if (added)
        pool += s;
      entries[c] = (it->second << 8) | static_cast<uint32_t>(s.size());
    }
    uspoof_close(sc);
  }
};

const bmp_table& table() {
  static const bmp_table t;
  return t;
}

/// Supplementary planes, mapped on the fly (rare in practice): tag
/// characters, mathematical and enclosed alphanumerics via NFKD, dropped
/// ignorables and marks; anything else separates words.
std::string map_supplementary(UChar32 c) {
  bool decomposes = (c >= 0x1D400 && c <= 0x1D7FF)
                    || (c >= 0x1F100 && c <= 0x1F1FF)
                    || (c >= 0x1FBF0 && c <= 0x1FBF9);
  if (decomposes || (c >= 0xE0020 && c <= 0xE007E))
    return map_code_point(c, nfkd_instance(), nullptr);
  if (is_dropped(c))
    return {};
  return " ";
}

} // namespace

std::string normalize(std::string_view utf8) {
  const auto& t = table();
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  // Written through a pointer into a buffer that always has room for what
  // the rest of the input can produce. Invariant: w + pending_space + (n -
  // i) <= out.size() - 1. An ASCII (or ill-formed) byte raises w +
  // pending_space by at most one as i moves by one (a letter after a
  // separator writes two bytes, but the separator wrote none), so `n + 1`
  // bytes hold an ASCII text; a code point that maps to k bytes first asks
  // for room for them (`reserve_for`).
  std::string out(n + 1, '\0');
  char* base = out.data();
  size_t w = 0;
  bool pending_space = false;
  auto emit = [&](char ch) {
    if (ch == ' ') {
      pending_space = w != 0;
      return;
    }
    if (pending_space) {
      base[w++] = ' ';
      pending_space = false;
    }
    base[w++] = ch;
  };
  // Room for `k` bytes of one code point (and a space before them) plus
  // one byte per input byte after it.
  auto reserve_for = [&](size_t k, size_t rest) {
    auto need = w + k + 1 + rest + 1;
    if (need > out.size()) {
      out.resize(std::max(need, 2 * out.size()));
      base = out.data();
    }
  };
  size_t i = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      emit(ascii_map[s[i]]);
      ++i;
      continue;
    }
    size_t len = 1;
    int32_t c = decode_utf8(s + i, n - i, len);
    i += len;
    if (c < 0)
      continue; // ill-formed: dropped
    if (c < 0x10000) {
      uint32_t e = t.entries[static_cast<size_t>(c)];
      const char* p = t.pool.data() + (e >> 8);
      reserve_for(e & 0xFF, n - i);
      for (uint32_t k = 0; k < (e & 0xFF); ++k)
        emit(p[k]);
    } else {
      auto mapped = map_supplementary(c);
      reserve_for(mapped.size(), n - i);
      for (auto ch : mapped)
        emit(ch);
    }
  }
  out.resize(w);
  return out;
}

std::string_view map_at(std::string_view utf8, size_t i, size_t& len,
                        std::string& scratch) {
  static constexpr std::string_view none{};
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  len = 1;
  if (s[i] < 0x80)
    return {&ascii_map[s[i]], 1};
  int32_t c = decode_utf8(s + i, utf8.size() - i, len);
  if (c < 0)
    return none;
  if (c < 0x10000) {
    const auto& t = table();
    uint32_t e = t.entries[static_cast<size_t>(c)];
    return {t.pool.data() + (e >> 8), e & 0xFF};
  }
  scratch = map_supplementary(c);
  return scratch;
}

namespace {

/// The entity for each byte `escape_xml` replaces, nullptr for the rest.
constexpr std::array<const char*, 256> xml_entities = [] {
  std::array<const char*, 256> t{};
  t[static_cast<unsigned char>('&')] = "&amp;";
  t[static_cast<unsigned char>('<')] = "&lt;";
  t[static_cast<unsigned char>('>')] = "&gt;";
  t[static_cast<unsigned char>('"')] = "&quot;";
  t[static_cast<unsigned char>('\'')] = "&apos;";
  return t;
}();

/// Whether one of the 8 bytes of `w` is one `escape_xml` replaces.
bool word_needs_xml_escape(uint64_t w) noexcept {
  return (swar::has_byte(w, '&') | swar::has_byte(w, '<')
          | swar::has_byte(w, '>') | swar::has_byte(w, '"')
          | swar::has_byte(w, '\''))
         != 0;
}

} // namespace

void append_xml_escaped(std::string& out, std::string_view text) {
  // Runs without a special byte (nearly all of a passage) are appended
  // whole; they are skipped 8 bytes at a time.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.size() - i >= 8) {
      uint64_t w;
      std::memcpy(&w, text.data() + i, sizeof w);
      if (!word_needs_xml_escape(w)) {
        i += 7;
        continue;
      }
    }
    const char* entity = xml_entities[static_cast<unsigned char>(text[i])];
    if (entity == nullptr)
      continue;
    out.append(text.data() + run, i - run);
    out.append(entity);
    run = i + 1;
  }
  out.append(text.data() + run, text.size() - run);
}

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  append_xml_escaped(out, text);
  return out;
}

bool valid_utf8(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    size_t len = 1;
    if (decode_utf8(s + i, n - i, len) < 0)
      return false;
    i += len;
  }
  return true;
}

size_t count_code_points(std::string_view text) noexcept {
  size_t n = 0;
  for (char ch : text)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80)
      ++n;
  return n;
}

} // namespace candor::domain
