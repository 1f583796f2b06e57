#pragma once

// Declares the local provider: the model roles of the documents and
// out-of-scope paths answered by deterministic code, no model and no
// network.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/local/extract.hpp"
#include "data/local/router.hpp"
#include "domain/error.hpp"
#include "domain/types.hpp"

namespace candor::data {

/// The model name the local provider reports.
inline constexpr std::string_view local_model_name = "candor-local";

/// The sentence every local answer ends with.
inline constexpr std::string_view local_answer_note
  = "(Quoted from the documents by candor's local provider; no language "
    "model was used.)";

/// What a data question gets while only the local provider is available.
inline constexpr std::string_view local_data_reason
  = "Questions about the sales data need a language model, and none is "
    "configured: this server answers with its local provider, which "
    "answers questions about the documents only. Set CANDOR_LLM_BASE_URL "
    "(and CANDOR_LLM_API_KEY) to an OpenAI-compatible endpoint to ask about "
    "the sales figures.";

/// The note a documents answer ends with when the local provider stood in
/// for models that could not be reached (llm.localFallback).
inline constexpr std::string_view local_fallback_answer_note
  = "(Quoted from the documents by candor's local provider: no language "
    "model was reachable.)";

/// What a data question gets when no model could be reached.
inline constexpr std::string_view local_fallback_data_reason
  = "Questions about the sales data need a language model, and no language "
    "model was reachable: every configured endpoint failed, so this server "
    "answered with its local provider, which answers questions about the "
    "documents only. Please try again later.";

/// `reply`, the local provider's reply to `prompt`, rewritten for when it
/// stands in for models that failed: the documents answer's note and the
/// data abstention's reason say that no language model was reachable
/// (rather than that none is configured). Other replies are unchanged.
std::string as_fallback_reply(std::string_view prompt, std::string reply);

struct local_settings {
  search_mode mode = search_mode::bm25;
  size_t top_k = 3;
  local_router_options router;
  extract_options extract;
};

/// The local provider. It writes the reply a model would write for each
/// prompt, in that prompt's contract, so the reply goes through the same
/// parsing, citation check and output guard as any model's:
/// - router: `local_router::decide`;
/// - rag_answer: `extract_answer` over the passages given;
/// - sql_generate, sql_correct: an abstention saying why (no planner);
/// - other prompts (the guard, sql_answer): an error, since the graph never
///   reaches them without a model.
/// Immutable after construction; `reply` is safe from any thread.
class local_provider {
public:
  using snapshot_source
    = std::function<std::shared_ptr<const retrieval_snapshot>()>;

  local_provider(const catalog& cat, snapshot_source snapshots,
                 local_settings settings);

  /// The reply text for `prompt`; `question` is the user's question,
  /// `passages` what retrieval found (rag_answer only), `request_id` the
  /// request's (the router's search is kept for its retrieve node).
  domain::outcome<std::string>
  reply(std::string_view prompt, std::string_view question,
        const std::vector<domain::passage>& passages,
        std::string_view request_id = {}) const;

  const local_router& router() const noexcept {
    return router_;
  }

  const local_settings& settings() const noexcept {
    return settings_;
  }

  /// The snapshot currently serving (may be null before the first load).
  std::shared_ptr<const retrieval_snapshot> snapshot() const {
    return snapshots_ ? snapshots_() : nullptr;
  }

private:
  local_router router_;
  snapshot_source snapshots_;
  local_settings settings_;
  /// Shared by copies of this provider (one per llm actor).
  std::shared_ptr<passage_cache> passages_ = std::make_shared<passage_cache>();
};

} // namespace candor::data
