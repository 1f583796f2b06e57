// Query analysis for retrieval: the built-in thesaurus, its compiled form
// and the expansion of a question's phrases.

#include "data/retrieval/query.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include <boost/json.hpp>

namespace candor::data {

namespace {

/// Groups of phrases that mean the same in a customer's question about a
/// company's policies, the customer's wording first and the documents'
/// wording last; a phrase expands to the phrases after it in its group
/// (one way, so that a document word does not drag in loose variants).
/// Everyday synonyms and spelling variants, written from the calibration
/// split's misses and general knowledge. The words of one set of documents
/// (a gazetteer of the regions they ship to, their product names) are
/// theirs: `<kb>/thesaurus.json`, kept with the index (thesaurus_extension).
/// No entry is here that helps only test questions (see README, "Retrieval
/// ablation").
const std::vector<std::vector<const char*>> thesaurus_groups = {
  {"working day", "business day"},
  {"workday", "business day"},
  {"terminate", "end"},
  {"termination", "end"},
  {"start out", "founded"},
  {"set up", "founded"},
  {"distance", "range"},
  {"how far", "range"},
  {"friend", "someone else"},
  {"on my behalf", "someone else"},
  {"dangerous", "safety", "unsafe"},
  {"hazard", "safety"},
  {"shop", "store"},
  {"cost", "price"},
  {"fee", "price"},
  {"money back", "refund"},
  {"reimburse", "refund"},
  {"guarantee", "warranty"},
  {"guaranteed", "warranty"},
  {"quotation", "quote"},
  {"erase", "delete"},
  {"erased", "deleted"},
  {"remove my data", "delete"},
  {"purchase", "buy"},
  {"purchased", "bought"},
  {"package", "parcel"},
  {"broken", "faulty", "damaged"},
  {"bicycle", "bike"},
  {"child", "kid"},
  {"children", "kids"},
  {"telephone", "phone"},
  {"annual", "yearly"},
  {"lube", "lubricate"},
  {"e-mail", "email"},
  {"pick up", "collect"},
  {"uk", "united kingdom"},
  {"england", "united kingdom"},
  {"scotland", "united kingdom"},
  {"wales", "united kingdom"},
  {"rent", "rental"},
  {"hire", "rental"},
  {"put on hold", "reserve"},
  {"coupon", "discount code"},
  {"redelivered", "redelivery"},
  {"delivered", "delivery"},
  {"employ", "employees"},
  {"staff", "employees"},
  {"workers", "employees"},
  {"mend", "repair"},
  {"fix", "repair"},
  {"postcode", "zip code"},
  {"cheaper", "lower price"},
  {"hand in", "bring back"},
  {"give back", "return"},
  {"send back", "return"},
  {"take back", "return"},
  {"exchange", "swap"},
  {"trade in", "trade-in"},
  {"aged", "age"},
  {"years old", "age"},
  {"tall", "height"},
  {"heavy", "weight"},
  {"weigh", "weight"},
  {"delay", "late"},
  {"missing", "not received"},
  {"lost", "not received"},
  {"never arrived", "not received"},
  {"never got", "not received"},
};

} // namespace

using phrase = std::vector<std::string>;

/// The thesaurus analyzed with one set of options: each phrase, longest
/// first, with the index of its group.
struct compiled_thesaurus {
  std::vector<std::vector<phrase>> groups;
  struct entry {
    phrase terms;
    size_t group;
    size_t position; ///< in the group
  };
  /// Sorted by descending phrase length, then group order.
  std::vector<entry> phrases;
  /// Positions in `phrases` by the phrase's first term, each list in
  /// `phrases` order: a query term is only compared with the phrases
  /// that can start at it.
  std::unordered_map<std::string, std::vector<size_t>> by_first;
};

namespace {

compiled_thesaurus compile(const analyzer_options& opts,
                           const std::vector<std::vector<std::string>>& extra
                           = {}) {
  compiled_thesaurus t;
  auto add_group = [&](const auto& g) {
    std::vector<phrase> ps;
    for (const auto& p : g) {
      auto terms = analyze(p, opts);
      if (!terms.empty() && std::find(ps.begin(), ps.end(), terms) == ps.end())
        ps.push_back(std::move(terms));
    }
    if (ps.size() < 2)
      return;
    for (size_t i = 0; i + 1 < ps.size(); ++i)
      t.phrases.push_back({ps[i], t.groups.size(), i});
    t.groups.push_back(std::move(ps));
  };
  // The built-in groups first, then the documents' own.
  for (const auto& g : thesaurus_groups)
    add_group(g);
  for (const auto& g : extra)
    add_group(g);
  std::stable_sort(t.phrases.begin(), t.phrases.end(),
                   [](const auto& a, const auto& b) {
                     return a.terms.size() > b.terms.size();
                   });
  for (size_t i = 0; i < t.phrases.size(); ++i)
    t.by_first[t.phrases[i].terms.front()].push_back(i);
  return t;
}

const compiled_thesaurus& thesaurus(const analyzer_options& opts) {
  // One compiled copy per option combination, built once (thread-safe
  // static initialization), read-only afterwards.
  static const compiled_thesaurus all[4] = {
    compile(analyzer_options{false, false}),
    compile(analyzer_options{false, true}),
    compile(analyzer_options{true, false}),
    compile(analyzer_options{true, true}),
  };
  return all[(opts.stopwords ? 2 : 0) + (opts.stem ? 1 : 0)];
}

} // namespace

std::vector<std::string> analyzed_query::search_terms() const {
  std::vector<std::string> out = terms;
  std::set<std::string> seen(terms.begin(), terms.end());
  for (const auto& e : expansions)
    for (const auto& alt : e.alternatives)
      for (const auto& t : alt)
        if (seen.insert(t).second)
          out.push_back(t);
  return out;
}

analyzed_query analyze_query(std::string_view text,
                             const analyzer_options& opts,
                             const thesaurus_extension* extra) {
  analyzed_query q;
  q.terms = analyze(text, opts);
  const auto& th = extra != nullptr ? extra->compiled(opts) : thesaurus(opts);
  std::vector<bool> used(q.terms.size(), false);
  for (size_t i = 0; i < q.terms.size(); ++i) {
    if (used[i])
      continue;
    auto candidates = th.by_first.find(q.terms[i]);
    if (candidates == th.by_first.end())
      continue;
    for (auto at : candidates->second) {
      const auto& entry = th.phrases[at];
      const auto& p = entry.terms;
      if (i + p.size() > q.terms.size())
        continue;
      bool hit = true;
      for (size_t j = 0; j < p.size() && hit; ++j)
        hit = !used[i + j] && q.terms[i + j] == p[j];
      if (!hit)
        continue;
      query_expansion e;
      e.first = i;
      e.count = p.size();
      const auto& group = th.groups[entry.group];
      for (auto j = entry.position + 1; j < group.size(); ++j)
        e.alternatives.push_back(group[j]);
      for (size_t j = 0; j < p.size(); ++j)
        used[i + j] = true;
      q.expansions.push_back(std::move(e));
      break;
    }
  }
  return q;
}

prepared_question prepare_question(std::string_view text,
                                   const analyzer_options& opts,
                                   const thesaurus_extension* extra) {
  prepared_question q;
  q.text = text;
  q.options = opts;
  q.query = analyze_query(text, opts, extra);
  q.type = expected_answer_type(text);
  return q;
}

std::vector<std::string> named_terms(std::string_view text,
                                     const analyzer_options& opts) {
  std::vector<std::string> out;
  bool sentence_start = true;
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (!std::isalnum(c)) {
      if (c == '.' || c == '?' || c == '!' || c == ':' || c == ';')
        sentence_start = true;
      ++i;
      continue;
    }
    auto end = i;
    while (end < text.size()
           && std::isalnum(static_cast<unsigned char>(text[end])))
      ++end;
    auto word = text.substr(i, end - i);
    bool capital = std::isupper(c) && word.size() >= 2;
    if (capital && !sentence_start)
      for (auto& t : analyze(word, opts))
        if (std::find(out.begin(), out.end(), t) == out.end())
          out.push_back(std::move(t));
    sentence_start = false;
    i = end;
  }
  return out;
}

