// The local provider's router: a data score from the catalog's vocabulary
// and a few function words, the documents' evidence from retrieval, and
// four rules in a fixed order.

#include "data/local/router.hpp"
#include "data/local/router_words.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "data/retrieval/embedder.hpp"
#include "data/retrieval/query.hpp"
#include "data/sales/catalog.hpp"


namespace candor::data {

using namespace router_words;

namespace {


/// Most a kind can add (or take away): many cues of one kind are one cue.
double kind_cap(std::string_view kind) {
  if (kind == "metric")
    return 3.0;
  if (kind == "time" || kind == "dimension")
    return 1.5;
  if (kind == "aggregate")
    return 2.5;
  if (kind == "customer")
    return -1.5;
  if (kind == "policy")
    return -2.0;
  return 1.0; // table, value, we
}

/// A light singular: "orders" -> "order", "sales" -> "sale"; words of
/// three letters or fewer and "-ss" words are kept.
std::string singular(std::string w) {
  if (w.size() > 3 && w.back() == 's' && w[w.size() - 2] != 's'
      && w[w.size() - 2] != 'u' && w[w.size() - 2] != 'i')
    w.pop_back();
  return w;
}

std::vector<std::string> normalized_words(std::string_view text) {
  auto words = plain_words(text);
  for (auto& w : words)
    w = singular(std::move(w));
  return words;
}

bool is_year(const std::string& w) {
  return w.size() == 4 && (w.rfind("19", 0) == 0 || w.rfind("20", 0) == 0)
         && std::all_of(w.begin(), w.end(), [](char c) {
              return std::isdigit(static_cast<unsigned char>(c));
            });
}

std::string format_score(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

std::string cue_list(const std::vector<data_cue>& cues, bool positive) {
  std::string out;
  for (const auto& c : cues) {
    if ((c.weight > 0) != positive)
      continue;
    if (!out.empty())
      out += ", ";
    out += "'" + c.text + "'";
    if (out.size() > 90)
      break;
  }
  return out;
}


/// The word that addresses the question to the company (a person
/// speaking to it or about it, or the company's name), or empty.
std::string addressed_to_company(
  std::string_view question,
  const std::set<std::string, std::less<>>& company_words) {
  static const std::set<std::string, std::less<>> persons{
    "you", "your", "u", "ur", "we", "our", "us"};
  for (const auto& w : plain_words(question))
    if (persons.count(w) || company_words.count(w))
      return w;
  return {};
}


/// Whether `question` starts with one of `task_openers`.
std::string task_opener(std::string_view question) {
  auto words = plain_words(question);
  // A polite start does not change the request: "can you recommend",
  // "please write", "help me draft".
  static const char* const polite[]
    = {"can you", "could you", "would you",     "will you",
       "please",  "help me",   "i want you to", "i need you to"};
  for (bool again = true; again;) {
    again = false;
    for (const auto* p : polite) {
      auto pw = plain_words(p);
      if (pw.size() < words.size()
          && std::equal(pw.begin(), pw.end(), words.begin())) {
        words.erase(words.begin(), words.begin() + pw.size());
        again = true;
      }
    }
  }
  for (const auto* opener : task_openers) {
    auto want = plain_words(opener);
    if (want.size() <= words.size()
        && std::equal(want.begin(), want.end(), words.begin()))
      return opener;
  }
  return {};
}

/// The first name in `question` (capitalised words that do not start a
/// sentence, "Canyon", "Champions League"; a number inside continues it,
/// "Canal 8 Belt") of which neither the documents nor `known` use any
/// word, and that does not follow a place preposition; empty if none. A
/// question about such a name is about another company or the world.
std::string unknown_name(std::string_view question,
                         const retrieval_snapshot& snap,
                         const std::set<std::string, std::less<>>& known) {
  struct token {
    std::string text;
    bool starts_sentence = false;
  };
  std::vector<token> tokens;
  bool sentence_start = true;
  std::string word;
  for (size_t i = 0; i <= question.size(); ++i) {
    char c = i < question.size() ? question[i] : ' ';
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80
        || ((c == '-' || c == '+' || c == '\'') && !word.empty())) {
      word += c;
      continue;
    }
    if (!word.empty()) {
      tokens.push_back({std::move(word), sentence_start});
      sentence_start = false;
      word.clear();
    }
    if (c == '.' || c == '?' || c == '!' || c == ':' || c == '"')
      sentence_start = true;
  }
  auto capitalised = [](const token& t) {
    return t.text.size() >= 2 && !t.starts_sentence
           && std::isupper(static_cast<unsigned char>(t.text[0]));
  };
  auto is_known = [&](const std::string& w) {
    auto lower = plain_words(w);
    if (lower.empty() || known.count(lower.front()))
      return true;
    auto terms = analyze(w, snap.bm25().analysis());
    return terms.empty()
           || std::any_of(terms.begin(), terms.end(),
                          [&](const std::string& t) {
                            return snap.bm25().term_id(t).has_value();
                          });
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!capitalised(tokens[i]))
      continue;
    size_t end = i + 1;
    while (end < tokens.size()
           && (capitalised(tokens[end])
               || std::isdigit(static_cast<unsigned char>(tokens[end].text[0])))
           && !tokens[end].starts_sentence)
      ++end;
    auto before
      = i > 0 ? plain_words(tokens[i - 1].text) : std::vector<std::string>{};
    bool place = !before.empty() && place_prepositions.count(before.front());
    bool any_known = false;
    std::string name;
    for (size_t k = i; k < end; ++k) {
      name += (k > i ? " " : "") + tokens[k].text;
      if (capitalised(tokens[k]) && is_known(tokens[k].text))
        any_known = true;
    }
    if (!place && !any_known)
      return name;
    i = end - 1;
  }
  return {};
}

} // namespace

