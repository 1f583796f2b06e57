#pragma once

// The graph nodes of issue #2. Each node is its own actor with the
// node_actor interface; its body lives in actors/<node>.cpp.

#include <memory>
#include <string>

#include <caf/typed_event_based_actor.hpp>

#include "actors/interfaces.hpp"

namespace candor::domain {
class output_guard;
} // namespace candor::domain

namespace candor::data {
enum class search_mode : uint8_t;
} // namespace candor::data

namespace candor::actors {
class snapshot_cell;
} // namespace candor::actors

namespace candor::actors {

/// GUARD_INPUT: deterministic input rules on the normalised question.
struct guard_input_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  guard_input_state() = default;

  static inline const char* name = "guard_input";
  std::string mode; ///< "rules", "rules+model" or "off"
  // rules+model: the classifier call.
  llm_actor llm;
  std::string model;          ///< CANDOR_GUARD_MODEL; empty: the primary
  std::string prompt_version;
  std::string system_prompt;  ///< conf/prompts/guard.v1.txt
};

/// With mode "rules+model", a question that passes the rules goes to the
/// classifier (through `llm`); its reply must start with "safe" or "unsafe",
/// anything else blocks (fail closed), and an unavailable classifier is an
/// error (503) before the router runs.
node_actor::behavior_type
guard_input(node_actor::stateful_pointer<guard_input_state> self,
            std::string mode, llm_actor llm = {}, std::string model = {},
            std::string prompt_version = {}, std::string system_prompt = {});

/// ROUTER: classifies the question through the LLM actor, unless the client
/// forced a route.
struct router_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  router_state() = default;

  static inline const char* name = "router";
  llm_actor llm;
  std::string prompt_version;
  std::string system_prompt;
};

node_actor::behavior_type
router(node_actor::stateful_pointer<router_state> self, llm_actor llm,
       std::string prompt_version, std::string system_prompt);

/// OUT_OF_SCOPE: a fixed refusal, no model call.
struct out_of_scope_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  out_of_scope_state() = default;

  static inline const char* name = "out_of_scope";
};

node_actor::behavior_type
out_of_scope(node_actor::stateful_pointer<out_of_scope_state> self);

/// FINALIZE: the output guard and the response schema check.
struct finalize_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  finalize_state() = default;

  static inline const char* name = "finalize";
  std::shared_ptr<const domain::output_guard> guard;
  domain::service_info info;
};

node_actor::behavior_type
finalize(node_actor::stateful_pointer<finalize_state> self,
         std::shared_ptr<const domain::output_guard> guard,
         domain::service_info info);

/// RETRIEVE: top-k passages from the snapshot the index actor published
/// (read from the shared cell, no message round trip; the search runs here,
/// not in the index actor); evidence below the threshold refuses without a
/// model call.
struct retrieve_settings {
  data::search_mode mode{};
  int32_t top_k = 3;
  double threshold = 0;
};

struct retrieve_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  retrieve_state() = default;

  static inline const char* name = "retrieve";
  std::shared_ptr<const snapshot_cell> snapshots;
  retrieve_settings settings;
};

node_actor::behavior_type
retrieve(node_actor::stateful_pointer<retrieve_state> self,
         std::shared_ptr<const snapshot_cell> snapshots,
         retrieve_settings settings);

/// RAG_ANSWER: asks the model for {refused, confident, answer,
/// citedChunkIds} over the retrieved passages (escaped <document> tags),
/// with one repair re-ask on a reply that does not parse.
struct rag_answer_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  rag_answer_state() = default;

  static inline const char* name = "rag_answer";
  llm_actor llm;
  std::string prompt_version;
  std::string system_prompt;
};

node_actor::behavior_type
rag_answer(node_actor::stateful_pointer<rag_answer_state> self, llm_actor llm,
           std::string prompt_version, std::string system_prompt);

/// The user message of rag_answer: every passage in a <document> tag whose
/// id, title, heading and text are XML-escaped, then the escaped question.
std::string rag_user_message(const domain::ask_state& st);

/// CHECK_CITATIONS: applies domain::check_citations to the model's reply.
struct check_citations_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  check_citations_state() = default;

  static inline const char* name = "check_citations";
};

node_actor::behavior_type
check_citations(node_actor::stateful_pointer<check_citations_state> self);

} // namespace candor::actors
