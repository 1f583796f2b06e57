#pragma once

// Helpers shared by the data-branch nodes (sql_generate, sql_validate,
// sql_correct, sql_execute, sql_answer). Internal to actors/.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "actors/nodes/model_call.hpp"
#include "domain/model/contracts.hpp"
#include "domain/types.hpp"

namespace candor::actors::sql_nodes {

/// Wall-clock microseconds since the epoch.

/// `text` with every `{{schema}}` replaced by `schema`.
std::string fill_schema(std::string text, std::string_view schema);

/// A SQL audit row for the request of `st`.
domain::sql_audit_record audit_row(const domain::ask_state& st, std::string sql,
                                   std::string verdict, std::string layer,
                                   std::string reason, int64_t rows = 0,
                                   int64_t latency_us = 0);

/// Ends `st` as `error` because the model's reply was unusable.
void model_reply_unusable(domain::ask_state& st, std::string_view warning);

/// `actors::ask_model` with the data branch's policy: a re-ask as
/// `reask_ordinal`, and an unusable reply ends the request as `error`.
template <class Self, class Parse, class OnParsed>
void ask_model(Self self, llm_actor llm, llm_request req,
               std::shared_ptr<domain::ask_box> box,
               caf::typed_response_promise<domain::ask_box> rp,
               int32_t reask_ordinal, Parse parse, OnParsed on_parsed) {
  auto policy = std::make_shared<reask_policy>();
  policy->reask_ordinal = reask_ordinal;
  policy->on_unusable = model_reply_unusable;
  actors::ask_model(self, std::move(llm), std::move(req), std::move(box),
                    std::move(rp), std::move(policy), std::move(parse),
                    std::move(on_parsed));
}

} // namespace candor::actors::sql_nodes
