// Computes the evidence score the documents branch's refusal threshold
// applies to, and its parts.

#include "data/retrieval/evidence.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "data/retrieval/query.hpp"

namespace candor::data {

namespace {

/// Every alternative phrase whose terms all occur in `terms`.
bool any_phrase_in(const std::vector<std::vector<std::string>>& phrases,
                   const retrieval_snapshot::chunk_terms& terms) {
  for (const auto& p : phrases)
    if (std::all_of(p.begin(), p.end(),
                    [&](const std::string& t) { return terms.contains(t); }))
      return true;
  return false;
}

/// A distinct query term: its weight and its thesaurus alternatives.
struct term_info {
  std::string term;
  double weight = 0;
  std::vector<std::vector<std::string>> alternatives;
};

/// The BM25 IDF of `term`, or `unseen` when the corpus never uses it.
double idf_or(const retrieval_snapshot& snap, const std::string& term,
              double unseen) {
  auto id = snap.bm25().term_id(term);
  return id ? snap.bm25().idf(*id) : unseen;
}

bool known(const retrieval_snapshot& snap, const std::string& term) {
  return snap.bm25().term_id(term).has_value();
}

} // namespace

evidence_features evidence_details(const retrieval_snapshot& snap,
                                   std::string_view query,
                                   const std::vector<search_hit>& hits,
                                   const evidence_options& opts) {
  if (hits.empty())
    return {};
  return evidence_details(
    snap, prepare_question(query, snap.tfidf().analysis(), snap.thesaurus()),
    hits, opts);
}

evidence_features evidence_details(const retrieval_snapshot& snap,
                                   const prepared_question& question,
                                   const std::vector<search_hit>& hits,
                                   const evidence_options& opts) {
  // For each hit: the TF-IDF cosine of the (expanded) question and the
  // passage, times the share of the question's informative terms the
  // passage contains (each distinct term weighted by its BM25 IDF; a term
  // the corpus never uses weighs most; a term counts as present when a
  // thesaurus equivalent of its phrase is). Only passages stating the
  // kind of answer the question asks for (a price, a weight, ...) count,
  // and one missing a name the question uses ("City Cruiser") counts less.
  // The best hit's product, times the share of the question's weight the
  // corpus knows at all: a passage must both resemble the question and
  // cover what it asks about, and a question about something no document
  // mentions ("CEO", "IBAN") is unanswerable however well its other words
  // match. In [0, 1]. Computed from the passages themselves, so it is the
  // same whichever mode ranked them.
  evidence_features out;
  if (hits.empty())
    return out;
  const auto& analysis = snap.tfidf().analysis();
  const auto& query = question.text;
  std::optional<analyzed_query> other;
  if (!(question.options == analysis))
    other = analyze_query(query, analysis, snap.thesaurus());
  const auto& q = other ? *other : question.query;
  if (q.terms.empty())
    return out;
  auto qvec = snap.tfidf().embed_query_terms(q.search_terms());
  std::vector<term_info> infos;
  auto n = static_cast<double>(std::max<size_t>(snap.size(), 1));
  auto unseen = std::log((n + 0.5) / 0.5);
  for (size_t i = 0; i < q.terms.size(); ++i) {
    const auto& t = q.terms[i];
    auto it = std::find_if(infos.begin(), infos.end(),
                           [&](const term_info& x) { return x.term == t; });
    if (it == infos.end()) {
      infos.push_back({t, std::max(idf_or(snap, t, unseen), 0.01), {}});
      it = infos.end() - 1;
    }
    for (const auto& e : q.expansions)
      if (i >= e.first && i < e.first + e.count)
        it->alternatives.insert(it->alternatives.end(), e.alternatives.begin(),
                                e.alternatives.end());
  }
  double total = 0;
  for (const auto& x : infos)
    total += x.weight;
  // Out-of-vocabulary share: the weight of the terms the corpus never
  // uses, neither themselves nor through a thesaurus alternative. Such a
  // term ("CEO", "IBAN", "torque") names something the documents do not
  // talk about at all, which a passage's other matches cannot make up for.
  double unknown = 0;
  for (const auto& x : infos) {
    bool alt_known = std::any_of(
      x.alternatives.begin(), x.alternatives.end(),
      [&](const std::vector<std::string>& p) {
        return std::all_of(p.begin(), p.end(), [&](const std::string& t) {
          return known(snap, t);
        });
      });
    if (!known(snap, x.term) && !alt_known)
      unknown += x.weight;
  }
  out.oov_share = unknown / total;
  out.type = opts.check_answer_type ? question.type : answer_type::none;
  // Names the question uses that the corpus knows and that are not on
  // nearly every page.
  std::vector<std::string> names;
  if (opts.name_penalty < 1)
    for (auto& t : named_terms(query, analysis))
      if (known(snap, t))
        names.push_back(std::move(t));
  out.type_found = false;
  double best = -1;
  for (size_t i = 0; i < hits.size(); ++i) {
    const auto& h = hits[i];
    if (h.index >= snap.size())
      continue;
    if (!mask_has(snap.answer_types(h.index), out.type))
      continue;
    out.type_found = true;
    const auto& present = snap.terms_of(h.index);
    auto cosine = dot(qvec, present.tfidf);
    double covered = 0;
    for (const auto& x : infos)
      if (present.contains(x.term) || any_phrase_in(x.alternatives, present))
        covered += x.weight;
    std::vector<std::string> missing;
    for (const auto& t : names)
      if (!present.contains(t))
        missing.push_back(t);
    auto coverage
      = covered / total * (missing.empty() ? 1.0 : opts.name_penalty);
    if (cosine * coverage > best) {
      best = cosine * coverage;
      out.best = i;
      out.cosine = cosine;
      out.coverage = coverage;
      out.missing_names = std::move(missing);
    }
  }
  out.score = std::max(0.0, out.cosine * out.coverage * (1 - out.oov_share));
  return out;
}

double evidence_score(const retrieval_snapshot& snap, std::string_view query,
                      const std::vector<search_hit>& hits,
                      const evidence_options& opts) {
  return evidence_details(snap, query, hits, opts).score;
}

std::shared_ptr<const retrieval_result>
retrieval_memo::find(std::string_view key) const {
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->first == key)
      return it->second;
  return nullptr;
}

void retrieval_memo::put(std::string key,
                         std::shared_ptr<const retrieval_result> value) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (entries_.size() >= capacity)
    entries_.erase(entries_.begin());
  entries_.emplace_back(std::move(key), std::move(value));
}

std::shared_ptr<const retrieval_result>
retrieve_with_evidence(const retrieval_snapshot& snap,
                       std::string_view question, size_t k, search_mode mode,
                       std::string_view scope) {
  std::string key{scope};
  key += '\0';
  key += question;
  key += '\0';
  key += std::to_string(k);
  key += '\0';
  key += std::to_string(static_cast<int>(mode));
  if (auto hit = snap.memo().find(key))
    return hit;
  auto q = prepare_question(question, snap.tfidf().analysis(), snap.thesaurus());
  auto out = std::make_shared<retrieval_result>();
  out->hits = snap.search(q, k, mode);
  out->evidence = evidence_details(snap, q, out->hits);
  snap.memo().put(std::move(key), out);
  return out;
}

} // namespace candor::data
