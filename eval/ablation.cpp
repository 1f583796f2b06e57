// The retrieval ablation: loading the labelled question set, recall@k and
// MRR, and the table of search modes by chunk size.

#include "eval/ablation.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <boost/json.hpp>

#include "data/retrieval/evidence.hpp"
#include "data/retrieval/ingest.hpp"
#include "domain/build_info.hpp"
#include "eval/calibrate.hpp"

namespace candor::eval {

namespace json = boost::json;

namespace {

domain::error invalid(std::string message) {
  return domain::make_error(domain::ec::config_invalid, std::move(message));
}

/// The string member `key` of `o`, or nullptr.
const json::string* string_member(const json::object& o, std::string_view key) {
  auto* v = o.if_contains(key);
  return v != nullptr ? v->if_string() : nullptr;
}

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

} // namespace

// -- labelled set -------------------------------------------------------------

std::string_view to_string(split_kind x) noexcept {
  return x == split_kind::calibration ? "calibration" : "test";
}

std::vector<const labelled_question*> labelled_set::of(split_kind s) const {
  std::vector<const labelled_question*> out;
  for (const auto& q : questions)
    if (q.split == s)
      out.push_back(&q);
  return out;
}

domain::outcome<labelled_set> parse_labelled_set(std::string_view text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec)
    return invalid("labelled set: not JSON: " + ec.message());
  auto* root = v.if_object();
  if (root == nullptr)
    return invalid("labelled set: not a JSON object");
  labelled_set out;
  if (auto* n = string_member(*root, "name"))
    out.name = std::string{*n};
  if (auto* cs = root->if_contains("chunkSize");
      cs && cs->is_int64() && cs->as_int64() > 0)
    out.chunk_size = static_cast<size_t>(cs->as_int64());
  auto* qs = root->if_contains("questions");
  if (qs == nullptr || !qs->is_array())
    return invalid("labelled set: no \"questions\" array");
  std::set<std::string> ids;
  for (const auto& item : qs->as_array()) {
    auto at = "labelled set: question " + std::to_string(out.questions.size());
    auto* o = item.if_object();
    if (o == nullptr)
      return invalid(at + " is not an object");
    labelled_question q;
    auto* id = string_member(*o, "id");
    auto* split = string_member(*o, "split");
    auto* text_v = string_member(*o, "question");
    auto* answerable = o->if_contains("answerable");
    if (!id || !split || !text_v || !answerable || !answerable->is_bool())
      return invalid(at + " needs id, split, question and answerable");
    q.id = std::string{*id};
    at = "labelled set: question " + q.id;
    if (!ids.insert(q.id).second)
      return invalid(at + " appears twice");
    if (*split == "calibration")
      q.split = split_kind::calibration;
    else if (*split == "test")
      q.split = split_kind::test;
    else
      return invalid(at + ": split must be calibration or test");
    q.question = std::string{*text_v};
    if (q.question.empty() || q.question.size() > 500)
      return invalid(at + ": question must have 1 to 500 bytes");
    q.answerable = answerable->as_bool();
    if (auto* k = string_member(*o, "kind"))
      q.kind = std::string{*k};
    if (auto* exp = o->if_contains("expected")) {
      if (!exp->is_array())
        return invalid(at + ": expected must be an array");
      for (const auto& e : exp->as_array()) {
        auto* eo = e.if_object();
        auto* doc = eo ? string_member(*eo, "doc") : nullptr;
        auto* section = eo ? string_member(*eo, "section") : nullptr;
        if (!doc || !section || doc->empty() || section->empty())
          return invalid(at + ": every expected item needs doc and section");
        expected_passage p{std::string{*doc}, std::string{*section}, {}};
        if (auto* cs = eo->if_contains("chunks"); cs && cs->is_array())
          for (const auto& c : cs->as_array())
            if (c.is_string())
              p.chunks.emplace_back(c.as_string());
        q.expected.push_back(std::move(p));
      }
    }
    if (q.answerable && q.expected.empty())
      return invalid(at + ": an answerable question needs expected passages");
    if (!q.answerable && !q.expected.empty())
      return invalid(at
                     + ": an unanswerable question has no expected "
                       "passages");
    out.questions.push_back(std::move(q));
  }
  return out;
}

domain::outcome<labelled_set> load_labelled_set(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return invalid("cannot read labelled set " + path);
  std::string text{std::istreambuf_iterator<char>{in},
                   std::istreambuf_iterator<char>{}};
  auto set = parse_labelled_set(text);
  if (!set)
    return invalid(path + ": " + set.err().message);
  return set;
}

std::string default_labelled_set_path() {
  return std::string{CANDOR_SOURCE_DIR} + "/eval/retrieval.v1.json";
}

// -- metrics ------------------------------------------------------------------