std::vector<std::string> plain_words(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && (cur.back() == '-' || cur.back() == '\''))
      cur.pop_back();
    if (!cur.empty())
      out.push_back(std::move(cur));
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (std::isalnum(c)) {
      cur += static_cast<char>(std::tolower(c));
    } else if ((c == '-' || c == '\'') && !cur.empty()) {
      cur += static_cast<char>(c);
    } else if (c == 0xE2 && i + 2 < text.size()
               && static_cast<unsigned char>(text[i + 1]) == 0x80
               && static_cast<unsigned char>(text[i + 2]) == 0x99) {
      cur += '\''; // a typographic apostrophe
      i += 2;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

local_router::local_router(const catalog& cat, local_router_options opts)
    : opts_(opts) {
  auto world = read_world_words(cat);
  std::set<std::string> seen;
  auto add = [&](std::string_view text, std::string kind, double weight) {
    std::string spaced{text};
    std::replace(spaced.begin(), spaced.end(), '_', ' ');
    auto words = normalized_words(spaced);
    if (words.empty())
      return;
    std::string key;
    for (const auto& w : words)
      key += (key.empty() ? "" : " ") + w;
    if (!seen.insert(key).second)
      return;
    if (shared_words.count(key) || world.shared.count(key))
      weight = std::min(weight, 0.5);
    phrases_.push_back({std::move(words), std::move(kind), weight});
  };
  for (const auto& m : cat.metrics()) {
    add(m.name, "metric", 2.0);
    for (const auto& s : m.synonyms)
      add(s, "metric", 2.0);
  }
  for (const auto& c : builtin_cues)
    add(c.words, c.kind, c.weight);
  for (const auto& t : cat.tables()) {
    add(t.name, "table", 1.0);
    for (const auto& s : t.synonyms)
      add(s, "table", 1.0);
    for (const auto& col : t.columns) {
      for (const auto& s : col.synonyms)
        add(s, "dimension", 1.0);
      for (const auto& v : col.values)
        if (v.size() > 2) // two-letter codes are English words ("it")
          add(v, "value", 0.5);
    }
  }
  for (const auto& name : world.value_names)
    add(name, "value", 0.5);
  company_words_ = std::move(world.company);
  heading_words_.assign(generic_heading_words.begin(),
                        generic_heading_words.end());
  heading_words_.insert(heading_words_.end(), world.heading_words.begin(),
                        world.heading_words.end());
  for (const auto& w : heading_words_)
    for (auto& t : analyze(w, analyzer_options{}))
      generic_stems_.insert(std::move(t));
  for (const auto& p : phrases_)
    known_words_.insert(p.words.begin(), p.words.end());
  // Longest phrases first, so "best selling" wins over "selling".
  std::stable_sort(phrases_.begin(), phrases_.end(),
                   [](const phrase& a, const phrase& b) {
                     return a.words.size() > b.words.size();
                   });
  for (size_t i = 0; i < phrases_.size(); ++i)
    by_first_word_[phrases_[i].words.front()].push_back(i);
}

std::vector<data_cue> local_router::data_cues(std::string_view question) const {
  auto words = normalized_words(question);
  std::vector<bool> used(words.size(), false);
  std::vector<data_cue> cues;
  std::map<std::string, double> per_kind;
  auto take = [&](data_cue cue) {
    auto cap = kind_cap(cue.kind);
    auto& sum = per_kind[cue.kind];
    auto room = cap - sum; // what the kind may still add (same sign as cap)
    cue.weight
      = cap >= 0 ? std::min(cue.weight, room) : std::max(cue.weight, room);
    if (cue.weight == 0)
      return;
    sum += cue.weight;
    cues.push_back(std::move(cue));
  };
  for (size_t i = 0; i < words.size(); ++i) {
    if (used[i])
      continue;
    if (is_year(words[i])) {
      used[i] = true;
      take({"time", words[i], 1.0});
      continue;
    }
    auto bucket = by_first_word_.find(words[i]);
    if (bucket == by_first_word_.end())
      continue;
    for (auto index : bucket->second) {
      const auto& p = phrases_[index];
      auto n = p.words.size();
      if (i + n > words.size())
        continue;
      bool match = true;
      for (size_t k = 0; k < n && match; ++k)
        match = !used[i + k] && words[i + k] == p.words[k];
      if (!match)
        continue;
      std::string text;
      for (size_t k = 0; k < n; ++k) {
        used[i + k] = true;
        text += (k ? " " : "") + words[i + k];
      }
      take({p.kind, std::move(text), p.weight});
      break;
    }
  }
  return cues;
}

std::string local_router::subject_term(std::string_view question,
                                       const retrieval_snapshot& snap) const {
  const auto& analysis = snap.bm25().analysis();
  std::set<std::string, std::less<>> recomputed;
  const auto* generic = &generic_stems_;
  if (!(analysis == analyzer_options{})) {
    for (const auto& w : heading_words_)
      for (auto& t : analyze(w, analysis))
        recomputed.insert(std::move(t));
    generic = &recomputed;
  }
  // Word by word, so that the reason quotes the question's own word
  // ("delivery"), not its stem.
  for (const auto& w : plain_words(question))
    for (const auto& t : analyze(w, analysis)) {
      if (std::all_of(t.begin(), t.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          }))
        continue;
      if (!generic->count(t) && snap.in_titles_or_headings(t))
        return w;
    }
  return {};
}

