// The citation check of the documents branch: drops citations of passages
// that were not retrieved and decides whether an answer stands.

#include "domain/citations.hpp"

#include <algorithm>

namespace candor::domain {

std::string_view to_string(citation_verdict x) noexcept {
  switch (x) {
    case citation_verdict::answered: return "answered";
    case citation_verdict::model_refused: return "model_refused";
    case citation_verdict::not_confident: return "not_confident";
    case citation_verdict::no_valid_citation: return "no_valid_citation";
  }
  return "unknown";
}

namespace {

bool continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

} // namespace

std::string make_snippet(std::string_view text, size_t max_chars) {
  // Collapse runs of whitespace (passages keep paragraph breaks).
  std::string flat;
  flat.reserve(std::min(text.size(), max_chars * 4 + 8));
  bool space = false;
  size_t chars = 0;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !flat.empty();
      continue;
    }
    if (!continuation(static_cast<unsigned char>(c))) {
      if (chars + (space ? 1 : 0) >= max_chars)
        break;
      if (space) {
        flat += ' ';
        ++chars;
        space = false;
      }
      ++chars;
    }
    flat += c;
  }
  if (i >= text.size())
    return flat;
  // Cut: back up to the last word boundary when there is one nearby.
  auto cut = flat.rfind(' ');
  if (cut != std::string::npos && cut > flat.size() / 2)
    flat.resize(cut);
  while (!flat.empty()
         && (flat.back() == ',' || flat.back() == ';' || flat.back() == ':'))
    flat.pop_back();
  return flat + "\u2026";
}

citation_check check_citations(const std::vector<passage>& retrieved,
                               const std::vector<std::string>& cited,
                               bool refused, bool confident,
                               size_t max_citations) {
  citation_check out;
  std::vector<std::string> seen;
  for (const auto& id : cited) {
    if (std::find(seen.begin(), seen.end(), id) != seen.end())
      continue;
    seen.push_back(id);
    auto it = std::find_if(retrieved.begin(), retrieved.end(),
                           [&](const passage& p) { return p.chunk_id == id; });
    if (it == retrieved.end()) {
      out.dropped.push_back(id.size() > 80 ? id.substr(0, 80) : id);
      continue;
    }
    if (out.citations.size() >= max_citations)
      continue;
    citation c;
    c.chunk_id = it->chunk_id;
    c.doc_title = it->doc_title;
    c.heading = it->heading;
    c.score = it->score;
    c.snippet = make_snippet(it->text);
    c.sanitized = it->sanitized;
    out.citations.push_back(std::move(c));
  }
  if (refused)
    out.verdict = citation_verdict::model_refused;
  else if (!confident)
    out.verdict = citation_verdict::not_confident;
  else if (out.citations.empty())
    out.verdict = citation_verdict::no_valid_citation;
  else
    out.verdict = citation_verdict::answered;
  if (out.verdict != citation_verdict::answered)
    out.citations.clear();
  return out;
}

} // namespace candor::domain
