#pragma once

// The graph nodes. Each node is its own actor with the
// node_actor interface; its body lives in actors/<node>.cpp.

#include <memory>
#include <string>

#include <caf/typed_event_based_actor.hpp>

#include "actors/interfaces.hpp"

namespace candor::domain {
class output_guard;
} // namespace candor::domain

namespace candor::data {
class catalog;
class sql_guard;
struct postgres_rules;
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
  std::string model; ///< CANDOR_GUARD_MODEL; empty: the primary
  std::string prompt_version;
  std::string system_prompt; ///< conf/prompts/guard.v1.txt
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

/// FINALIZE: the output guard and the response schema check, the one place
/// a response is validated. A response that fails its schema is repaired
/// into an error answer (`response_invalid`); one still invalid after that
/// ends the request with `internal` (HTTP 500).
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

// -- the data branch --------------------------------------------------------

/// SQL_GENERATE: asks the model for one query (prompt sql_generate) with
/// the catalog's schema text; the model may abstain with NO_ANSWER.
struct sql_generate_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_generate_state() = default;

  static inline const char* name = "sql_generate";
  llm_actor llm;
  std::string prompt_version;
  std::string system_prompt; ///< with the schema text filled in
};

/// `prompt_text` may hold the placeholder `{{schema}}`, replaced by
/// `schema_text`.
node_actor::behavior_type
sql_generate(node_actor::stateful_pointer<sql_generate_state> self,
             llm_actor llm, std::string prompt_version, std::string prompt_text,
             std::string schema_text);

/// SQL_VALIDATE: the static policy, the validation connection and the
/// catalog's value domains, in this order. Policy and authorizer
/// violations block; correctable errors go to sql_correct through
/// `pending_error`; a filter outside a declared domain is refused. Every
/// statement it does not let through gets a SQL audit row.
struct sql_validate_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_validate_state() = default;

  static inline const char* name = "sql_validate";
  std::shared_ptr<data::sql_guard> guard;
  /// On the PostgreSQL warehouse: its statement policy instead of the
  /// SQLite policy and validation connection.
  std::shared_ptr<const data::postgres_rules> pg;
  std::string open_error; ///< why `guard` is missing
  std::shared_ptr<const data::catalog> cat;
  ledger_actor ledger;
};

/// `sales_db`: the SQLite file, or empty on the PostgreSQL warehouse
/// (`backend` "postgres").
node_actor::behavior_type
sql_validate(node_actor::stateful_pointer<sql_validate_state> self,
             std::string sales_db, std::shared_ptr<const data::catalog> cat,
             ledger_actor ledger, std::string backend);

/// SQL_CORRECT: gives the model the failed query and the error (prompt
/// sql_correct), at most `max_corrections` times; then `error` with
/// `sql.lastError`.
struct sql_correct_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_correct_state() = default;

  static inline const char* name = "sql_correct";
  llm_actor llm;
  std::string prompt_version;
  std::string system_prompt;
  int32_t max_corrections = 3;
};

node_actor::behavior_type
sql_correct(node_actor::stateful_pointer<sql_correct_state> self, llm_actor llm,
            std::string prompt_version, std::string prompt_text,
            std::string schema_text, int32_t max_corrections);

/// SQL_EXECUTE: runs the validated query through the SQL sandbox (never
/// anywhere else) and keeps at most 50 rows for the response.
struct sql_execute_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_execute_state() = default;

  static inline const char* name = "sql_execute";
  sql_sandbox_actor sandbox;
  ledger_actor ledger;
  int32_t max_rows = 200;
};

node_actor::behavior_type
sql_execute(node_actor::stateful_pointer<sql_execute_state> self,
            sql_sandbox_actor sandbox, ledger_actor ledger, int32_t max_rows);

/// SQL_ANSWER: explains the rows (at most `rows_to_model` of them) through
/// the model (prompt sql_answer); zero rows or all-NULL rows end as
/// `no_results` without a model call.
struct sql_answer_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  sql_answer_state() = default;

  static inline const char* name = "sql_answer";
  llm_actor llm;
  std::string prompt_version;
  std::string system_prompt;
  int32_t rows_to_model = 50;
};

node_actor::behavior_type
sql_answer(node_actor::stateful_pointer<sql_answer_state> self, llm_actor llm,
           std::string prompt_version, std::string prompt_text,
           int32_t rows_to_model);
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
