// The ingestion sanitizer: splits text into sentences and replaces those
// that carry embedded instructions with a fixed marker.

#include "domain/guard/sanitizer.hpp"

#include <algorithm>

#include "domain/text.hpp"

namespace candor::domain {

namespace {

bool is_terminal(char c) noexcept {
  return c == '.' || c == '!' || c == '?';
}

} // namespace

std::vector<sentence_span> split_sentences(std::string_view text) {
  std::vector<sentence_span> out;
  size_t i = 0;
  auto n = text.size();
  while (i < n && is_ascii_space(text[i]))
    ++i;
  while (i < n) {
    auto begin = i;
    auto end = n;
    // Find the end of this sentence.
    for (auto j = i; j < n; ++j) {
      if (text[j] == '\n') {
        end = j;
        break;
      }
      if (is_terminal(text[j]) && j + 1 < n && is_ascii_space(text[j + 1])) {
        end = j + 1;
        break;
      }
    }
    // Trailing whitespace (a sentence ended by a newline may carry spaces
    // before it) is not part of the sentence.
    auto stop = end;
    while (stop > begin && is_ascii_space(text[stop - 1]))
      --stop;
    auto next = end;
    while (next < n && is_ascii_space(text[next]))
      ++next;
    if (stop > begin)
      out.push_back(sentence_span{begin, stop, next});
    else if (!out.empty())
      out.back().next = next;
    i = next;
  }
  return out;
}

sanitized_text sanitize(std::string_view text, const rule_set& rules) {
  sanitized_text out;
  out.text.reserve(text.size());
  auto spans = split_sentences(text);
  // Leading whitespace, kept as is.
  out.text.append(
    text.substr(0, spans.empty() ? text.size() : spans.front().begin));
  for (const auto& s : spans) {
    auto sentence = text.substr(s.begin, s.end - s.begin);
    auto verdict = rules.evaluate(sentence, rule_scope::document);
    if (verdict.blocked) {
      out.text.append(redaction_marker);
      out.redacted_spans.emplace_back(sentence);
      for (auto& name : verdict.matched)
        if (std::find(out.flag_reasons.begin(), out.flag_reasons.end(), name)
            == out.flag_reasons.end())
          out.flag_reasons.push_back(std::move(name));
    } else {
      out.text.append(sentence);
    }
    out.text.append(text.substr(s.end, s.next - s.end));
  }
  return out;
}

} // namespace candor::domain
