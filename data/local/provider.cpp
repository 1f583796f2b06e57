// The local provider: routes with local_router, answers documents
// questions with extract_answer and data questions with the planner, each
// reply written in the contract of the prompt it stands in for.

#include "data/local/provider.hpp"

#include <boost/json.hpp>

#include "data/log.hpp"
#include "data/sales/catalog.hpp"
#include "domain/model/contracts.hpp"

namespace candor::data {

namespace json = boost::json;

// Whatever the local provider says in place of an unreachable model, the
// service recognises by this phrase (finalize adds it when it is missing).
static_assert(local_fallback_answer_note.find(domain::texts::no_model_reachable)
              != std::string_view::npos);
static_assert(local_fallback_data_note.find(domain::texts::no_model_reachable)
              != std::string_view::npos);

namespace {

std::shared_ptr<const planner> make_planner(const catalog& cat,
                                            const dimension_values& values,
                                            sql_dialect dialect) {
  if (cat.semantic_json().empty())
    return nullptr;
  auto p = planner::make(cat, values, dialect);
  if (!p) {
    // The server checks the semantic layer at startup (actors::app); a
    // catalog given here without one plans nothing.
    log_event(log_level::warn, "local_planner_unavailable",
              {{"reason", p.err().message}});
    return nullptr;
  }
  return std::make_shared<const planner>(std::move(*p));
}

std::string abstention(std::string reason) {
  if (reason.size() > 600) {
    reason.resize(596);
    while (!reason.empty() && (reason.back() & 0xC0) == 0x80)
      reason.pop_back();
    if (!reason.empty() && (reason.back() & 0x80) != 0)
      reason.pop_back();
    reason += " ...";
  }
  return json::serialize(
    json::object{{"sql", "NO_ANSWER"}, {"reason", std::move(reason)}});
}

} // namespace

local_provider::local_provider(const catalog& cat, snapshot_source snapshots,
                               local_settings settings)
    : router_(cat, settings.router), planner_(make_planner(cat, settings.values, settings.dialect)),
      snapshots_(std::move(snapshots)), settings_(settings) {
  settings_.extract.own_names.insert(router_.company_words().begin(),
                                     router_.company_words().end());
}

std::shared_ptr<const plan_result>
local_provider::plan(std::string_view question) const {
  std::string key{question};
  {
    std::lock_guard<std::mutex> guard{plans_->m};
    if (auto hit = plans_->by.find(key); hit != plans_->by.end())
      return hit->second;
  }
  auto made = std::make_shared<const plan_result>(planner_->plan(question));
  std::lock_guard<std::mutex> guard{plans_->m};
  if (plans_->by.size() >= plan_cache_size)
    plans_->by.clear();
  plans_->by.emplace(std::move(key), made);
  return made;
}

domain::outcome<local_route>
local_provider::route(const local_call& call) const {
  auto snap = snapshot();
  if (!snap)
    return domain::make_error(domain::ec::index_unavailable,
                              "no retrieval index is loaded");
  auto r = router_.decide(call.question, *snap, settings_.mode,
                          settings_.top_k, call.request_id);
  // A question the planner maps word by word onto the catalog (or
  // places outside the data's period) is a data question, unless the
  // documents answer it strongly and it names no period ("what margin
  // does a dealer get": a policy, not a sum).
  if (r.route != domain::route_kind::data && planner_ != nullptr) {
    auto kept = plan(call.question);
    const auto& planned = *kept;
    bool timed = !planned.p.periods.empty()
                 || planned.p.time_group != time_grain::none;
    bool docs_strong = r.evidence.score >= router_.options().docs_evidence;
    if ((planned.planned() && (timed || !docs_strong))
        || planned.refusal == plan_refusal::out_of_period) {
      r.route = domain::route_kind::data;
      r.reason = "the data planner reads every word of it from the "
                 "catalog ("
                 + planned.p.summary().substr(0, 120) + ")";
    }
  }
  return r;
}

std::string local_provider::standalone_of(const local_call& call) const {
  if (call.earlier == nullptr || call.earlier->empty() || planner_ == nullptr)
    return {};
  // The earlier questions read in turn (a chat client sends them as said),
  // then this one after them.
  const auto& xs = *call.earlier;
  std::string previous = xs.front();
  for (size_t i = 1; i < xs.size(); ++i) {
    auto read = follow_up_of(previous, xs[i], call);
    previous = read.empty() ? xs[i] : std::move(read);
  }
  return follow_up_of(previous, call.question, call);
}

std::string local_provider::follow_up_of(std::string_view previous,
                                         std::string_view said,
                                         const local_call& call) const {
  auto fu = planner_->resolve_follow_up(previous, said);
  if (fu.kind == follow_up_kind::standalone || fu.standalone == said)
    return {};
  // The previous plan changed by the follow-up, when the planner reads
  // the result whole.
  if (plan(fu.standalone)->planned())
    return fu.standalone;
  // Otherwise a question the documents answer on its own stays as said
  // ("and what is the warranty?" after a sales question); anything else
  // is read as the follow-up, so the planner's refusal names what it
  // could not map. (No scope: the retrieve node must not reuse this
  // search.)
  local_call alone = call;
  alone.question = said;
  alone.earlier = nullptr;
  alone.request_id = {};
  auto r = route(alone);
  if (r && r->route == domain::route_kind::docs)
    return {};
  return fu.standalone;
}

domain::outcome<std::string>
local_provider::router_reply(const local_call& call, bool data_only) const {
  auto standalone = standalone_of(call);
  local_call read = call;
  if (!standalone.empty())
    read.question = standalone;
  if (data_only && !plan(read.question)->planned())
    return domain::make_error(domain::ec::llm_unavailable,
                              "the planner does not read it whole");
  auto r = route(read);
  if (!r)
    return r.err();
  if (data_only && r->route != domain::route_kind::data)
    return domain::make_error(domain::ec::llm_unavailable,
                              "the local router does not route it to data");
  json::object o{{"route", domain::to_string(r->route)},
                 {"reason", r->reason}};
  if (!standalone.empty())
    o["standalone"] = standalone;
  return json::serialize(o);
}

std::optional<std::string>
local_provider::plan_first_reply(const local_call& call) const {
  if (planner_ == nullptr || call.fallback)
    return std::nullopt;
  bool router = call.prompt == "router";
  bool generate = call.prompt == "sql_generate";
  bool answer = call.prompt == "sql_answer";
  if (!(router || generate || answer))
    return std::nullopt;
  if (router) {
    auto r = router_reply(call, true);
    if (!r)
      return std::nullopt;
    return std::move(*r);
  }
  if (!plan(call.question)->planned())
    return std::nullopt;
  if (generate)
    return sql_generate_reply(call);
  // Only rows of the planner's own query (sql.plan is set by its reply).
  if (call.sql == nullptr || call.sql->plan.empty())
    return std::nullopt;
  return sql_answer_reply(call);
}

domain::outcome<std::string>
local_provider::reply(const local_call& call) const {
  if (call.prompt == "router")
    return router_reply(call, false);
  if (call.prompt == "rag_answer")
    return rag_reply(call);
  if (call.prompt == "sql_generate")
    return sql_generate_reply(call);
  if (call.prompt == "sql_answer")
    return sql_answer_reply(call);
  if (call.prompt == "sql_correct")
    return abstention(
      "The query planned from the catalog could not be run, and the local "
      "planner does not rewrite queries, so there is no answer.");
  return domain::make_error(domain::ec::llm_unavailable,
                            "the local provider does not answer the '"
                              + std::string{call.prompt} + "' prompt");
}

domain::outcome<std::string>
local_provider::rag_reply(const local_call& call) const {
  static const std::vector<domain::passage> none;
  const auto& passages = call.passages ? *call.passages : none;
  auto snap = snapshot();
  // The evidence the retrieve node computed for these passages (its
  // result is in the snapshot's memo under this request's id).
  double evidence = 0;
  if (snap && !passages.empty())
    evidence = retrieve_with_evidence(*snap, call.question, settings_.top_k,
                                      settings_.mode, call.request_id)
                 ->evidence.score;
  auto found = extract_answer(call.question, passages, snap.get(),
                              settings_.extract, passages_.get(), evidence);
  log_event(log_level::debug, "local_answer",
            {{"found", found.found},
             {"evidence", evidence},
             {"type", std::string{to_string(found.type)}},
             {"score", found.best.score},
             {"why", found.why},
             {"sentence", found.best.text.substr(0, 200)}});
  json::array cited;
  for (const auto& id : found.cited)
    cited.emplace_back(id);
  std::string answer;
  if (found.found) {
    answer = found.answer + "\n\n"
             + std::string{call.fallback ? local_fallback_answer_note
                                         : local_answer_note};
  } else {
    answer = "The passages found do not state the answer (" + found.why + ").";
  }
  return json::serialize(json::object{{"refused", false},
                                      {"confident", found.found},
                                      {"answer", std::move(answer)},
                                      {"citedChunkIds", std::move(cited)}});
}

std::string local_provider::sql_generate_reply(const local_call& call) const {
  if (!planner_)
    return abstention(std::string{local_data_reason});
  auto kept = plan(call.question);
  const auto& r = *kept;
  log_event(log_level::debug, "local_plan",
            {{"requestId", std::string{call.request_id}},
             {"planned", r.planned()},
             {"refusal", std::string{to_string(r.refusal)}},
             {"plan", r.p.summary()}});
  if (!r.planned())
    return abstention(r.message
                      + std::string{call.fallback ? local_fallback_planner_hint
                                                  : local_planner_hint});
  json::array follow;
  for (auto& f : planner_->follow_ups(r.p))
    follow.emplace_back(f);
  auto plan = r.p.summary();
  if (plan.size() > 400)
    plan.resize(400);
  return json::serialize(json::object{{"sql", r.p.sql},
                                      {"followUps", std::move(follow)},
                                      {"plan", std::move(plan)}});
}

std::string local_provider::sql_answer_reply(const local_call& call) const {
  static const domain::sql_block empty;
  const auto& sql = call.sql ? *call.sql : empty;
  std::string answer;
  json::array follow;
  if (planner_) {
    auto kept = plan(call.question);
    const auto& r = *kept;
    // Worded from the plan only when the plan is the query that ran.
    if (r.planned() && !sql.plan.empty()) {
      answer = planner_->word(r.p, sql.columns, sql.rows);
      for (auto& f : planner_->follow_ups(r.p))
        follow.emplace_back(f);
    }
  }
  if (answer.empty()) {
    // A query the planner did not write (a model's, answered locally in
    // its absence): the rows as they are.
    answer = "The query returned " + std::to_string(sql.row_count)
             + (sql.row_count == 1 ? " row" : " rows") + ": ";
    for (size_t i = 0; i < std::min<size_t>(sql.rows.size(), 5); ++i) {
      answer += i > 0 ? "; " : "";
      for (size_t c = 0; c < sql.rows[i].size(); ++c) {
        const auto& cell = sql.rows[i][c];
        answer += c > 0 ? ", " : "";
        answer += c < sql.columns.size() ? sql.columns[c] + " " : "";
        switch (cell.kind) {
          case domain::cell::integer: answer += std::to_string(cell.i); break;
          case domain::cell::real: answer += std::to_string(cell.r); break;
          case domain::cell::text: answer += cell.s; break;
          default: answer += "none";
        }
      }
    }
    answer += sql.rows.size() > 5 ? "; ... (see the table)." : ".";
  }
  if (follow.empty())
    follow.emplace_back("What else can I ask about the data?");
  if (answer.size() > 1800) {
    answer.resize(1790);
    while (!answer.empty() && (answer.back() & 0xC0) == 0x80)
      answer.pop_back();
    if (!answer.empty() && (answer.back() & 0x80) != 0)
      answer.pop_back();
    answer += " ...";
  }
  answer += "\n\n";
  answer += call.fallback ? local_fallback_data_note : local_data_note;
  return json::serialize(json::object{{"answer", std::move(answer)},
                                      {"followUps", std::move(follow)}});
}

} // namespace candor::data