std::string_view section_of(std::string_view chunk_id) noexcept {
  auto dash = chunk_id.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == chunk_id.size())
    return chunk_id;
  for (auto i = dash + 1; i < chunk_id.size(); ++i)
    if (chunk_id[i] < '0' || chunk_id[i] > '9')
      return chunk_id;
  return chunk_id.substr(0, dash);
}

bool matches(const labelled_question& q, std::string_view chunk_id) {
  auto section = section_of(chunk_id);
  auto hash = section.find('#');
  if (hash == std::string_view::npos)
    return false;
  auto doc = section.substr(0, hash);
  auto sec = section.substr(hash + 1);
  for (const auto& e : q.expected)
    if (e.doc == doc && e.section == sec)
      return true;
  return false;
}

size_t first_match_rank(const labelled_question& q,
                        const std::vector<std::string>& ranked) {
  for (size_t i = 0; i < ranked.size(); ++i)
    if (matches(q, ranked[i]))
      return i + 1;
  return 0;
}

ranking_metrics ranking_quality(const std::vector<size_t>& ranks, size_t k) {
  ranking_metrics m;
  m.questions = ranks.size();
  if (ranks.empty())
    return m;
  double hits = 0;
  double rr = 0;
  for (auto r : ranks) {
    if (r > 0 && r <= k)
      hits += 1;
    if (r > 0)
      rr += 1.0 / static_cast<double>(r);
  }
  m.recall_at_k = hits / static_cast<double>(ranks.size());
  m.mrr = rr / static_cast<double>(ranks.size());
  return m;
}

// -- ablation -----------------------------------------------------------------

std::vector<std::string> ranked_ids(const data::retrieval_snapshot& snap,
                                    std::string_view question,
                                    data::search_mode mode, size_t depth) {
  std::vector<std::string> out;
  for (auto& h : snap.search(question, depth, mode))
    out.push_back(std::move(h.chunk_id));
  return out;
}

domain::outcome<std::shared_ptr<const data::retrieval_snapshot>>
build_snapshot(const std::string& kb_dir, size_t chunk_size,
               const data::retrieval_params& params) {
  data::chunk_options copts;
  copts.target_chars = chunk_size;
  auto chunks = data::chunk_directory(kb_dir, copts);
  if (!chunks)
    return chunks.err();
  auto thesaurus = data::read_kb_thesaurus(kb_dir);
  if (!thesaurus)
    return thesaurus.err();
  return data::retrieval_snapshot::build(std::move(*chunks), params,
                                         std::move(*thesaurus));
}

domain::outcome<ablation_report> run_ablation(const labelled_set& set,
                                              const ablation_options& opts) {
  ablation_report report;
  report.set_name = set.name;
  report.k = opts.k;
  report.measured = opts.measure;
  auto test = set.of(opts.measure);
  for (auto size : opts.chunk_sizes) {
    auto snap = build_snapshot(opts.kb_dir, size, opts.params);
    if (!snap)
      return snap.err();
    for (auto mode : opts.modes) {
      ablation_row row;
      row.mode = mode;
      row.chunk_size = size;
      row.chunks = (*snap)->size();
      std::vector<size_t> ranks;
      for (auto* q : test)
        if (q->answerable)
          ranks.push_back(
            first_match_rank(*q, ranked_ids(**snap, q->question, mode,
                                            std::max(opts.depth, opts.k))));
      row.ranking = ranking_quality(ranks, opts.k);
      auto cal = calibrate(
        score_split(**snap, set, split_kind::calibration, mode, opts.k));
      row.threshold = cal.threshold;
      row.calibration_accuracy = cal.best_accuracy;
      auto scored = score_split(**snap, set, opts.measure, mode, opts.k);
      row.test_questions = scored.size();
      row.refusal_accuracy = refusal_accuracy(scored, cal.threshold);
      row.meets_targets = row.ranking.recall_at_k >= target_recall
                          && row.ranking.mrr >= target_mrr
                          && row.refusal_accuracy >= target_refusal;
      report.rows.push_back(row);
    }
  }
  auto key = [](const ablation_row& r) {
    return r.ranking.recall_at_k + r.ranking.mrr + r.refusal_accuracy;
  };
  for (size_t i = 1; i < report.rows.size(); ++i) {
    const auto& a = report.rows[i];
    const auto& b = report.rows[report.winner];
    bool better = a.meets_targets != b.meets_targets ? a.meets_targets
                                                     : key(a) > key(b) + 1e-12;
    if (better)
      report.winner = i;
  }
  return report;
}

