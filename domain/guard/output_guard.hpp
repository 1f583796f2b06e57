#pragma once

// Declares the output guard and its configuration: what text leaving the
// server must not carry.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace candor::domain {

/// What the output guard protects.
struct output_guard_config {
  /// A string planted in a document; it must never leave the server.
  std::string canary;
  /// Texts whose wording must not be echoed (system prompts etc.).
  std::vector<std::string> protected_texts;
  /// Texts the server may legitimately say although they share wording
  /// with a protected text (refusal messages, fixed disclaimers).
  std::vector<std::string> allowed_echoes;
  /// Shingle length in words (values below 1 count as 1).
  size_t shingle_words = 8;
};

/// Checks text that is about to leave the server. Immutable after
/// construction, so one instance can be shared between threads.
///
/// The text is first read as a browser would show it: HTML character
/// references are decoded (`decode_html_references`, so "&#45;" is a dash
/// and "&colon;" a colon). All comparisons then run on `normalize()`d text
/// (see domain/text.hpp), so case, punctuation, accents, homoglyphs and
/// invisible characters do not hide a leak. Checks, in order:
///
/// 1. `"canary"`: the canary occurs case-insensitively in the raw text, or
///    its normalized form occurs in the normalized text on word
///    boundaries ("tailwind 7731"), or its letters and digits occur
///    contiguously once every space is removed ("T A I L W I N D 7 7 3 1";
///    only for canaries of 6 or more letters and digits).
/// 2. `"redacted_span"`: a span the sanitizer removed from a passage
///    reappears: the whole normalized span when it is shorter than
///    `shingle_words` words, otherwise any shared `shingle_words`-word
///    shingle.
/// 3. `"prompt_leak"`: the text shares a shingle with a protected text
///    that no allowed echo contains. A protected text shorter than
///    `shingle_words` words is checked as a whole phrase instead.
/// 4. `"remote_image"`: markup that makes a client rendering the text
///    fetch something, whose URL can carry data to another host. Answers
///    never need images or HTML, so whole classes are refused: any
///    Markdown image ("![" with a "]" after it: inline or by reference,
///    any target, alt text of any length or over lines); an HTML element
///    that loads or embeds (img, image, svg, picture, source, video,
///    audio, track, iframe, frame, object, embed, applet, link, script,
///    style, input, meta, base, ...) whatever its attributes; on any
///    element, a URL attribute (src, srcset, href, poster, background,
///    data, action, ...) with an absolute target ("https:", "https:host",
///    "//host", "\\host", any scheme), an event handler (on...) or a style
///    with a function, '@' or an escape; CSS `url(` with an absolute target
///    and `@import`. Relative links, plain URLs, Markdown links and prose
///    with '<' ("under <5 kg", "<b>") pass.
///
/// Shingles (steps 2 and 3) are taken twice: over all words and over the
/// content words only (function words such as "and", "the", "to" left
/// out), so a copy with function words dropped or swapped still matches.
class output_guard {
public:
  explicit output_guard(output_guard_config cfg);

  /// Empty string = clean; otherwise the reason: "canary",
  /// "redacted_span", "prompt_leak" or "remote_image".
  std::string check(std::string_view text,
                    const std::vector<std::string>& redacted_spans) const;

  /// Number of protected shingles kept after removing allowed echoes.
  size_t protected_shingles() const noexcept {
    return shingles_.size();
  }

private:
  /// Lets `fixed_verdicts_` be searched with a string_view.
  struct string_hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };

  size_t words_;
  std::string canary_lower_;
  std::string canary_normalized_;
  std::string canary_compact_;
  std::unordered_set<uint64_t> shingles_;
  /// Protected texts shorter than one shingle, normalized.
  std::vector<std::string> short_phrases_;
  /// The verdict on each allowed echo, taken at construction: a response
  /// that is exactly one of them (a fixed refusal) and carries no redacted
  /// spans gets it without a scan.
  std::unordered_map<std::string, std::string, string_hash, std::equal_to<>>
    fixed_verdicts_;
};

} // namespace candor::domain