local_route local_router::decide(std::string_view question,
                                 const retrieval_snapshot& snap,
                                 search_mode mode, size_t top_k,
                                 std::string_view scope) const {
  local_route out;
  out.cues = data_cues(question);
  for (const auto& c : out.cues)
    out.data_score += c.weight;
  // A strong data score with no unknown name and no task decides data
  // whatever the documents say (the rules below, in order), so the search
  // is not needed.
  if (out.data_score >= opts_.data_strong
      && unknown_name(question, snap, known_words_).empty()
      && task_opener(question).empty()) {
    out.route = domain::route_kind::data;
    out.reason = "the catalog covers it (score "
                 + format_score(out.data_score) + ": "
                 + cue_list(out.cues, true) + ")";
    if (out.reason.size() > 200)
      out.reason = out.reason.substr(0, 196) + "...)";
    return out;
  }
  // The retrieve node will find this result in the snapshot's memo.
  auto found = retrieve_with_evidence(snap, question,
                                      std::max<size_t>(top_k, 1), mode, scope);
  const auto& hits = found->hits;
  out.evidence = found->evidence;
  const auto& ev = out.evidence;
  std::string where;
  if (!hits.empty() && ev.best < hits.size()
      && hits[ev.best].index < snap.chunks().size()) {
    const auto& c = snap.chunks()[hits[ev.best].index];
    where = " in '" + c.heading.substr(0, 60) + "'";
  }
  auto data_words = cue_list(out.cues, true);
  auto route = [&](domain::route_kind r, std::string why) {
    out.route = r;
    out.reason = std::move(why);
  };
  auto data_reason = [&] {
    return "the catalog covers it (score " + format_score(out.data_score)
           + ": " + data_words + ")";
  };
  bool strong_docs = ev.score >= opts_.docs_evidence;
  std::string name, task, subject, addressed;
  if (!strong_docs
      && !(name = unknown_name(question, snap, known_words_)).empty()) {
    route(domain::route_kind::out_of_scope,
          "it names '" + name
            + "', which neither the documents nor the catalog know: "
              "another company's business or a general question");
  } else if (!strong_docs && !(task = task_opener(question)).empty()) {
    route(domain::route_kind::out_of_scope,
          "it asks for a task ('" + task
            + "'), not about the company's documents or sales");
  } else if (out.data_score >= opts_.data_strong) {
    route(domain::route_kind::data, data_reason());
  } else if (strong_docs) {
    route(domain::route_kind::docs, "the documents match it (evidence "
                                      + format_score(ev.score) + where + ")");
  } else if (out.data_score >= opts_.data_weak) {
    route(domain::route_kind::data, data_reason());
  } else if (!(subject = subject_term(question, snap)).empty()) {
    route(domain::route_kind::docs,
          "it asks about '" + subject
            + "', a subject the documents' headings name (evidence "
            + format_score(ev.score) + where + ")");
  } else if (!hits.empty() && ev.score >= opts_.docs_floor
             && !(addressed = addressed_to_company(question, company_words_)).empty()) {
    route(domain::route_kind::docs,
          "it is addressed to the company ('" + addressed
            + "'), though the documents match it weakly (evidence "
            + format_score(ev.score) + ")");
  } else {
    route(domain::route_kind::out_of_scope,
          "neither the documents (evidence " + format_score(ev.score)
            + ") nor the catalog (score " + format_score(out.data_score)
            + ") cover it");
  }
  if (out.reason.size() > 200)
    out.reason = out.reason.substr(0, 196) + "...)";
  return out;
}

} // namespace candor::data
