#include "data/wordnet.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>

namespace candor::data {

namespace {

/// Splits a line on single spaces (WordNet's separator).
void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (i < line.size()) {
    auto sp = line.find(' ', i);
    if (sp == std::string_view::npos)
      sp = line.size();
    if (sp > i)
      out.push_back(line.substr(i, sp - i));
    i = sp + 1;
  }
}

/// A lemma as a plain lower-case word, or empty when it is a phrase, is
/// hyphenated or holds anything but letters. Strips an adjective's
/// syntactic marker ("(a)", "(p)", "(ip)").
std::string simple_word(std::string_view lemma) {
  if (auto paren = lemma.find('('); paren != std::string_view::npos)
    lemma = lemma.substr(0, paren);
  std::string out;
  out.reserve(lemma.size());
  for (char ch : lemma) {
    if (ch >= 'A' && ch <= 'Z')
      ch = static_cast<char>(ch - 'A' + 'a');
    if (ch < 'a' || ch > 'z')
      return {};
    out.push_back(ch);
  }
  return out;
}

bool parse_u32(std::string_view s, uint32_t& out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc{} && p == s.data() + s.size();
}

} // namespace

const std::vector<std::string>& synonym_table::of(const std::string& term)
  const {
  static const std::vector<std::string> none;
  auto i = synonyms.find(term);
  return i == synonyms.end() ? none : i->second;
}

synonym_table load_wordnet(const wordnet_options& opts,
                           const analyzer_options& analysis,
                           const std::function<bool(const std::string&)>&
                             known) {
  synonym_table out;
  if (opts.senses == 0)
    return out;
  // Each lemma analyzed once: its single term, or empty.
  std::unordered_map<std::string, std::string> analyzed;
  auto term_of = [&](const std::string& word) -> const std::string& {
    auto [at, added] = analyzed.try_emplace(word);
    if (added) {
      auto terms = analyze(word, analysis);
      if (terms.size() == 1)
        at->second = std::move(terms.front());
    }
    return at->second;
  };
  std::unordered_map<std::string, std::set<std::string>> table;
  std::vector<std::string_view> fields;
  std::string line;
  for (const char* pos : {"noun", "verb", "adj", "adv"}) {
    auto data_path = opts.dir + "/data." + pos;
    auto index_path = opts.dir + "/index." + pos;
    std::ifstream data{data_path};
    std::ifstream index{index_path};
    if (!data || !index) {
      out.error = "cannot read WordNet file "
                  + (!data ? data_path : index_path);
      return out;
    }
    // Synset offset -> the analyzed terms of its single-word lemmas.
    std::unordered_map<uint32_t, std::vector<std::string>> synsets;
    while (std::getline(data, line)) {
      if (line.empty() || line[0] == ' ')
        continue; // licence header
      split(line, fields);
      uint32_t offset = 0;
      uint32_t count = 0;
      if (fields.size() < 4 || !parse_u32(fields[0], offset)
          || !parse_u32(fields[3], count, 16)
          || fields.size() < 4 + 2 * static_cast<size_t>(count)) {
        out.error = "malformed WordNet line in " + data_path;
        return out;
      }
      std::vector<std::string> terms;
      for (uint32_t i = 0; i < count; ++i) {
        auto word = simple_word(fields[4 + 2 * i]);
        if (word.empty())
          continue;
        const auto& t = term_of(word);
        if (!t.empty()
            && std::find(terms.begin(), terms.end(), t) == terms.end())
          terms.push_back(t);
      }
      if (terms.size() >= 2)
        synsets.emplace(offset, std::move(terms));
    }
    while (std::getline(index, line)) {
      if (line.empty() || line[0] == ' ')
        continue;
      split(line, fields);
      uint32_t synset_count = 0;
      if (fields.size() < 4 || !parse_u32(fields[2], synset_count)
          || fields.size() < synset_count) {
        out.error = "malformed WordNet line in " + index_path;
        return out;
      }
      auto word = simple_word(fields[0]);
      if (word.empty())
        continue;
      const auto& term = term_of(word);
      if (term.empty())
        continue;
      // The synset offsets are the last `synset_count` fields, most
      // frequent sense first.
      auto first = fields.size() - synset_count;
      auto take = std::min<size_t>(synset_count, opts.senses);
      for (size_t i = 0; i < take; ++i) {
        uint32_t offset = 0;
        if (!parse_u32(fields[first + i], offset))
          continue;
        auto s = synsets.find(offset);
        if (s == synsets.end())
          continue;
        for (const auto& t : s->second)
          if (t != term && known(t))
            table[term].insert(t);
      }
    }
  }
  out.synonyms.reserve(table.size());
  for (auto& [term, set] : table)
    out.synonyms.emplace(term,
                         std::vector<std::string>(set.begin(), set.end()));
  return out;
}

} // namespace candor::data