std::string explain_split(const data::retrieval_snapshot& snap,
                          const labelled_set& set, split_kind split,
                          data::search_mode mode, size_t k, size_t depth) {
  std::ostringstream out;
  for (const auto* q : set.of(split)) {
    auto hits = snap.search(q->question, std::max(depth, k), mode);
    std::vector<std::string> ids;
    for (const auto& h : hits)
      ids.push_back(h.chunk_id);
    auto top = hits;
    if (top.size() > k)
      top.resize(k);
    auto ev = data::evidence_details(snap, q->question, top);
    auto evidence = ev.score;
    std::string rank = "u";
    if (q->answerable) {
      auto r = first_match_rank(*q, ids);
      rank = r == 0 ? "-" : std::to_string(r);
    }
    out << q->id << " " << (q->answerable ? "A" : "U") << " rank " << rank
        << " ev " << fixed(evidence, 4) << " cos " << fixed(ev.cosine, 3)
        << " cov " << fixed(ev.coverage, 3) << " oov " << fixed(ev.oov_share, 3)
        << " type " << data::to_string(ev.type)
        << (ev.type_found ? "" : " (none stated)");
    for (const auto& m : ev.missing_names)
      out << " -name:" << m;
    out << " scores";
    for (const auto& h : top)
      out << " " << fixed(h.score, 3);
    out << " |";
    for (size_t i = 0; i < top.size(); ++i)
      out << " " << top[i].chunk_id;
    out << " | " << q->question << " | terms";
    // Each distinct query term with its BM25 IDF ("oov" when the corpus
    // never uses it) and where it occurs: "1" in the first hit, "k" only
    // in a lower one of the top k, "-" in none of them.
    std::vector<std::set<std::string>> present;
    for (const auto& h : top) {
      auto ts = data::analyze(data::indexed_text(snap.chunks()[h.index]),
                              snap.bm25().analysis());
      present.emplace_back(ts.begin(), ts.end());
    }
    std::set<std::string> seen;
    for (const auto& t : data::analyze(q->question, snap.bm25().analysis())) {
      if (!seen.insert(t).second)
        continue;
      auto v = snap.bm25().embed_query_terms({t});
      auto where = !present.empty() && present[0].count(t) ? "1" : "-";
      for (size_t i = 1; i < present.size() && *where == '-'; ++i)
        if (present[i].count(t))
          where = "k";
      out << " " << t << ":"
          << (v.size() > 0 ? fixed(snap.bm25().idf(v.index[0]), 1)
                           : std::string{"oov"})
          << ":" << where;
    }
    if (q->answerable && (rank == "-" || rank != "1")) {
      out << " | want";
      for (const auto& e : q->expected)
        out << " " << e.doc << "#" << e.section;
    }
    out << "\n";
  }
  return out.str();
}

std::string format_table(const ablation_report& report) {
  std::ostringstream out;
  auto k = std::to_string(report.k);
  out << "| mode   | chunk size | chunks | recall@" << k
      << " | MRR   | threshold | refusal acc. | targets |\n"
      << "|--------|-----------:|-------:|---------:|------:|----------:|"
         "-------------:|---------|\n";
  for (size_t i = 0; i < report.rows.size(); ++i) {
    const auto& r = report.rows[i];
    char line[256];
    std::snprintf(
      line, sizeof line,
      "| %-6s | %10zu | %6zu | %8s | %5s | %9s | %12s | %-7s |",
      std::string{data::to_string(r.mode)}.c_str(), r.chunk_size, r.chunks,
      fixed(r.ranking.recall_at_k, 3).c_str(), fixed(r.ranking.mrr, 3).c_str(),
      fixed(r.threshold, 4).c_str(), fixed(r.refusal_accuracy, 3).c_str(),
      r.meets_targets ? "met" : "missed");
    out << line << (i == report.winner ? " <- winner" : "") << "\n";
  }
  return out.str();
}

json::value to_json(const ablation_report& report) {
  json::array rows;
  for (size_t i = 0; i < report.rows.size(); ++i) {
    const auto& r = report.rows[i];
    rows.push_back(json::object{
      {"mode", std::string{data::to_string(r.mode)}},
      {"chunkSize", r.chunk_size},
      {"chunks", r.chunks},
      {"answerable", r.ranking.questions},
      {"recallAtK", r.ranking.recall_at_k},
      {"mrr", r.ranking.mrr},
      {"threshold", r.threshold},
      {"calibrationAccuracy", r.calibration_accuracy},
      {"refusalAccuracy", r.refusal_accuracy},
      {"testQuestions", r.test_questions},
      {"meetsTargets", r.meets_targets},
      {"winner", i == report.winner},
    });
  }
  return json::object{
    {"set", report.set_name},
    {"split", std::string{to_string(report.measured)}},
    {"k", report.k},
    {"targets", json::object{{"recallAtK", target_recall},
                             {"mrr", target_mrr},
                             {"refusalAccuracy", target_refusal}}},
    {"rows", std::move(rows)},
  };
}

} // namespace candor::eval
