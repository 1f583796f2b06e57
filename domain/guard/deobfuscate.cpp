// Undoes letter-by-letter spacing and digit or symbol substitutions, for the
// input rules' second canonical text.

#include "domain/guard/deobfuscate.hpp"

#include <map>
#include <vector>

#include "domain/text.hpp"

namespace candor::domain {

namespace {

bool is_letter(char c) {
  return c >= 'a' && c <= 'z';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// Chat shorthand read as the words the rules are written with; only
/// whole words are replaced.
struct shorthand {
  std::string_view from, to;
};
constexpr shorthand shorthands[] = {
  {"u", "you"},         {"ur", "your"},       {"urs", "yours"},
  {"r", "are"},         {"ya", "you"},        {"ppl", "people"},
  {"pls", "please"},    {"plz", "please"},    {"msg", "message"},
  {"msgs", "messages"}, {"rulez", "rules"},   {"instrux", "instructions"},
  {"pw", "password"},   {"pwd", "password"},  {"4get", "forget"},
  {"4got", "forgot"},   {"b4", "before"},     {"sys", "system"},
};

std::string_view expand(std::string_view word) {
  for (const auto& s : shorthands)
    if (s.from == word)
      return s.to;
  return word;
}

/// The letter an ASCII symbol (or the euro sign) stands for, or 0.
char symbol_letter(std::string_view raw) {
  if (raw.size() == 1) {
    switch (raw[0]) {
      case '@': return 'a';
      case '$': return 's';
      case '!': return 'i';
      case '|': return 'l';
      default: return 0;
    }
  }
  return raw == "\xe2\x82\xac" ? 'e' : 0;
}

/// The letter a digit stands for inside a word of letters, or the digit.
char digit_letter(char c) {
  switch (c) {
    case '0': return 'o';
    case '1': return 'i';
    case '3': return 'e';
    case '4': return 'a';
    case '5': return 's';
    case '7': return 't';
    case '8': return 'b';
    case '9': return 'g';
    default: return c;
  }
}

/// A word that writes digits for letters: three or more characters, at
/// least two letters and one digit ("pr0mpt", "4ll"; not "q1" or "e5").
bool digit_word(std::string_view w) {
  int letters = 0;
  int digits = 0;
  for (char c : w) {
    letters += is_letter(c);
    digits += is_digit(c);
  }
  return w.size() >= 3 && letters >= 2 && digits >= 1;
}

/// Whether the '@' at `raw[i]` belongs to an e-mail address: a '.' and a
/// letter follow before the next space.
bool in_email(std::string_view raw, size_t i) {
  for (size_t k = i + 1; k + 1 < raw.size(); ++k) {
    char c = raw[k];
    if (c == ' ' || c == '\t' || c == '\n')
      return false;
    if (c == '.' && ((raw[k + 1] | 0x20) >= 'a' && (raw[k + 1] | 0x20) <= 'z'))
      return true;
  }
  return false;
}

/// Whether `norm` (single-space separated words) has a run of three
/// one-character words or a word mixing letters and digits; and whether
/// `raw` has a substitution symbol next to a letter.
bool shows_disguise(std::string_view raw, std::string_view norm) {
  int singles = 0;
  size_t start = 0;
  while (start < norm.size()) {
    auto end = norm.find(' ', start);
    if (end == std::string_view::npos)
      end = norm.size();
    auto word = norm.substr(start, end - start);
    if (expand(word) != word && word.size() > 1)
      return true; // shorthand ("ur", "pls"); lone "u" and "r" are too common
    singles = word.size() == 1 ? singles + 1 : 0;
    if (singles >= 3)
      return true;
    if (digit_word(word))
      return true;
    start = end + 1;
  }
  // Words cut into syllables ("ig-nore pre-vi-ous"): three or more
  // hyphens between letters.
  int hyphens = 0;
  for (size_t i = 1; i + 1 < raw.size(); ++i)
    if (raw[i] == '-' && is_letter(static_cast<char>(raw[i - 1] | 0x20))
        && is_letter(static_cast<char>(raw[i + 1] | 0x20)) && ++hyphens >= 3)
      return true;
  // A symbol followed by a letter, read as words_of reads it: past
  // invisible characters, through look-alike and full-width letters.
  auto letter_follows = [&](size_t at) {
    std::string scratch;
    while (at < raw.size()) {
      size_t len = 1;
      auto m = map_at(raw, at, len, scratch);
      if (!m.empty())
        return is_letter(m[0]);
      at += len;
    }
    return false;
  };
  for (size_t i = 0; i < raw.size(); ++i) {
    bool sym = raw[i] == '@' || raw[i] == '$' || raw[i] == '!'
               || raw[i] == '|'
               || (raw[i] == '\xe2' && raw.substr(i, 3) == "\xe2\x82\xac");
    if (!sym)
      continue;
    size_t after = i + (raw[i] == '\xe2' ? 3 : 1);
    if (letter_follows(after) && !(raw[i] == '@' && in_email(raw, i)))
      return true;
  }
  return false;
}

struct unit {
  std::string_view raw;
  /// A copy: for a code point outside the BMP, `for_each_mapped` hands out
  /// a view of a buffer it reuses.
  std::string mapped;
};

struct word {
  std::string chars;
  std::string gap; ///< the raw separator text before this word
};

/// Splits `raw` into words, reading substitution symbols that touch a
/// letter as that letter.
std::vector<word> words_of(std::string_view raw, unsigned& undone) {
  std::vector<unit> units;
  for_each_mapped(raw, [&](std::string_view r, std::string_view m) {
    if (!m.empty()) // invisible characters are not even separators
      units.push_back({r, std::string{m}});
  });
  auto letter_at = [&](size_t k) {
    return k < units.size() && units[k].mapped.size() == 1
           && (is_letter(units[k].mapped[0]) || is_digit(units[k].mapped[0]));
  };
  auto only_letter_at = [&](size_t k) {
    return k < units.size() && !units[k].mapped.empty()
           && is_letter(units[k].mapped[0]);
  };
  std::vector<word> out;
  word cur;
  // A '|' that recurs every other character separates letters
  // ("i|g|n|o|r|e"); elsewhere it may stand for an 'l' ("ru|es").
  auto separating_pipe = [&](size_t k) {
    return units[k].raw == "|"
           && ((k >= 2 && units[k - 2].raw == "|")
               || (k + 2 < units.size() && units[k + 2].raw == "|"));
  };
  for (size_t k = 0; k < units.size(); ++k) {
    const auto& u = units[k];
    // A symbol stands for a letter when a letter follows it ("$ystem",
    // "p@ss", "ru|es"; not "help!" or "US$"), and '@' not in an e-mail.
    bool email_at = u.raw == "@"
                    && in_email(raw, static_cast<size_t>(u.raw.data()
                                                         - raw.data()));
    if (char sub = symbol_letter(u.raw);
        sub != 0 && !separating_pipe(k) && !email_at
        && only_letter_at(k + 1)) {
      cur.chars.push_back(sub);
      undone |= disguise_symbols;
      continue;
    }
    // A hyphen between two letters of a word cut into syllables joins
    // them; one-letter pieces ("i-g-n-o-r-e") are left to step 2, which
    // reads the separators.
    if (u.raw == "-" && cur.chars.size() >= 2 && k + 2 < units.size()
        && letter_at(k + 1) && letter_at(k + 2)) {
      undone |= disguise_spacing;
      continue;
    }
    for (char c : u.mapped) {
      if (c != ' ') {
        cur.chars.push_back(c);
        continue;
      }
      if (!cur.chars.empty()) {
        out.push_back(std::move(cur));
        cur = word{};
      }
      cur.gap.append(u.raw);
    }
  }
  if (!cur.chars.empty())
    out.push_back(std::move(cur));
  return out;
}

/// Joins every run of three or more one-character words (step 2).
std::vector<word> join_spaced(std::vector<word> in, unsigned& undone) {
  std::vector<word> out;
  size_t i = 0;
  while (i < in.size()) {
    size_t j = i;
    while (j < in.size() && in[j].chars.size() == 1)
      ++j;
    if (j - i < 3) {
      for (size_t k = i; k < std::max(j, i + 1); ++k)
        out.push_back(std::move(in[k]));
      i = std::max(j, i + 1);
      continue;
    }
    undone |= disguise_spacing;
    std::map<std::string, int> counts;
    for (size_t k = i + 1; k < j; ++k)
      ++counts[in[k].gap];
    std::string inner;
    int best = 0;
    for (auto& [gap, n] : counts)
      if (n > best) {
        best = n;
        inner = gap;
      }
    word w{in[i].chars, in[i].gap};
    for (size_t k = i + 1; k < j; ++k) {
      if (in[k].gap != inner) {
        out.push_back(std::move(w));
        w = word{{}, in[k].gap};
      }
      w.chars += in[k].chars;
    }
    out.push_back(std::move(w));
    i = j;
  }
  return out;
}

/// What the text asks to be decoded (step 5), from one pass over its
/// words: reading backwards ("backwards", "al revés", "right to left", ...),
/// rotating letters (ROT13 or any ROTn, Caesar, shifting the letters).
struct decodings {
  bool reversal = false;
  bool rotation = false;
};

decodings decodings_asked(std::string_view norm) {
  static constexpr std::string_view reversal_words[] = {
    "backwards", "backward",  "reversed",  "reverse",   "achterstevoren",
    "omgekeerd", "ruckwarts", "umgekehrt", "envers",    "reves",
    "contrario", "invertito", "invertido", "inverse"};
  decodings out;
  bool shift = false;
  bool letters = false;
  std::string_view prev, prev2;
  size_t start = 0;
  while (start < norm.size()) {
    auto end = norm.find(' ', start);
    if (end == std::string_view::npos)
      end = norm.size();
    auto w = norm.substr(start, end - start);
    for (auto r : reversal_words)
      out.reversal |= w == r;
    out.reversal |= w == "left" && prev == "to" && prev2 == "right";
    bool rot_n = w.size() > 3 && w.substr(0, 3) == "rot";
    for (size_t k = 3; rot_n && k < w.size(); ++k)
      rot_n = is_digit(w[k]);
    out.rotation |= w == "caesar" || w == "rot" || rot_n;
    shift |= w == "shift" || w == "shifted" || w == "rotate" || w == "rotated";
    letters |= w == "letter" || w == "letters" || w == "alphabet";
    prev2 = prev;
    prev = w;
    start = end + 1;
  }
  out.rotation |= shift && letters;
  return out;
}

std::string rotated(std::string_view norm, int by) {
  std::string out{norm};
  for (auto& c : out)
    if (is_letter(c))
      c = static_cast<char>('a' + (c - 'a' + by) % 26);
  return out;
}

/// The value of a base64 character, or -1.
int base64_value(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/// `run` decoded from base64, when it is text: at least 8 bytes, nine in
/// ten of them printable ASCII.
std::string decode_base64_text(std::string_view run) {
  std::string bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : run) {
    acc = (acc << 6) | static_cast<uint32_t>(base64_value(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  size_t printable = 0;
  for (unsigned char c : bytes)
    printable += (c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t';
  if (bytes.size() < 8 || printable * 10 < bytes.size() * 9)
    return {};
  return bytes;
}

/// The text hidden in base64 runs of `raw` (16 or more characters of the
/// standard alphabet, up to 4,000 each): each run is decoded from its start
/// or, when that is not text, from one of the next three characters (a run
/// glued to a word); up to 4 runs that decode to text are normalized and
/// kept. Empty when there is none.
std::string base64_texts(std::string_view raw) {
  std::string out;
  int found = 0;
  for (size_t i = 0; i < raw.size() && found < 4;) {
    if (base64_value(raw[i]) < 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < raw.size() && j - i < 4000 && base64_value(raw[j]) >= 0)
      ++j;
    for (size_t skip = 0; j - i >= 16 + skip && skip < 4; ++skip) {
      auto bytes = decode_base64_text(raw.substr(i + skip, j - i - skip));
      if (bytes.empty())
        continue;
      auto text = normalize(bytes);
      if (!text.empty()) {
        if (!out.empty())
          out += ' ';
        out += text;
        ++found;
      }
      break;
    }
    i = j;
  }
  return out;
}

/// `out.text` = `out.words` followed by the decodings the text asks for
/// or carries (step 5), made from the de-disguised words.
void append_decodings(bool reversal, bool rotation,
                      const std::string& decoded, deobfuscated& out) {
  const std::string& words = out.words;
  out.text = words;
  if (reversal) {
    out.text += ' ';
    out.text.append(words.rbegin(), words.rend());
    out.undone |= disguise_reversed;
  }
  if (rotation) {
    for (int by = 1; by < 26; ++by) {
      out.text += ' ';
      out.text += rotated(words, by);
    }
    out.undone |= disguise_rotated;
  }
  if (!decoded.empty()) {
    out.text += ' ';
    out.text += decoded;
    out.undone |= disguise_base64;
  }
}

} // namespace

std::optional<deobfuscated> deobfuscate(std::string_view raw,
                                        std::string_view norm) {
  auto asked = decodings_asked(norm);
  auto decoded = base64_texts(raw);
  deobfuscated out;
  if (!shows_disguise(raw, norm)) {
    if (!asked.reversal && !asked.rotation && decoded.empty())
      return std::nullopt;
    out.words = std::string{norm};
  } else {
    auto words = join_spaced(words_of(raw, out.undone), out.undone);
    for (auto& w : words) {
      if (!out.words.empty())
        out.words.push_back(' ');
      if (auto word = expand(w.chars); word != w.chars) {
        out.words += word; // shorthand first: "4get" is not "aget"
        continue;
      }
      if (digit_word(w.chars)) {
        for (auto& c : w.chars)
          c = digit_letter(c);
        out.undone |= disguise_digits;
      }
      out.words += expand(w.chars);
    }
  }
  append_decodings(asked.reversal, asked.rotation, decoded, out);
  if (out.text == norm)
    return std::nullopt;
  return out;
}

} // namespace candor::domain
