// The local provider's extractive answerer: splits the retrieved passages
// into sentences, scores each against the question's weighted terms and
// its expected answer type, and quotes the best one.

#include "data/local/extract.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "data/retrieval/index_store.hpp"
#include "data/retrieval/query.hpp"
#include "domain/guard/sanitizer.hpp"

namespace candor::data {

namespace {

const std::set<std::string, std::less<>> abbreviations{
  "e.g", "i.e", "etc", "approx", "no", "incl", "excl", "min", "max",
  "vs",  "mr",  "mrs", "dr",     "st", "nr",   "tel",  "ca",  "art"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

/// `s` without Markdown emphasis markers ("**", "__").
std::string without_emphasis(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i + 1 < s.size() && (s[i] == '*' || s[i] == '_') && s[i + 1] == s[i]) {
      ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

/// A list item or table row without its marker; table cells joined.
std::string clean_line(std::string_view line) {
  line = trim(line);
  if (line.size() > 1 && (line[0] == '-' || line[0] == '*' || line[0] == '+')
      && line[1] == ' ')
    line = trim(line.substr(2));
  if (!line.empty() && line.front() == '|') {
    std::string out;
    size_t pos = 1;
    while (pos < line.size()) {
      auto end = line.find('|', pos);
      if (end == std::string_view::npos)
        end = line.size();
      auto cell = trim(line.substr(pos, end - pos));
      if (!cell.empty() && cell.find_first_not_of("-: ") != std::string::npos)
        out += (out.empty() ? "" : " | ") + std::string{cell};
      pos = end + 1;
    }
    return out;
  }
  return std::string{line};
}

/// The word just before position `dot` (lower case, letters and dots).
std::string word_before(std::string_view s, size_t dot) {
  size_t b = dot;
  while (
    b > 0
    && (std::isalpha(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '.'))
    --b;
  std::string w{s.substr(b, dot - b)};
  for (auto& c : w)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return w;
}

void split_line(std::string_view line, std::vector<std::string>& out) {
  size_t start = 0;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    char c = line[i];
    if (c != '.' && c != '!' && c != '?')
      continue;
    if (line[i + 1] != ' ')
      continue;
    size_t j = i + 1;
    while (j < line.size() && line[j] == ' ')
      ++j;
    if (j >= line.size())
      break;
    auto next = static_cast<unsigned char>(line[j]);
    bool starts = std::isupper(next) || std::isdigit(next) || next == '"'
                  || next == '(' || next >= 0x80;
    if (!starts)
      continue;
    if (c == '.' && abbreviations.count(word_before(line, i)))
      continue;
    auto s = trim(line.substr(start, i + 1 - start));
    if (!s.empty())
      out.emplace_back(s);
    start = j;
  }
  auto rest = trim(line.substr(start));
  if (!rest.empty())
    out.emplace_back(rest);
}

struct weighted_term {
  std::string term;
  double weight = 1;
  /// Thesaurus phrases equivalent to a phrase holding this term.
  std::vector<std::vector<std::string>> alternatives;
};

std::vector<weighted_term> question_terms(std::string_view question,
                                          const retrieval_snapshot* snap) {
  analyzer_options opts = snap ? snap->tfidf().analysis() : analyzer_options{};
  auto q = analyze_query(question, opts, snap ? snap->thesaurus() : nullptr);
  std::vector<weighted_term> out;
  double unseen = 1.0;
  if (snap)
    unseen = std::log(1.0 + static_cast<double>(snap->size()));
  for (size_t i = 0; i < q.terms.size(); ++i) {
    const auto& t = q.terms[i];
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const weighted_term& w) { return w.term == t; });
    if (it == out.end()) {
      weighted_term w;
      w.term = t;
      if (snap) {
        auto id = snap->bm25().term_id(t);
        w.weight = std::max(id ? snap->bm25().idf(*id) : unseen, 0.05);
      }
      out.push_back(std::move(w));
      it = out.end() - 1;
    }
    for (const auto& e : q.expansions)
      if (i >= e.first && i < e.first + e.count)
        for (const auto& alt : e.alternatives)
          it->alternatives.push_back(alt);
  }
  return out;
}

bool holds(const std::set<std::string>& terms, const weighted_term& t) {
  if (terms.count(t.term))
    return true;
  for (const auto& alt : t.alternatives)
    if (!alt.empty()
        && std::all_of(alt.begin(), alt.end(),
                       [&](const std::string& a) { return terms.count(a); }))
      return true;
  return false;
}

std::set<std::string> term_set(std::string_view text,
                               const retrieval_snapshot* snap) {
  analyzer_options opts = snap ? snap->tfidf().analysis() : analyzer_options{};
  auto v = analyze(text, opts);
  return {v.begin(), v.end()};
}

bool continues(std::string_view next) {
  for (std::string_view w :
       {"This ", "That ", "It ", "They ", "These ", "Those ", "Then ",
        "However", "But ", "Otherwise", "If so", "In that case"})
    if (next.rfind(w, 0) == 0)
      return true;
  return false;
}

/// Lower-case ASCII words of `text`.
std::vector<std::string> lower_words(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    auto c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (std::isalnum(c) || c == '_') {
      cur += static_cast<char>(std::tolower(c));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  return out;
}

/// Whether the question asks for a name ("Which brand ...?", "What is X
/// called?", "What's the name of ..."): answered only by a sentence that
/// states one.
bool asks_for_name(std::string_view question) {
  auto w = lower_words(question);
  if (w.empty())
    return false;
  if (w.front() == "which")
    return true;
  if (w.back() == "called" && (w.front() == "what" || w.front() == "what's"))
    return true;
  for (size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == "name" && w[i + 1] == "of")
      return true;
  return false;
}

/// Whether a question with no other answer type asks for an amount
/// ("What credit limit ...?", "What is the minimum order value ...?"):
/// answered only by a sentence stating money or a percentage.
bool asks_for_amount(std::string_view question) {
  static const std::set<std::string, std::less<>> amounts{
    "value",  "limit",   "fee",      "fees",       "price",  "cost",  "charge",
    "amount", "deposit", "interest", "commission", "margin", "spend", "rate"};
  auto w = lower_words(question);
  if (w.empty() || (w.front() != "what" && w.front() != "how"))
    return false;
  return std::any_of(w.begin(), w.end(),
                     [](const std::string& x) { return amounts.count(x) > 0; });
}

/// Whether `sentence` states a name the question does not already use: a
/// word written with a capital that does not start the sentence, or a
/// code mixing letters with digits or '_' ("EN 1078", "ksw_lang"). The
/// company's own name (`own_names`, lower case) does not count.
bool states_name(std::string_view sentence,
                 const std::set<std::string>& question_words,
                 const std::set<std::string, std::less<>>& own_names) {
  bool first = true;
  std::string cur;
  bool capital = false, digit = false, letter = false, underscore = false;
  auto check = [&]() {
    bool name = false;
    if (!cur.empty()) {
      std::string lower;
      for (char c : cur)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      bool code = (letter && digit) || underscore;
      name = ((capital && !first) || code) && !own_names.count(lower)
             && lower.size() > 1 && !question_words.count(lower);
      first = false;
    }
    cur.clear();
    capital = digit = letter = underscore = false;
    return name;
  };
  for (size_t i = 0; i <= sentence.size(); ++i) {
    auto c
      = i < sentence.size() ? static_cast<unsigned char>(sentence[i]) : ' ';
    if (std::isalnum(c) || c == '_') {
      if (cur.empty())
        capital = std::isupper(c);
      digit = digit || std::isdigit(c);
      letter = letter || std::isalpha(c);
      underscore = underscore || c == '_';
      cur += static_cast<char>(c);
      continue;
    }
    if (check())
      return true;
  }
  return false;
}

std::string where_of(const domain::passage& p) {
  if (p.heading.empty() || p.heading == p.doc_title)
    return p.doc_title;
  return p.doc_title + " \xE2\x80\xBA " + p.heading;
}

} // namespace

std::vector<std::string> split_sentences(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    auto line = without_emphasis(clean_line(text.substr(pos, end - pos)));
    // The sanitizer's marker ends the sentence before it and is never
    // quoted: what it replaced is gone, and the marker is no answer.
    std::string_view rest{line};
    for (auto at = rest.find(domain::redaction_marker);
         at != std::string_view::npos;
         at = rest.find(domain::redaction_marker)) {
      split_line(trim(rest.substr(0, at)), out);
      rest.remove_prefix(at + domain::redaction_marker.size());
    }
    rest = trim(rest);
    if (!rest.empty())
      split_line(rest, out);
    pos = end + 1;
  }
  return out;
}

analysed_passage analyse_passage(const domain::passage& p,
                                 const retrieval_snapshot* snap) {
  analysed_passage a;
  a.text = p.text;
  a.heading = p.heading;
  a.doc_title = p.doc_title;
  a.options = snap ? snap->tfidf().analysis() : analyzer_options{};
  a.sentences = split_sentences(p.text);
  a.terms.reserve(a.sentences.size());
  a.types.reserve(a.sentences.size());
  for (const auto& s : a.sentences) {
    a.terms.push_back(term_set(s, snap));
    a.types.push_back(answer_type_mask(s));
  }
  a.context = term_set(p.heading + " " + p.doc_title, snap);
  return a;
}

std::shared_ptr<const analysed_passage>
passage_cache::get(const domain::passage& p, const retrieval_snapshot* snap) {
  auto options = snap ? snap->tfidf().analysis() : analyzer_options{};
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = entries_.find(p.chunk_id);
    if (it != entries_.end() && it->second->text == p.text
        && it->second->heading == p.heading
        && it->second->doc_title == p.doc_title
        && it->second->options == options)
      return it->second;
  }
  auto fresh
    = std::make_shared<const analysed_passage>(analyse_passage(p, snap));
  std::lock_guard<std::mutex> guard{mutex_};
  if (entries_.size() >= capacity_)
    entries_.clear();
  entries_[p.chunk_id] = fresh;
  return fresh;
}

