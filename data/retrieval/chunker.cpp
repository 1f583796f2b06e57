// Cuts Markdown documents into retrieval chunks: by H2/H3 section, then by
// size with an overlap of whole sentences; also slugify.

#include "data/retrieval/chunker.hpp"

#include <set>
#include <utility>

#include "domain/guard/sanitizer.hpp"
#include "domain/text.hpp"

namespace candor::data {

namespace {

using domain::is_ascii_space;
using domain::trim_ascii;

// -- small text helpers -------------------------------------------------------

bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

/// Heading level (1..3) of an ATX heading line, 0 otherwise. Deeper
/// headings stay text.
int heading_level(std::string_view line, std::string_view& text) noexcept {
  size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#')
    ++hashes;
  if (hashes == 0 || hashes > 3 || hashes >= line.size() || line[hashes] != ' ')
    return 0;
  auto rest = trim_ascii(line.substr(hashes));
  // Optional closing sequence: "## Title ##".
  while (!rest.empty() && rest.back() == '#')
    rest.remove_suffix(1);
  text = trim_ascii(rest);
  return text.empty() ? 0 : static_cast<int>(hashes);
}

/// True for a line that must start a line of its own in the passage text:
/// list items, table rows, quotes.
bool starts_block(std::string_view line) noexcept {
  if (line.empty())
    return false;
  if (starts_with(line, "- ") || starts_with(line, "* ")
      || starts_with(line, "+ ") || line[0] == '|' || line[0] == '>')
    return true;
  size_t digits = 0;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  return digits > 0 && digits + 1 < line.size()
         && (line[digits] == '.' || line[digits] == ')')
         && line[digits + 1] == ' ';
}

/// A table separator row such as "|---|:--:|".
bool is_table_rule(std::string_view line) noexcept {
  if (line.empty() || line[0] != '|')
    return false;
  for (auto c : line)
    if (c != '|' && c != '-' && c != ':' && c != ' ')
      return false;
  return true;
}

/// Cuts back to the start of a UTF-8 sequence.
size_t utf8_floor(std::string_view s, size_t pos) noexcept {
  while (pos > 0 && pos < s.size()
         && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80)
    --pos;
  return pos;
}

// -- sections -----------------------------------------------------------------

struct section {
  std::string heading;     ///< heading path, or the title for the intro
  std::string slug_base;   ///< slug of the deepest heading
  std::string parent_slug; ///< slug of the H2 above an H3, else empty
  std::vector<std::string> lines;
};

/// Joins wrapped lines: paragraphs are separated by "\n\n", list items,
/// table rows and fenced lines get a line of their own.
std::string reflow(const std::vector<std::string>& lines) {
  std::string out;
  bool in_paragraph = false;
  bool in_fence = false;
  for (const auto& raw : lines) {
    auto line = trim_ascii(raw);
    if (starts_with(line, "```")) {
      in_fence = !in_fence;
      continue;
    }
    if (line.empty()) {
      in_paragraph = false;
      continue;
    }
    if (is_table_rule(line))
      continue;
    if (!in_paragraph) {
      if (!out.empty())
        out += "\n\n";
      in_paragraph = true;
    } else if (in_fence || starts_block(line)) {
      out += '\n';
    } else {
      out += ' ';
    }
    out += line;
  }
  return out;
}

/// Sentence-sized units of a section text; each keeps the whitespace that
/// follows it. Units longer than `limit` are cut at spaces.
std::vector<std::string> units_of(std::string_view text, size_t limit) {
  std::vector<std::string> out;
  for (const auto& s : domain::split_sentences(text)) {
    auto unit = text.substr(s.begin, s.next - s.begin);
    while (unit.size() > limit) {
      auto cut = unit.rfind(' ', limit);
      if (cut == std::string_view::npos || cut == 0)
        cut = utf8_floor(unit, limit);
      if (cut == 0)
        break;
      auto piece = unit.substr(0, cut);
      unit.remove_prefix(cut);
      while (!unit.empty() && unit.front() == ' ')
        unit.remove_prefix(1);
      out.emplace_back(std::string{piece} + " ");
    }
    if (!trim_ascii(unit).empty())
      out.emplace_back(unit);
  }
  return out;
}

/// Groups units into chunk texts of about `target` characters, each next
/// chunk starting with the trailing units of the previous one (at most
/// `overlap` characters, never all of them).
std::vector<std::string> pack(const std::vector<std::string>& units,
                              size_t target, size_t overlap) {
  std::vector<std::string> out;
  std::vector<size_t> cur;
  size_t cur_len = 0;
  size_t fresh = 0;
  auto emit = [&] {
    std::string text;
    for (auto i : cur)
      text += units[i];
    out.emplace_back(trim_ascii(text));
  };
  for (size_t i = 0; i < units.size(); ++i) {
    auto len = trim_ascii(units[i]).size() + 1;
    if (fresh > 0 && cur_len + len > target) {
      emit();
      std::vector<size_t> tail;
      size_t tail_len = 0;
      for (auto j = cur.size(); j-- > 0;) {
        auto l = trim_ascii(units[cur[j]]).size() + 1;
        if (tail_len + l > overlap || tail.size() + 1 >= cur.size())
          break;
        tail.insert(tail.begin(), cur[j]);
        tail_len += l;
      }
      cur = std::move(tail);
      cur_len = tail_len;
      fresh = 0;
    }
    cur.push_back(i);
    cur_len += len;
    ++fresh;
  }
  if (fresh > 0)
    emit();
  return out;
}

template <class T>
void append_unique(std::vector<T>& xs, const T& x) {
  for (const auto& y : xs)
    if (y == x)
      return;
  xs.push_back(x);
}

} // namespace

std::string chunk_options::describe() const {
  return "target=" + std::to_string(target_chars)
         + ",overlap=" + std::to_string(overlap_chars)
         + ",sanitize=" + (sanitize ? "1" : "0");
}

std::string slugify(std::string_view text) {
  auto norm = domain::normalize(text);
  std::string out;
  out.reserve(norm.size());
  for (auto c : norm) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-')
    out.pop_back();
  return out;
}

chunked_document chunk_markdown(std::string_view doc_slug,
                                std::string_view markdown,
                                const chunk_options& opts) {
  chunked_document doc;
  doc.slug = std::string{doc_slug};
  // Split into lines and sections.
  std::vector<section> sections;
  sections.push_back(section{"", "overview", "", {}});
  std::string h2_text;
  std::string h2_slug;
  // A heading the sanitizer would block does not reach an id either.
  auto section_slug = [&](std::string_view htext) {
    if (opts.sanitize && domain::sanitize(htext).flagged())
      return std::string{"redacted"};
    return slugify(htext);
  };
  bool in_fence = false;
  size_t pos = 0;
  while (pos <= markdown.size()) {
    auto nl = markdown.find('\n', pos);
    if (nl == std::string_view::npos)
      nl = markdown.size();
    auto line = markdown.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    pos = nl + 1;
    if (starts_with(trim_ascii(line), "```"))
      in_fence = !in_fence;
    std::string_view htext;
    auto level = in_fence ? 0 : heading_level(line, htext);
    if (level == 1 && doc.title.empty()) {
      doc.title = std::string{htext};
      continue;
    }
    if (level == 1 || level == 2) {
      h2_text = std::string{htext};
      h2_slug = section_slug(htext);
      sections.push_back(section{h2_text, h2_slug, "", {}});
      continue;
    }
    if (level == 3) {
      auto path = h2_text.empty() ? std::string{htext}
                                  : h2_text + " > " + std::string{htext};
      sections.push_back(
        section{std::move(path), section_slug(htext), h2_slug, {}});
      continue;
    }
    sections.back().lines.emplace_back(line);
  }
  if (doc.title.empty())
    doc.title = doc.slug;
  // The title and headings go to the model too, so they are checked like
  // text; what they lose is recorded on every chunk they label.
  domain::sanitized_text title_check;
  if (opts.sanitize) {
    title_check = domain::sanitize(doc.title);
    doc.title = title_check.text;
  }
  sections.front().heading = doc.title;
  // Chunk every section that has text.
  const auto target = opts.target_chars < 50 ? size_t{50} : opts.target_chars;
  const auto overlap
    = opts.overlap_chars < target ? opts.overlap_chars : target / 2;
  std::set<std::string> used_slugs;
  int32_t ordinal = 0;
  for (auto& sec : sections) {
    auto text = reflow(sec.lines);
    if (trim_ascii(text).empty())
      continue;
    std::string heading = sec.heading;
    domain::sanitized_text heading_check = title_check;
    if (opts.sanitize && &sec != &sections.front()) {
      auto check = domain::sanitize(heading);
      heading = std::move(check.text);
      for (auto& x : check.redacted_spans)
        heading_check.redacted_spans.push_back(std::move(x));
      for (const auto& r : check.flag_reasons)
        append_unique(heading_check.flag_reasons, r);
    }
    // A unique section slug within the document, so ids are unique: an id
    // splits at its last '-' into (section slug, n).
    auto slug = sec.slug_base.empty() ? std::string{"section"} : sec.slug_base;
    if (used_slugs.count(slug) != 0 && !sec.parent_slug.empty())
      slug = sec.parent_slug + "-" + slug;
    if (used_slugs.count(slug) != 0) {
      auto base = slug;
      for (int i = 2; used_slugs.count(slug) != 0; ++i)
        slug = base + "-" + std::to_string(i);
    }
    used_slugs.insert(slug);
    auto texts = pack(units_of(text, target), target, overlap);
    int n = 0;
    for (auto& t : texts) {
      chunk c;
      c.id = doc.slug + "#" + slug + "-" + std::to_string(++n);
      c.doc_slug = doc.slug;
      c.doc_title = doc.title;
      c.heading = heading;
      c.ordinal = ordinal++;
      c.redacted_spans = heading_check.redacted_spans;
      c.flag_reasons = heading_check.flag_reasons;
      if (opts.sanitize) {
        auto clean = domain::sanitize(t);
        c.text = std::move(clean.text);
        for (auto& s : clean.redacted_spans)
          c.redacted_spans.push_back(std::move(s));
        for (const auto& r : clean.flag_reasons)
          append_unique(c.flag_reasons, r);
      } else {
        c.text = std::move(t);
      }
      c.flagged = !c.redacted_spans.empty();
      doc.chunks.push_back(std::move(c));
    }
  }
  return doc;
}

} // namespace candor::data
