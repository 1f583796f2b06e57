#pragma once

// Declares the model contracts of the data branch and the NO_ANSWER
// abstention sentinel.

#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// The model contracts of the data branch, checked in code (the
/// companion of domain/model/contracts.hpp). A reply that does not parse is an
/// `llm_parse_failed` error listing the problems, for the node's one
/// re-ask.
namespace candor::domain {

/// The abstention sentinel: a model that cannot write the query replies
/// with exactly this instead of guessing.
inline constexpr std::string_view no_answer_sentinel = "NO_ANSWER";

/// Longest SQL text accepted from the model (the static policy's limit).
inline constexpr size_t max_model_sql_bytes = 20 * 1024;

/// Reply of sql_generate and sql_correct: `{"sql": "...", "followUps":
/// [...]}` (followUps optional, at most 3 strings of 3..200 characters),
/// or the bare sentinel NO_ANSWER. A reply wrapped in a Markdown code
/// fence is unwrapped first.
struct sql_reply {
  bool abstained = false;
  /// With an abstention: why, in words for the user (optional member
  /// `reason`, at most 600 characters).
  std::string reason;
  std::string sql;
  std::vector<std::string> follow_ups;
  /// Optional member `plan` (at most 400 characters): how the local
  /// provider's planner read the question; kept in the trace.
  std::string plan;
};

outcome<sql_reply> parse_sql_reply(std::string_view text);

/// JSON schema of `sql_reply` for providers with structured output (there
/// the sentinel travels as the value of "sql").
inline constexpr std::string_view sql_reply_schema
  = R"({"type":"object","properties":{)"
    R"("sql":{"type":"string"},)"
    R"("followUps":{"type":"array","items":{"type":"string"}}},)"
    R"("required":["sql","followUps"],"additionalProperties":false})";

/// Reply of sql_answer: `{"answer": 1..2000 characters, "followUps": 1 to
/// 3 strings of 3..200 characters}`.
struct sql_answer_reply {
  std::string answer;
  std::vector<std::string> follow_ups;
};

outcome<sql_answer_reply> parse_sql_answer_reply(std::string_view text);

/// JSON schema of `sql_answer_reply` for providers with structured output.
inline constexpr std::string_view sql_answer_schema
  = R"({"type":"object","properties":{)"
    R"("answer":{"type":"string"},)"
    R"("followUps":{"type":"array","items":{"type":"string"}}},)"
    R"("required":["answer","followUps"],"additionalProperties":false})";

} // namespace candor::domain
