// Cleaning model-written text: decoding HTML character references and
// removing control and bidirectional-override characters.

#include "domain/text.hpp"

#include "domain/swar.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

/// Cleaning model-written text before it is judged and sent: HTML
/// character references decoded for the output guard's checks, control and
/// bidirectional-override characters removed (declared in text.hpp).
namespace candor::domain {

// -- HTML character references ------------------------------------------------

namespace {

/// A named character reference and the code point it stands for.
struct named_reference {
  std::string_view name;
  char32_t code_point;
};

/// The named references `decode_html_references` knows, sorted by name
/// (byte order; names are case-sensitive). Those that spell ASCII
/// punctuation, dashes, spaces, quotes and invisible characters: the ones
/// that can hide a canary or a URL from a plain comparison.
constexpr named_reference named_references[] = {
  {"AMP", U'&'},
  {"DiacriticalGrave", U'`'},
  {"GT", U'>'},
  {"Hat", U'^'},
  {"LT", U'<'},
  {"MediumSpace", 0x205F},
  {"NegativeMediumSpace", 0x200B},
  {"NegativeThickSpace", 0x200B},
  {"NegativeThinSpace", 0x200B},
  {"NegativeVeryThinSpace", 0x200B},
  {"NewLine", U'\n'},
  {"NoBreak", 0x2060},
  {"NonBreakingSpace", 0xA0},
  {"QUOT", U'"'},
  {"Tab", U'\t'},
  {"ThickSpace", 0x205F},
  {"ThinSpace", 0x2009},
  {"UnderBar", U'_'},
  {"VerticalLine", U'|'},
  {"VeryThinSpace", 0x200A},
  {"ZeroWidthSpace", 0x200B},
  {"amp", U'&'},
  {"apos", U'\''},
  {"ast", U'*'},
  {"bdquo", 0x201E},
  {"bsol", U'\\'},
  {"bull", 0x2022},
  {"centerdot", 0xB7},
  {"colon", U':'},
  {"comma", U','},
  {"commat", U'@'},
  {"dash", 0x2010},
  {"dollar", U'$'},
  {"emsp", 0x2003},
  {"emsp13", 0x2004},
  {"emsp14", 0x2005},
  {"ensp", 0x2002},
  {"equals", U'='},
  {"excl", U'!'},
  {"frasl", 0x2044},
  {"grave", U'`'},
  {"gt", U'>'},
  {"hairsp", 0x200A},
  {"hellip", 0x2026},
  {"horbar", 0x2015},
  {"hybull", 0x2043},
  {"hyphen", 0x2010},
  {"laquo", 0xAB},
  {"lbrace", U'{'},
  {"lbrack", U'['},
  {"lcub", U'{'},
  {"ldquo", 0x201C},
  {"ldquor", 0x201E},
  {"lowbar", U'_'},
  {"lpar", U'('},
  {"lrm", 0x200E},
  {"lsaquo", 0x2039},
  {"lsqb", U'['},
  {"lsquo", 0x2018},
  {"lsquor", 0x201A},
  {"lt", U'<'},
  {"mdash", 0x2014},
  {"midast", U'*'},
  {"middot", 0xB7},
  {"minus", 0x2212},
  {"nbsp", 0xA0},
  {"ndash", 0x2013},
  {"num", U'#'},
  {"numsp", 0x2007},
  {"percnt", U'%'},
  {"period", U'.'},
  {"plus", U'+'},
  {"prime", 0x2032},
  {"puncsp", 0x2008},
  {"quest", U'?'},
  {"quot", U'"'},
  {"raquo", 0xBB},
  {"rbrace", U'}'},
  {"rbrack", U']'},
  {"rcub", U'}'},
  {"rdquo", 0x201D},
  {"rdquor", 0x201D},
  {"rlm", 0x200F},
  {"rpar", U')'},
  {"rsaquo", 0x203A},
  {"rsqb", U']'},
  {"rsquo", 0x2019},
  {"rsquor", 0x2019},
  {"sbquo", 0x201A},
  {"semi", U';'},
  {"shy", 0xAD},
  {"sol", U'/'},
  {"thinsp", 0x2009},
  {"verbar", U'|'},
  {"vert", U'|'},
  {"zwj", 0x200D},
  {"zwnj", 0x200C},
};

constexpr bool sorted_by_name() {
  for (size_t i = 1; i < std::size(named_references); ++i)
    if (!(named_references[i - 1].name < named_references[i].name))
      return false;
  return true;
}
static_assert(sorted_by_name(), "named_references must stay sorted");

/// Longest name in `named_references`.
constexpr size_t max_reference_name = 21;

/// Names a browser also decodes without the ';' (legacy references).
bool decodes_without_semicolon(std::string_view name) noexcept {
  for (std::string_view x :
       {"AMP", "GT", "LT", "QUOT", "amp", "gt", "lt", "nbsp", "quot"})
    if (name == x)
      return true;
  return false;
}

/// What a browser shows for `&#128;`..`&#159;` (HTML's numeric reference
/// table: Windows-1252); 0 where it keeps the C1 control.
constexpr char32_t windows_1252_c1[32]
  = {0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
     0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
     0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
     0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

int digit_value(char ch, bool hex) noexcept {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (hex && ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (hex && ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/// Decodes the numeric reference whose '&' is at `text[i]`; on success
/// appends the character and returns the length of the reference, else 0.
size_t decode_numeric(std::string_view text, size_t i, std::string& out) {
  size_t j = i + 2; // after "&#"
  bool hex = j < text.size() && (text[j] == 'x' || text[j] == 'X');
  if (hex)
    ++j;
  size_t first = j;
  uint32_t value = 0;
  for (; j < text.size(); ++j) {
    int d = digit_value(text[j], hex);
    if (d < 0)
      break;
    // Saturates past the last code point: any larger number is invalid.
    value = std::min<uint32_t>(
      value * (hex ? 16 : 10) + static_cast<uint32_t>(d), 0x110000);
  }
  if (j == first)
    return 0;
  if (j < text.size() && text[j] == ';')
    ++j;
  char32_t c = value;
  if (c >= 0x80 && c <= 0x9F && windows_1252_c1[c - 0x80] != 0)
    c = windows_1252_c1[c - 0x80];
  else if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
    c = 0xFFFD;
  append_utf8(out, c);
  return j - i;
}

bool is_ascii_alnum(char ch) noexcept {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
         || (ch >= '0' && ch <= '9');
}

/// Decodes the named reference whose '&' is at `text[i]`; on success
/// appends the character and returns the length of the reference, else 0.
size_t decode_named(std::string_view text, size_t i, std::string& out) {
  size_t j = i + 1;
  while (j < text.size() && j - i - 1 <= max_reference_name
         && is_ascii_alnum(text[j]))
    ++j;
  auto name = text.substr(i + 1, j - i - 1);
  bool semicolon = j < text.size() && text[j] == ';';
  if (!semicolon && !decodes_without_semicolon(name))
    return 0;
  auto it = std::lower_bound(
    std::begin(named_references), std::end(named_references), name,
    [](const named_reference& r, std::string_view n) { return r.name < n; });
  if (it == std::end(named_references) || it->name != name)
    return 0;
  append_utf8(out, it->code_point);
  return j - i + (semicolon ? 1 : 0);
}

} // namespace

std::string decode_html_references(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t run = 0;
  for (size_t i = text.find('&'); i != std::string_view::npos;
       i = text.find('&', i)) {
    out.append(text.data() + run, i - run);
    size_t len = i + 1 < text.size() && text[i + 1] == '#'
                   ? decode_numeric(text, i, out)
                   : decode_named(text, i, out);
    if (len == 0) {
      out.push_back('&');
      len = 1;
    }
    i += len;
    run = i;
  }
  out.append(text.data() + run, text.size() - run);
  return out;
}

// -- control characters -------------------------------------------------------

namespace {

/// Length of the character at `s` (n > 0 bytes) that
/// `remove_control_characters` removes, or 0 when it stays.
size_t control_length(const unsigned char* s, size_t n) noexcept {
  unsigned b = s[0];
  if (b < 0x20)
    return b == '\t' || b == '\n' ? 0 : 1;
  if (b == 0x7F)
    return 1;
  if (b == 0xC2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9F)
    return 2; // U+0080..U+009F
  if (b == 0xE2 && n >= 3) {
    if (s[1] == 0x80 && s[2] >= 0xAA && s[2] <= 0xAE)
      return 3; // U+202A..U+202E
    if (s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9)
      return 3; // U+2066..U+2069
  }
  return 0;
}

/// Whether one of the 8 bytes of `w` may start a removed character.
bool word_may_hold_control(uint64_t w) noexcept {
  return (swar::has_byte_below(w, 0x20) | swar::has_byte(w, 0x7F)
          | swar::has_byte(w, 0xC2) | swar::has_byte(w, 0xE2))
         != 0;
}

} // namespace

size_t remove_control_characters(std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t removed = 0;
  size_t w = 0; // write position, valid once something was removed
  for (size_t i = 0; i < n;) {
    if (removed == 0 && n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, s + i, sizeof word);
      if (!word_may_hold_control(word)) {
        i += 8;
        continue;
      }
    }
    size_t len = control_length(s + i, n - i);
    if (len > 0) {
      if (removed == 0)
        w = i;
      ++removed;
      i += len;
      continue;
    }
    if (removed > 0)
      text[w++] = text[i];
    ++i;
  }
  if (removed > 0)
    text.resize(w);
  return removed;
}

} // namespace candor::domain
