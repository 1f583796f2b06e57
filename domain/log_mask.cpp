// Masks credential-shaped text (bearer tokens, API keys and the like)
// before it reaches a log.

#include "domain/log_mask.hpp"

#include <cstdint>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <re2/re2.h>

namespace candor::domain {

namespace {

struct masker {
  std::unique_ptr<RE2> re;
  std::string rewrite;
};

std::vector<masker> make_maskers() {
  // Key names whose value is a secret. Matched case-insensitively and
  // only as a whole key (`tokens` and `promptTokens` are not secrets).
  constexpr std::string_view keys
    = "(?:api[_-]?key|apikey|x-api-key|access[_-]?key|secret[_-]?key"
      "|access[_-]?token|auth[_-]?token|refresh[_-]?token|id[_-]?token"
      "|private[_-]?key|client[_-]?secret|secret|token|password|passwd|pwd"
      "|credentials?)";
  const std::string k{keys};
  std::vector<std::pair<std::string, std::string>> specs = {
    // Authorization schemes: a credential of 16+ characters, or a shorter
    // one with base64 padding ("Basic instructions" is prose).
    {R"((?i)\b(bearer|basic)(\s+)(?:[A-Za-z0-9\-._~+/]{16,}=*)"
     R"(|[A-Za-z0-9+/]{4,15}={1,2}))",
     R"(\1\2***)"},
    {R"((?i)(\bauthorization["']?\s*[:=]\s*["']?)[A-Za-z0-9\-._~+/]{16,}=*)",
     R"(\1***)"},
    // Vendor-prefixed keys.
    {R"(\b(sk[-_](?:proj-|ant-|svcacct-|admin-|live_|test_)?))"
     R"([A-Za-z0-9_\-]{16,})",
     R"(\1***)"},
    {R"(\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,})", R"(\1***)"},
    {R"(\b(AKIA|ASIA)[0-9A-Z]{16}\b)", R"(\1***)"},
    // Google API keys: "AIza" and 35 more characters.
    {R"(\b(AIza)[0-9A-Za-z_\-]{35})", R"(\1***)"},
    {R"(\b(xox[abpors]-)[A-Za-z0-9\-]{10,})", R"(\1***)"},
    {R"(\beyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*)",
     "eyJ***"},
    // key: "quoted value" (JSON and friends), then unquoted values.
    {R"((?i)(\b)" + k + R"(["']?\s*[:=]\s*")[^"]*")", R"(\1***")"},
    {R"((?i)(\b)" + k + R"(["']?\s*[:=]\s*')[^']*')", R"(\1***')"},
    {R"((?i)(\b)" + k + R"(\s*[:=]\s*)[^\s"',;&}\]]+)", R"(\1***)"},
    // A long opaque run right after a key-ish word ("key abcd...").
    {R"((?i)(\b(?:key|secret|token|password|passphrase|signature|credential)s?)"
     R"(\s+(?:is\s+|was\s+|of\s+)?)[A-Za-z0-9+/_]{24,}={0,2})",
     R"(\1***)"},
  };
  std::vector<masker> out;
  RE2::Options opts;
  opts.set_log_errors(false);
  for (auto& [pattern, rewrite] : specs) {
    auto re = std::make_unique<RE2>(pattern, opts);
    if (!re->ok()) {
      // Built-in patterns: a bad one is a defect; the runtime reports the
      // uncaught exception's text and ends the process.
      throw std::logic_error("candor: invalid log mask pattern " + pattern
                             + ": " + re->error());
    }
    out.push_back(masker{std::move(re), rewrite});
  }
  return out;
}

const std::vector<masker>& maskers() {
  static const auto m = make_maskers();
  return m;
}

/// One linear scan that every secret shape above must match somewhere: a
/// text without any of these words or prefixes cannot hold a secret the
/// maskers would change, so the replace passes are skipped.
const RE2& trigger() {
  static const RE2 re{
    R"((?i)bearer|basic|authorization|sk[-_]|gh[pousr]_|github_pat_|akia|asia)"
    R"(|aiza)"
    R"(|xox[abpors]-|eyj|key|secret|token|passw|pwd|credential|signature)"
    R"(|passphrase)"};
  return re;
}

} // namespace

namespace {

char lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// Whether `text` at `at` starts with `word` (lower case), ignoring ASCII
/// case; `?` in `word` stands for any byte of `any`.
bool word_at(std::string_view text, size_t at, std::string_view word,
             std::string_view any = {}) noexcept {
  if (text.size() - at < word.size())
    return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = lower(text[at + i]);
    if (word[i] == '?' ? any.find(c) == std::string_view::npos : c != word[i])
      return false;
  }
  return true;
}

} // namespace

