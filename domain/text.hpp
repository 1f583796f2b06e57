#pragma once

// Declares the canonical text form that input rules, the output guard and
// the sanitizer match against, and the text-cleaning functions.

#include <string>
#include <string_view>

namespace candor::domain {

/// Canonical form of untrusted text that every input rule, the output guard
/// and the sanitizer match against. The pipeline, per code point:
///
/// 1. UTF-8 is decoded; an ill-formed sequence is *dropped* (like a
///    zero-width character), so stray bytes cannot split a word to hide it.
/// 2. ICU's NFKC_Casefold (compatibility forms, full case folding), then
///    NFKD, then every combining mark (general category M) is removed:
///    "Crème" -> "creme", fullwidth and mathematical letters become ASCII,
///    "ﬁ" -> "fi". (Same table as NFKD + foldCase + NFKD, checked on every
///    code point below U+30000.)
/// 3. Default-ignorable code points (zero-width space/joiners, bidi
///    controls and isolates, soft hyphen, variation selectors, BOM, Hangul
///    fillers) are removed. Unicode tag characters U+E0020..U+E007E, which
///    invisibly mirror ASCII, are mapped back to that ASCII.
/// 4. A non-ASCII letter left over is mapped to ASCII when ICU's
///    confusable skeleton (UTS #39, `uspoof`) of that single code point is
///    ASCII letters/digits: Cyrillic 'а' 'е' 'о' 'і' 'ѕ', Greek 'ο' 'ν',
///    'ø', 'æ' -> "ae", ... The skeleton is only consulted for non-ASCII
///    code points, so ASCII '0', '1', 'm' are never rewritten.
/// 5. Every run of characters outside [a-z0-9] becomes one space; the
///    result is trimmed.
///
/// Steps 1-4 are context free, so they are precomputed once into a table
/// for the Basic Multilingual Plane (built with ICU on first use, about
/// 256 KiB); a call is then one pass over the bytes without ICU. Pure
/// ASCII input takes the same pass through a 128-entry table.
std::string normalize(std::string_view utf8);

/// Steps 1-4 of `normalize()` one code point at a time: calls
/// `f(raw, mapped)` for each code point of `utf8` in order, where `raw` is
/// its bytes and `mapped` its canonical form: empty (dropped: invisible,
/// a mark, ill-formed), " " (a separator) or a-z0-9 characters. `mapped`
/// is valid only during the call (outside the BMP it views a buffer that
/// the next code point reuses): copy it to keep it. For
/// passes that need to know what stood between two words (the input
/// rules' de-spacing, `domain/guard/deobfuscate.hpp`).
template <class F>
void for_each_mapped(std::string_view utf8, F&& f);

/// The non-template part of `for_each_mapped`: the canonical form of the
/// code point at `utf8[i]`; sets `len` to its byte length (>= 1).
std::string_view map_at(std::string_view utf8, size_t i, size_t& len,
                        std::string& scratch);

template <class F>
void for_each_mapped(std::string_view utf8, F&& f) {
  std::string scratch;
  for (size_t i = 0; i < utf8.size();) {
    size_t len = 1;
    auto mapped = map_at(utf8, i, len, scratch);
    f(utf8.substr(i, len), mapped);
    i += len;
  }
}

/// Escapes & < > " ' as XML entities, for text placed inside
/// `<document>` tags or attributes.
std::string escape_xml(std::string_view text);

/// `out += escape_xml(text)` without the temporary.
void append_xml_escaped(std::string& out, std::string_view text);

/// `text` with its HTML character references decoded once, as a browser
/// decodes them in text and attribute values: decimal and hexadecimal
/// (`&#58;`, `&#x3A;`, the ';' optional, C1 numbers mapped through
/// Windows-1252 and invalid numbers to U+FFFD) and the named references of
/// ASCII punctuation, dashes and hyphens, spaces, quotes and invisible
/// characters (`&colon;`, `&ndash;`, `&nbsp;`, `&rsquo;`, `&ZeroWidthSpace;`,
/// ...; case-sensitive, ';' required except for amp, lt, gt, quot and
/// nbsp). Other names and a lone '&' are kept as written.
std::string decode_html_references(std::string_view text);

/// Removes, in place, characters a response must not carry from a model:
/// C0 controls other than \t and \n (NUL, ESC, \r, ...), DEL, C1 controls
/// (U+0080..U+009F) and the bidirectional embeddings, overrides and
/// isolates (U+202A..U+202E, U+2066..U+2069). Returns how many characters
/// it removed; a string without any is left untouched (one scan).
size_t remove_control_characters(std::string& text);

/// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, no
/// code points above U+10FFFF, no truncated sequences).
bool valid_utf8(std::string_view text) noexcept;

/// ASCII white space: space, \t, \n, \r, \f, \v.
constexpr bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
         || c == '\v';
}

/// `s` without leading and trailing ASCII white space.
constexpr std::string_view trim_ascii(std::string_view s) noexcept {
  while (!s.empty() && is_ascii_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back()))
    s.remove_suffix(1);
  return s;
}

/// Counts UTF-8 code points (continuation bytes are not counted).
size_t count_code_points(std::string_view text) noexcept;

} // namespace candor::domain
