#pragma once

// Declares the local provider: the model roles of the documents, data and
// out-of-scope paths answered by deterministic code, no model and no
// network.

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/local/extract.hpp"
#include "data/local/planner.hpp"
#include "data/local/router.hpp"
#include "domain/error.hpp"
#include "domain/types.hpp"

namespace candor::data {

/// The model name the local provider reports.
inline constexpr std::string_view local_model_name = "candor-local";

/// The sentence every local documents answer ends with.
inline constexpr std::string_view local_answer_note
  = "(Quoted from the documents by candor's local provider; no language "
    "model was used.)";

/// The note a documents answer ends with when the local provider stood in
/// for models that could not be reached (llm.localFallback).
inline constexpr std::string_view local_fallback_answer_note
  = "(Quoted from the documents by candor's local provider: no language "
    "model was reachable.)";

/// The sentence every local data answer ends with, and its fallback form.
inline constexpr std::string_view local_data_note
  = "(Planned from the catalog by candor's local provider; no language "
    "model was used.)";
inline constexpr std::string_view local_fallback_data_note
  = "(Planned from the catalog by candor's local provider: no language "
    "model was reachable.)";

/// What a data question gets when the catalog has no semantic layer (so
/// no planner) and only the local provider is available.
inline constexpr std::string_view local_data_reason
  = "Questions about the sales data need a language model or the "
    "catalog's semantic layer, and neither is available: set "
    "CANDOR_LLM_BASE_URL (and CANDOR_LLM_API_KEY) to an OpenAI-compatible "
    "endpoint, or add a 'semantic' section to the catalog.";

/// Added to a planner's refusal when no model is configured.
inline constexpr std::string_view local_planner_hint
  = " (Answered without a language model: the local planner answers only "
    "questions whose every word it can map to the catalog. With a model "
    "endpoint configured, CANDOR_LLM_BASE_URL, other questions go to the "
    "model.)";

/// Added to a planner's refusal when it stood in for models that failed.
inline constexpr std::string_view local_fallback_planner_hint
  = " (No language model was reachable, so only the local planner could "
    "answer; please try again later for questions it does not map to the "
    "catalog.)";

struct local_settings {
  search_mode mode = search_mode::bm25;
  size_t top_k = 3;
  local_router_options router;
  extract_options extract;
  /// The planner's values read from the database (`values_from`).
  dimension_values values;
  /// The warehouse's dialect the planner writes.
  sql_dialect dialect = sql_dialect::sqlite;
};

/// One model call the local provider answers.
struct local_call {
  std::string_view prompt;   ///< router, rag_answer, sql_generate, ...
  std::string_view question; ///< the user's question
  /// What retrieval found (rag_answer).
  const std::vector<domain::passage>* passages = nullptr;
  /// The request's id (the router's search is kept for its retrieve node).
  std::string_view request_id;
  /// The query and its rows (sql_answer).
  const domain::sql_block* sql = nullptr;
  /// Standing in for models that failed (llm.localFallback): the notes say
  /// that no language model was reachable rather than that none was used.
  bool fallback = false;
  /// The router of a follow-up: the conversation's earlier questions, in
  /// order, which the planner resolves `question` against (null or empty:
  /// none). See domain::questions_to_resolve.
  const std::vector<std::string>* earlier = nullptr;
};

/// The local provider. It writes the reply a model would write for each
/// prompt, in that prompt's contract, so the reply goes through the same
/// parsing, citation check, SQL policy and output guard as any model's:
/// - router: `local_router::decide`;
/// - rag_answer: `extract_answer` over the passages given;
/// - sql_generate: the planner's query (with its plan and follow-ups), or
///   its refusal as an abstention;
/// - sql_answer: the planner's wording of the rows;
/// - sql_correct: an abstention (a planned query is not rewritten);
/// - other prompts (the guard): an error, since the graph never reaches
///   them without a model.
/// Immutable after construction; `reply` is safe from any thread.
class local_provider {
public:
  using snapshot_source
    = std::function<std::shared_ptr<const retrieval_snapshot>()>;

  local_provider(const catalog& cat, snapshot_source snapshots,
                 local_settings settings);

  /// The reply text for `call`.
  domain::outcome<std::string> reply(const local_call& call) const;

  /// With a model configured and `llm.planFirst`: the reply for `call`
  /// when the planner reads its question whole, so that no model is
  /// called: the router's (data, when the local router agrees),
  /// sql_generate's (the planned query) and sql_answer's (rows of a
  /// planned query worded). Nothing for any other call or question: the
  /// model answers it.
  std::optional<std::string> plan_first_reply(const local_call& call) const;

  /// `reply` for a call with the given prompt, question and passages.
  domain::outcome<std::string>
  reply(std::string_view prompt, std::string_view question,
        const std::vector<domain::passage>& passages,
        std::string_view request_id = {}) const {
    return reply(local_call{prompt, question, &passages, request_id});
  }

  const local_router& router() const noexcept {
    return router_;
  }

  /// The data planner; null when the catalog has no semantic layer.
  const planner* data_planner() const noexcept {
    return planner_.get();
  }

  const local_settings& settings() const noexcept {
    return settings_;
  }

  /// The snapshot currently serving (may be null before the first load).
  std::shared_ptr<const retrieval_snapshot> snapshot() const {
    return snapshots_ ? snapshots_() : nullptr;
  }

private:
  /// The planner's reading of `question`, kept for the request's next
  /// calls (router, sql_generate and sql_answer read the same question).
  std::shared_ptr<const plan_result> plan(std::string_view question) const;

  /// The local router's decision, the planner's reading overriding it.
  domain::outcome<local_route> route(const local_call& call) const;
  /// A follow-up's router call read as the question it stands for (see
  /// provider.cpp); empty when it stands alone.
  std::string standalone_of(const local_call& call) const;
  /// `said` read after `previous` (a standalone question): the question
  /// it stands for, or empty when it stands alone.
  std::string follow_up_of(std::string_view previous, std::string_view said,
                           const local_call& call) const;
  /// The router's reply: the route of the question, or of the question a
  /// follow-up stands for (then named as "standalone").
  domain::outcome<std::string> router_reply(const local_call& call,
                                            bool data_only) const;
  domain::outcome<std::string> rag_reply(const local_call& call) const;
  std::string sql_generate_reply(const local_call& call) const;
  std::string sql_answer_reply(const local_call& call) const;

  local_router router_;
  std::shared_ptr<const planner> planner_;
  snapshot_source snapshots_;
  local_settings settings_;
  /// Shared by copies of this provider (one per llm actor).
  std::shared_ptr<passage_cache> passages_ = std::make_shared<passage_cache>();
  /// Recent plans by question (the planner is deterministic and immutable,
  /// so a plan stays right); emptied when it holds `plan_cache_size`.
  struct plan_cache {
    std::mutex m;
    std::unordered_map<std::string, std::shared_ptr<const plan_result>> by;
  };
  static constexpr size_t plan_cache_size = 1024;
  std::shared_ptr<plan_cache> plans_ = std::make_shared<plan_cache>();
};

} // namespace candor::data
