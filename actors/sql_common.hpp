#pragma once

// Helpers shared by the data-branch nodes (sql_generate, sql_validate,
// sql_correct, sql_execute, sql_answer). Internal to actors/.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "domain/contracts.hpp"
#include "domain/types.hpp"

namespace candor::actors::sql_nodes {

/// Wall-clock microseconds since the epoch.
int64_t wall_us();

/// `text` with every `{{schema}}` replaced by `schema`.
std::string fill_schema(std::string text, std::string_view schema);

/// A SQL audit row for the request of `st`.
domain::sql_audit_record audit_row(const domain::ask_state& st,
                                   std::string sql, std::string verdict,
                                   std::string layer, std::string reason,
                                   int64_t rows = 0, int64_t latency_us = 0);

/// Ends `st` as `error` because the model's reply was unusable.
void model_reply_unusable(domain::ask_state& st, std::string_view warning);

/// Asks the model for `req` and parses the reply with `parse` (a function
/// of `std::string_view` returning `domain::outcome<T>`). A reply that
/// does not parse is re-asked once with the problems appended, as
/// `reask_ordinal`, while the budget allows; `on_parsed(st, T&)` then
/// updates the state. Unusable replies, truncation and an exhausted budget
/// end the request as `error`; other failures (no fixture, models down)
/// travel to the supervisor as errors. The promise always gets an answer.
template <class Self, class Parse, class OnParsed>
void ask_model(Self self, llm_actor llm, llm_request req,
               std::shared_ptr<domain::ask_state> st,
               caf::typed_response_promise<domain::ask_state> rp,
               int32_t reask_ordinal, Parse parse, OnParsed on_parsed) {
  req.budget = st->llm_budget;
  auto retry = req;
  self->request(llm, caf::infinite, atom::call_v, std::move(req))
    .then(
      [self, llm, retry, st, rp, reask_ordinal, parse,
       on_parsed](llm_reply& reply) mutable {
        domain::accumulate(st->usage, reply.usage);
        st->llm_budget -= reply.usage.calls;
        if (reply.finish_reason == "length") {
          model_reply_unusable(*st, "llm_truncated");
          rp.deliver(std::move(*st));
          return;
        }
        auto parsed = parse(reply.text);
        if (parsed) {
          on_parsed(*st, *parsed);
          rp.deliver(std::move(*st));
        } else if (retry.ordinal != reask_ordinal && st->llm_budget > 0) {
          retry.ordinal = reask_ordinal;
          retry.user += "\nYour previous reply was invalid: "
                        + parsed.err().message
                        + ". Reply again with the JSON object only.";
          ask_model(self, llm, std::move(retry), st, rp, reask_ordinal, parse,
                    on_parsed);
        } else {
          model_reply_unusable(*st, "llm_parse_failed");
          rp.deliver(std::move(*st));
        }
      },
      [rp, st](caf::error& err) mutable {
        auto e = to_domain(err);
        if (e.code == domain::ec::llm_budget_exceeded) {
          domain::add_warning(*st, "llm_budget_exceeded");
          domain::finish(*st, domain::status_kind::error,
                         std::string{domain::texts::budget_exceeded});
          rp.deliver(std::move(*st));
          return;
        }
        rp.deliver(std::move(err));
      });
}

} // namespace candor::actors::sql_nodes