size_t thesaurus_size(const analyzer_options& opts) {
  return thesaurus(opts).groups.size();
}


// -- a set of documents' own groups -------------------------------------------

struct thesaurus_extension::compiled_set {
  compiled_thesaurus variants[4];
};

thesaurus_extension::thesaurus_extension(
  std::vector<std::vector<std::string>> groups, std::string json)
    : groups_(std::move(groups)), json_(std::move(json)) {
  auto set = std::make_shared<compiled_set>();
  for (int i = 0; i < 4; ++i)
    set->variants[i]
      = compile(analyzer_options{(i & 2) != 0, (i & 1) != 0}, groups_);
  compiled_ = std::move(set);
}

const compiled_thesaurus&
thesaurus_extension::compiled(const analyzer_options& opts) const {
  return compiled_->variants[(opts.stopwords ? 2 : 0) + (opts.stem ? 1 : 0)];
}

domain::outcome<std::shared_ptr<const thesaurus_extension>>
thesaurus_extension::parse(std::string_view json) {
  auto bad = [](const std::string& what) {
    return domain::make_error(domain::ec::config_invalid,
                              "thesaurus: " + what);
  };
  boost::system::error_code ec;
  auto doc = boost::json::parse(json, ec);
  if (ec)
    return bad("not valid JSON: " + ec.message());
  auto* groups = doc.is_object() ? doc.as_object().if_contains("groups")
                                 : nullptr;
  if (groups == nullptr || !groups->is_array())
    return bad("expected {\"groups\": [[\"phrase\", \"phrase\", ...], ...]}");
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < groups->as_array().size(); ++i) {
    auto& g = groups->as_array()[i];
    auto where = "groups[" + std::to_string(i) + "]";
    if (!g.is_array() || g.as_array().size() < 2)
      return bad(where + ": expected at least two phrases");
    std::vector<std::string> ps;
    for (auto& p : g.as_array()) {
      if (!p.is_string() || p.as_string().empty() || p.as_string().size() > 80)
        return bad(where + ": expected phrases of 1 to 80 bytes");
      ps.emplace_back(p.as_string());
    }
    out.push_back(std::move(ps));
  }
  if (out.size() > 5000)
    return bad("more than 5000 groups");
  return std::make_shared<const thesaurus_extension>(std::move(out),
                                                     std::string{json});
}

} // namespace candor::data