extracted_answer extract_answer(std::string_view question,
                                const std::vector<domain::passage>& passages,
                                const retrieval_snapshot* snap,
                                const extract_options& opts,
                                passage_cache* cache, double evidence) {
  extracted_answer out;
  out.type = expected_answer_type(question);
  for (const auto& p : passages) {
    auto near = "\xE2\x80\x9C" + where_of(p) + "\xE2\x80\x9D";
    if (std::find(out.nearest.begin(), out.nearest.end(), near)
        == out.nearest.end())
      out.nearest.push_back(std::move(near));
  }
  auto terms = question_terms(question, snap);
  double total = 0;
  for (const auto& t : terms)
    total += t.weight;
  if (terms.empty() || total <= 0) {
    out.why = "the question has no words to look for";
    return out;
  }

  bool wants_name = out.type == answer_type::none && asks_for_name(question);
  bool wants_amount
    = out.type == answer_type::none && !wants_name && asks_for_amount(question);
  std::set<std::string> asked;
  if (wants_name)
    for (auto& w : lower_words(question))
      asked.insert(std::move(w));
  std::vector<std::shared_ptr<const analysed_passage>> analysed;
  analysed.reserve(passages.size());
  for (const auto& p : passages)
    analysed.push_back(cache ? cache->get(p, snap)
                             : std::make_shared<const analysed_passage>(
                               analyse_passage(p, snap)));
  std::vector<scored_sentence> scored;
  for (size_t pi = 0; pi < passages.size(); ++pi) {
    const auto& a = *analysed[pi];
    for (size_t si = 0; si < a.sentences.size(); ++si) {
      const auto& s = a.sentences[si];
      if (s.size() < 12 || s.size() > opts.max_sentence_chars
          || s.back() == '?')
        continue;
      const auto& own = a.terms[si];
      double got = 0;
      for (const auto& t : terms)
        got += holds(own, t)         ? t.weight
               : holds(a.context, t) ? t.weight * opts.heading_credit
                                     : 0.0;
      scored_sentence sc; // its text is copied for the chosen one only
      sc.passage = pi;
      sc.sentence = si;
      // Ties go to the better-ranked passage.
      sc.score = got / total - 0.001 * static_cast<double>(pi);
      sc.type_ok
        = mask_has(a.types[si], out.type)
          && (!wants_name || states_name(s, asked, opts.own_names))
          && (!wants_amount || mask_has(a.types[si], answer_type::money)
              || mask_has(a.types[si], answer_type::percentage));
      scored.push_back(std::move(sc));
    }
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const scored_sentence& a, const scored_sentence& b) {
                     return a.score > b.score;
                   });
  auto best = std::find_if(scored.begin(), scored.end(),
                           [](const scored_sentence& s) { return s.type_ok; });
  if (best == scored.end()) {
    out.why = scored.empty()
                ? "the passages hold no sentence to quote"
                : "no sentence states "
                    + (wants_name     ? std::string{"a name"}
                       : wants_amount ? std::string{"an amount"}
                                      : std::string{to_string(out.type)});
    return out;
  }
  out.best = *best;
  out.best.text = analysed[best->passage]->sentences[best->sentence];
  auto needed
    = out.type == answer_type::none ? opts.min_score : opts.min_score_typed;
  if (evidence >= opts.strong_evidence)
    needed = std::min(needed, opts.min_score_strong);
  if (best->score < needed) {
    out.why = "no sentence covers enough of the question";
    return out;
  }

  // The quote: the sentence, the list after a ':', or one sentence that
  // continues it.
  const auto& p = passages[best->passage];
  const auto& all = analysed[best->passage]->sentences;
  auto at = all.begin() + static_cast<std::ptrdiff_t>(best->sentence);
  std::string quote = out.best.text;
  if (quote.back() == ':') {
    for (auto it = at + 1; it != all.end() && it - at <= 6; ++it)
      quote += (it == at + 1 ? " " : "; ") + *it;
  } else if (at + 1 != all.end() && continues(*(at + 1))) {
    quote += " " + *(at + 1);
  }
  if (quote.size() > 1500)
    quote = quote.substr(0, quote.rfind(' ', 1500)) + " \xE2\x80\xA6";
  out.found = true;
  out.cited.push_back(p.chunk_id);
  out.answer = "\xE2\x80\x9C" + quote + "\xE2\x80\x9D (" + where_of(p) + ")";
  return out;
}

} // namespace candor::data
