// The local provider: routes with local_router, answers documents
// questions with extract_answer, and abstains on data questions, each
// reply written in the contract of the prompt it stands in for.

#include "data/local/provider.hpp"

#include <boost/json.hpp>

#include "data/log.hpp"
#include "domain/model/contracts.hpp"

namespace candor::data {

namespace json = boost::json;

// Whatever the local provider says in place of an unreachable model, the
// service recognises by this phrase (finalize adds it when it is missing).
static_assert(local_fallback_answer_note.find(domain::texts::no_model_reachable)
              != std::string_view::npos);
static_assert(local_fallback_data_reason.find(domain::texts::no_model_reachable)
              != std::string_view::npos);

local_provider::local_provider(const catalog& cat, snapshot_source snapshots,
                               local_settings settings)
    : router_(cat, settings.router), snapshots_(std::move(snapshots)),
      settings_(settings) {
  // nop
}

domain::outcome<std::string>
local_provider::reply(std::string_view prompt, std::string_view question,
                      const std::vector<domain::passage>& passages,
                      std::string_view request_id) const {
  if (prompt == "router") {
    auto snap = snapshot();
    if (!snap)
      return domain::make_error(domain::ec::index_unavailable,
                                "no retrieval index is loaded");
    auto r = router_.decide(question, *snap, settings_.mode, settings_.top_k,
                            request_id);
    return json::serialize(json::object{{"route", domain::to_string(r.route)},
                                        {"reason", r.reason}});
  }
  if (prompt == "rag_answer") {
    auto snap = snapshot();
    // The evidence the retrieve node computed for these passages (its
    // result is in the snapshot's memo under this request's id).
    double evidence = 0;
    if (snap && !passages.empty())
      evidence = retrieve_with_evidence(*snap, question, settings_.top_k,
                                        settings_.mode, request_id)
                   ->evidence.score;
    auto found = extract_answer(question, passages, snap.get(),
                                settings_.extract, passages_.get(), evidence);
    data::log_event(data::log_level::debug, "local_answer",
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
      answer = found.answer + "\n\n" + std::string{local_answer_note};
    } else {
      answer
        = "The passages found do not state the answer (" + found.why + ").";
    }
    return json::serialize(json::object{{"refused", false},
                                        {"confident", found.found},
                                        {"answer", std::move(answer)},
                                        {"citedChunkIds", std::move(cited)}});
  }
  if (prompt == "sql_generate" || prompt == "sql_correct")
    return json::serialize(json::object{
      {"sql", "NO_ANSWER"}, {"reason", std::string{local_data_reason}}});
  return domain::make_error(domain::ec::llm_unavailable,
                            "the local provider does not answer the '"
                              + std::string{prompt} + "' prompt");
}

std::string as_fallback_reply(std::string_view prompt, std::string reply) {
  bool rag = prompt == "rag_answer";
  if (!rag && prompt != "sql_generate" && prompt != "sql_correct")
    return reply;
  boost::system::error_code ec;
  auto doc = json::parse(reply, ec);
  if (ec || !doc.is_object())
    return reply;
  auto& obj = doc.as_object();
  if (rag) {
    auto* answer = obj.if_contains("answer");
    if (!answer || !answer->is_string())
      return reply;
    std::string text{answer->as_string()};
    auto note = std::string_view{local_answer_note};
    if (text.size() < note.size()
        || text.compare(text.size() - note.size(), note.size(), note) != 0)
      return reply;
    text.replace(text.size() - note.size(), note.size(),
                 local_fallback_answer_note);
    *answer = text;
  } else {
    auto* reason = obj.if_contains("reason");
    if (!reason || !reason->is_string()
        || reason->as_string() != local_data_reason)
      return reply;
    *reason = local_fallback_data_reason;
  }
  return json::serialize(doc);
}

} // namespace candor::data