namespace {

/// Every pair of bytes that may start a word of the switch below, as one
/// bit per (first, second) byte: the first two letters of a word in either
/// case, and any pair whose first byte is not ASCII (which may_hold_secret
/// answers "maybe" for). Most positions of a text are ruled out with one
/// look-up in this 8 KiB table instead of a call per candidate word.
struct pair_table {
  uint64_t bits[65536 / 64] = {};
  constexpr pair_table() {
    constexpr std::string_view starts[]
      = {"au", "ak", "as", "ai", "be", "ba", "cr", "ey", "gh",
         "gi", "ke", "pa", "pw", "sk", "se", "si", "to", "xo"};
    for (auto s : starts)
      for (int upper_a = 0; upper_a < 2; ++upper_a)
        for (int upper_b = 0; upper_b < 2; ++upper_b)
          set(static_cast<unsigned char>(s[0] - 32 * upper_a),
              static_cast<unsigned char>(s[1] - 32 * upper_b));
    for (unsigned a = 0x80; a < 0x100; ++a)
      for (unsigned b = 0; b < 0x100; ++b)
        set(static_cast<unsigned char>(a), static_cast<unsigned char>(b));
  }
  constexpr void set(unsigned char a, unsigned char b) {
    unsigned i = (unsigned{a} << 8) | b;
    bits[i / 64] |= uint64_t{1} << (i % 64);
  }
  constexpr bool may_start(unsigned char a, unsigned char b) const {
    unsigned i = (unsigned{a} << 8) | b;
    return ((bits[i / 64] >> (i % 64)) & 1u) != 0;
  }
};
inline constexpr pair_table pairs{};

/// The word of trigger() that starts at `i` (whose first two letters passed
/// `pairs`), if any.
bool word_starts_at(std::string_view text, size_t i) noexcept {
  switch (lower(text[i])) {
    case 'a':
      return word_at(text, i, "authorization") || word_at(text, i, "akia")
             || word_at(text, i, "asia") || word_at(text, i, "aiza");
    case 'b': return word_at(text, i, "bearer") || word_at(text, i, "basic");
    case 'c': return word_at(text, i, "credential");
    case 'e': return word_at(text, i, "eyj");
    case 'g':
      return word_at(text, i, "gh?_", "pousr")
             || word_at(text, i, "github_pat_");
    case 'k': return word_at(text, i, "key");
    case 'p':
      return word_at(text, i, "passw") || word_at(text, i, "pwd")
             || word_at(text, i, "passphrase");
    case 's':
      return word_at(text, i, "sk?", "-_") || word_at(text, i, "secret")
             || word_at(text, i, "signature");
    case 't': return word_at(text, i, "token");
    case 'x': return word_at(text, i, "xox?-", "abpors");
    default: return false;
  }
}

// -- personal data -------------------------------------------------------------

/// Luhn's check over the digits of `s` (separators skipped).
bool luhn_ok(std::string_view s) {
  int sum = 0;
  bool twice = false;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] < '0' || s[i] > '9')
      continue;
    int d = s[i] - '0';
    if (twice && (d *= 2) > 9)
      d -= 9;
    sum += d;
    twice = !twice;
  }
  return sum % 10 == 0;
}

/// ISO 13616's check: the IBAN rotated and read as a number is 1 mod 97.
bool iban_ok(std::string_view s) {
  std::string compact;
  for (char c : s)
    if (c != ' ')
      compact += c;
  if (compact.size() < 15 || compact.size() > 34)
    return false;
  auto rotated = compact.substr(4) + compact.substr(0, 4);
  int rest = 0;
  for (char c : rotated) {
    int v = c >= '0' && c <= '9' ? c - '0' : c - 'A' + 10;
    rest = (v >= 10 ? rest * 100 + v : rest * 10 + v) % 97;
  }
  return rest == 1;
}

size_t digit_count(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    n += c >= '0' && c <= '9' ? 1 : 0;
  return n;
}

