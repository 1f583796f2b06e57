#pragma once

// The one way a graph node asks the model: through the llm actor, with the
// reply parsed against its contract and a single re-ask carrying the parse
// problems. Internal to actors/ (guard_input, router, rag_answer, the sql
// nodes).

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "domain/model/contracts.hpp"
#include "domain/text.hpp"
#include "domain/types.hpp"

namespace candor::actors {

/// What a node does with replies that cannot be used.
struct reask_policy {
  /// The `ordinal` of the single re-ask (the fixture key of its reply).
  int32_t reask_ordinal = 1;
  /// A warning added when the re-ask is made (empty: none).
  std::string repair_warning;
  /// Ends the request when the reply is truncated ("llm_truncated") or
  /// still does not parse after the re-ask ("llm_parse_failed").
  std::function<void(domain::ask_state&, std::string_view)> on_unusable;
};

/// Asks the model for `req` and parses the reply with `parse` (a function
/// of `std::string_view` returning `domain::outcome<T>`); `on_parsed(st,
/// T&)` then updates the state. A reply that does not parse is re-asked
/// once, with its problems (escaped) appended, while the budget allows. A
/// truncated reply is not re-asked: it would be cut again. An exhausted
/// budget ends the request as `error`; other failures (no fixture, models
/// down) travel to the supervisor as errors. The promise always gets an
/// answer. `box` is shared because CAF copies the handlers below several
/// times; delivering moves the box out of it.
template <class Self, class Parse, class OnParsed>
void ask_model(Self self, llm_actor llm, llm_request req,
               std::shared_ptr<domain::ask_box> box,
               caf::typed_response_promise<domain::ask_box> rp,
               std::shared_ptr<const reask_policy> policy, Parse parse,
               OnParsed on_parsed) {
  req.budget = (*box)->llm_budget;
  req.received_us = (*box)->request.received_us; // names it for a cancel
  // Kept for the re-ask behind a pointer: CAF copies the handler below
  // several times, and the request carries the rendered prompts.
  auto retry = std::make_shared<llm_request>(req);
  self->request(llm, caf::infinite, atom::call_v, std::move(req))
    .then(
      [self, llm, retry, box, rp, policy, parse,
       on_parsed](llm_reply& reply) mutable {
        auto& st = **box;
        domain::accumulate(st.usage, reply.usage);
        st.llm_budget -= reply.usage.calls;
        if (reply.finish_reason == "length") {
          policy->on_unusable(st, "llm_truncated");
          rp.deliver(std::move(*box));
          return;
        }
        auto parsed = parse(reply.text);
        if (parsed) {
          on_parsed(st, *parsed);
          rp.deliver(std::move(*box));
        } else if (retry->ordinal != policy->reask_ordinal
                   && st.llm_budget > 0) {
          if (!policy->repair_warning.empty())
            domain::add_warning(st, policy->repair_warning);
          retry->ordinal = policy->reask_ordinal;
          retry->user += "\nYour previous reply was invalid: "
                         + domain::escape_xml(parsed.err().message)
                         + ". Reply again with the JSON object only.";
          ask_model(self, llm, std::move(*retry), box, rp, policy, parse,
                    on_parsed);
        } else {
          policy->on_unusable(st, "llm_parse_failed");
          rp.deliver(std::move(*box));
        }
      },
      [rp, box](caf::error& err) mutable {
        auto e = to_domain(err);
        if (e.code == domain::ec::llm_budget_exceeded) {
          auto& st = **box;
          domain::add_warning(st, "llm_budget_exceeded");
          domain::finish(st, domain::status_kind::error,
                         std::string{domain::texts::budget_exceeded});
          rp.deliver(std::move(*box));
          return;
        }
        rp.deliver(std::move(err));
      });
}

} // namespace candor::actors
