#pragma once

// Declares the schemas of model replies (router, rag_answer) and the fixed
// texts of deterministic outcomes.

#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"
#include "domain/types.hpp"

/// The schemas of model replies, checked in code. A reply that does not
/// parse is an `llm_parse_failed` error whose message lists the problems, so
/// a node can re-ask once with them.
namespace candor::domain {

/// Router reply: {"route": "docs"|"data"|"out_of_scope", "reason": 3..200}.
struct router_decision {
  route_kind route = route_kind::none;
  std::string reason;
  /// A follow-up read as the question it stands for (optional; 1..500
  /// characters): the question the rest of the graph answers.
  std::string standalone;
};

/// router reply: {"route": "docs"|"data"|"out_of_scope", "reason": string
/// (3..200 characters), "standalone": string (optional, 1..500 characters,
/// given for a question asked in a conversation)}; no other field.

outcome<router_decision> parse_router_reply(std::string_view text);

/// Bounds of a rag_answer reply.
inline constexpr size_t rag_reply_max_bytes = 16 * 1024;
inline constexpr size_t rag_answer_max_chars = 2000;
inline constexpr size_t rag_max_cited_ids = 8;
inline constexpr size_t rag_cited_id_max_chars = 200;

/// rag_answer reply: {"refused": bool, "confident": bool, "answer": string
/// (1..2000 characters unless refused), "citedChunkIds": [string, ...]
/// (at most 8, each 1..200 characters)}. Every field is required and no
/// other is allowed.
struct rag_reply {
  bool refused = false;
  bool confident = false;
  std::string answer;
  std::vector<std::string> cited_chunk_ids;
};

outcome<rag_reply> parse_rag_reply(std::string_view text);

/// Fixed texts of deterministic outcomes (no model involved).
namespace texts {

inline constexpr std::string_view out_of_scope
  = "I can only answer questions about what the company's documents say "
    "(its policies, guides and services) or figures from its data. This "
    "question is outside that scope, so I will not guess an answer.";

inline constexpr std::string_view input_blocked
  = "This request was blocked by the input guard because it looks like an "
    "attempt to change the assistant's instructions or extract protected "
    "information. Please ask a question about our policies, products or "
    "data.";

inline constexpr std::string_view output_blocked
  = "The answer was withheld because it contained protected content.";

inline constexpr std::string_view budget_exceeded
  = "The request needed more model calls than its budget allows, so it was "
    "stopped without an answer.";

inline constexpr std::string_view step_cap_exceeded
  = "The request took more processing steps than allowed, so it was stopped "
    "without an answer.";

inline constexpr std::string_view node_unavailable
  = "This kind of question cannot be answered by this server yet: the part "
    "of candor that handles it is not available.";

inline constexpr std::string_view response_invalid
  = "An internal error prevented a valid answer.";

/// Retrieval found too little evidence: refused before any model call.
inline constexpr std::string_view weak_evidence
  = "The company's documents do not say enough about this for a reliable "
    "answer, so I will not guess. Try asking about a specific policy, guide "
    "or service, or contact customer support.";

/// The model declined, was not confident, or cited nothing retrieved.
inline constexpr std::string_view unsupported_answer
  = "The passages I found do not support a reliable answer to this "
    "question, so I will not guess.";

/// The model's reply did not match the contract, even after a re-ask.
inline constexpr std::string_view unusable_answer
  = "No usable answer could be produced from the documents for this "
    "question, so none is given.";

/// Said by every answer the local provider gave in place of models that
/// could not be reached (llm.localFallback).
inline constexpr std::string_view no_model_reachable
  = "no language model was reachable";

/// Added to such an answer when it does not say so already (a refusal,
/// out of scope, ...).
inline constexpr std::string_view local_fallback_note
  = "(Composed by candor's local provider: no language model was "
    "reachable.)";

inline constexpr std::string_view route_reason_withheld
  = "reason withheld by the output guard";

} // namespace texts

} // namespace candor::domain