/// Replaces every match of `re` in `out` for which `keep` says so with
/// `replace(match)`.
template <class Keep, class Replace>
void mask_matches(std::string& out, const RE2& re, Keep keep,
                  Replace replace) {
  std::string result;
  re2::StringPiece input{out};
  re2::StringPiece m;
  size_t pos = 0;
  bool changed = false;
  while (pos <= out.size()
         && re.Match(input, pos, out.size(), RE2::UNANCHORED, &m, 1)) {
    auto begin = static_cast<size_t>(m.data() - out.data());
    auto text = std::string_view{m.data(), m.size()};
    result.append(out, pos, begin - pos);
    if (keep(text)) {
      result += replace(text);
      changed = true;
    } else {
      result.append(text);
    }
    pos = begin + std::max<size_t>(m.size(), 1);
    if (m.empty() && begin < out.size())
      result += out[begin];
  }
  if (!changed)
    return;
  if (pos < out.size())
    result.append(out, pos, std::string::npos);
  out = std::move(result);
}

/// Masks e-mail addresses, IBANs (checked), card numbers (Luhn-checked)
/// and phone numbers in `out`.
void mask_personal(std::string& out) {
  static const RE2 email{
    R"([A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,})"};
  static const RE2 iban{R"(\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b)"};
  static const RE2 card{R"(\b[0-9](?:[ \-]?[0-9]){12,18}\b)"};
  static const RE2 phone{
    R"((?:\+|\b00|\b0)[0-9]{1,4}(?:[ \-./]?\(?[0-9]{1,4}\)?){2,6}[0-9]*)"};
  RE2::GlobalReplace(&out, email, "***@***");
  mask_matches(out, iban, iban_ok, [](std::string_view m) {
    return std::string{m.substr(0, 2)} + "***";
  });
  mask_matches(out, card, luhn_ok, [](std::string_view m) {
    return "****" + std::string{m.substr(m.size() - 4)};
  });
  mask_matches(
    out, phone,
    [](std::string_view m) {
      auto n = digit_count(m);
      return n >= 8 && n <= 15;
    },
    [](std::string_view) { return std::string{"***"}; });
}

/// Whether `text` may hold personal data mask_personal would change: an
/// '@'; a word that starts like an IBAN (two capitals, two digits); or
/// eight digits or more in words of digits only, which spaces and
/// punctuation may separate (not the hex words of a UUID or a hash).
bool may_hold_personal(std::string_view text) noexcept {
  size_t run = 0;         // digits of the current run of digit-only words
  size_t word_digits = 0; // digits of the current word
  size_t word_len = 0;
  bool word_alpha = false;
  auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ' ';
    if (c == '@')
      return true;
    bool alnum = digit(c) || upper(c) || (c >= 'a' && c <= 'z');
    if (alnum) {
      if (word_len == 0 && i + 3 < text.size() && upper(c)
          && upper(text[i + 1]) && digit(text[i + 2]) && digit(text[i + 3]))
        return true;
      ++word_len;
      word_alpha = word_alpha || !digit(c);
      word_digits += digit(c) ? 1 : 0;
      continue;
    }
    if (word_len > 0) { // a word ends
      run = word_alpha ? 0 : run + word_digits;
      if (run >= 8)
        return true;
      word_len = word_digits = 0;
      word_alpha = false;
    }
    if (c != ' ' && c != '-' && c != '.' && c != '/' && c != '(' && c != ')'
        && c != '+')
      run = 0;
  }
  return false;
}

bool may_hold_credential(std::string_view text) noexcept {
  // The words of trigger() above. Each is at least three bytes long, so a
  // position needs a next byte to start one; the last byte only counts
  // when it is not ASCII.
  if (text.empty())
    return false;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const size_t last = text.size() - 1;
  for (size_t i = 0; i < last; ++i)
    if (pairs.may_start(byte(i), byte(i + 1))
        && (byte(i) >= 0x80 || word_starts_at(text, i)))
      return true;
  return byte(last) >= 0x80;
}

} // namespace

bool may_hold_secret(std::string_view text) noexcept {
  return may_hold_credential(text) || may_hold_personal(text);
}

std::string mask_secrets(std::string_view text) {
  std::string out{text};
  if (may_hold_credential(text) && RE2::PartialMatch(text, trigger()))
    for (const auto& m : maskers())
      RE2::GlobalReplace(&out, *m.re, m.rewrite);
  if (may_hold_personal(out))
    mask_personal(out);
  return out;
}

} // namespace candor::domain
