#pragma once

// Undoes the common ways of disguising words from the input rules: letters
// spaced out one by one, digits and symbols standing in for letters.

#include <optional>
#include <string>
#include <string_view>

namespace candor::domain {

/// What `deobfuscate` undid, as flags.
enum disguise : unsigned {
  disguise_none = 0,
  disguise_spacing = 1,  ///< "i g n o r e", "s.y.s.t.e.m" joined
  disguise_digits = 2,   ///< "1gn0r3" -> "ignore" (letters and digits mixed)
  disguise_symbols = 4,  ///< "$ystem", "@dmin", "!nstructions", "ru|es"
  disguise_reversed = 8, ///< asked to read backwards: the text reversed too
  disguise_rotated = 16, ///< ROTn, Caesar or shifted letters named: every
                         ///< rotation of the text too
  disguise_base64 = 32,  ///< a base64 run that decodes to text
};
// (Shorthand, step 4, is not a disguise flag: it is not hiding anything.)

/// A second canonical text for the input rules, or nothing when `raw`
/// shows none of the disguises (the common case, decided from `norm`,
/// `normalize(raw)`, and one scan of `raw`'s ASCII symbols and hyphens).
///
/// Built from `raw` one code point at a time (`for_each_mapped`, so the
/// same folding, confusable and invisible-character handling as
/// `normalize`), in deterministic steps:
/// 1. `@ $ ! | €` followed by a letter stand for `a s i l e` (not the '@'
///    of an e-mail address, not a '|' that recurs every other character);
///    a hyphen inside a word cut into syllables joins its pieces
///    ("ig-nore pre-vi-ous"; asked for by three such hyphens);
/// 2. a run of three or more one-character words is joined into words.
///    What separated the letters of one word is the run's most common
///    separator (" ", ".", "-", "  ", ...); a different separator is a word
///    break ("i g n o r e  a l l" -> "ignore all", "I-G-N-O-R-E A-L-L" ->
///    "ignore all"); with none, the run becomes one word;
/// 3. in a word of three or more characters holding at least two letters
///    and a digit, 0 1 3 4 5 7 8 9 read as o i e a s t b g ("pr0mpt" ->
///    "prompt"); numbers alone are kept;
/// 4. chat shorthand becomes the word ("ur" -> "your", "pls" -> "please",
///    "rulez" -> "rules"); its presence alone also asks for this text;
/// 5. when the text asks to read something backwards ("read this
///    backwards", "al revés"), the words of steps 1-4 reversed are appended,
///    so "tpmorp metsys" reads "system prompt"; when it names ROT13, ROTn,
///    Caesar or shifting letters, those words rotated by each of 1..25 are
///    appended; a run of 16 or more base64 characters that decodes to
///    printable text is decoded, normalized and appended.
/// The result is lower-case a-z0-9 words separated by single spaces, like
/// `normalize`'s. The rules run on both texts and a rule matching either
/// counts; the original text is what the log and the ledger keep.
struct deobfuscated {
  /// What the rules read: `words`, then the decodings of step 5.
  std::string text;
  /// The de-disguised words alone (steps 1-4; `norm` when only step 5
  /// applied): what the input scorer reads, so that 25 rotations of an
  /// ordinary question about ciphers do not add up to an attack's score.
  std::string words;
  unsigned undone = disguise_none;
};
std::optional<deobfuscated> deobfuscate(std::string_view raw,
                                        std::string_view norm);

} // namespace candor::domain
