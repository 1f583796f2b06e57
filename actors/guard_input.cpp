#include "actors/nodes.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "domain/contracts.hpp"
#include "domain/input_rules.hpp"
#include "domain/openai_wire.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using guard_ptr = node_actor::stateful_pointer<guard_input_state>;

void block_by_model(domain::ask_state& st, std::string reason) {
  domain::block(st, domain::layer_kind::input_model, {std::move(reason)},
                std::string{domain::texts::input_blocked});
}

/// Asks the classifier about a question the rules let through. Fails
/// closed: only a reply that starts with "safe" lets the question on.
void ask_classifier(guard_ptr self, caf::typed_response_promise<
                                      domain::ask_box> rp,
                    std::shared_ptr<domain::ask_box> box) {
  auto& s = self->state;
  const auto& in = **box;
  llm_request req;
  req.request_id = in.request.request_id;
  req.prompt = "guard";
  req.prompt_version = s.prompt_version;
  req.key = in.request.question;
  req.system = s.system_prompt;
  req.user = "<question>" + domain::escape_xml(in.request.question)
             + "</question>";
  req.chaos = in.request.chaos;
  req.budget = in.llm_budget;
  req.max_tokens = 10;
  req.model = s.model;
  self->request(s.llm, caf::infinite, atom::call_v, std::move(req))
    .then(
      [rp, box](llm_reply& reply) mutable {
        auto& st = **box;
        domain::accumulate(st.usage, reply.usage);
        st.llm_budget -= reply.usage.calls;
        if (reply.finish_reason == "length") {
          block_by_model(st, "model:truncated");
        } else {
          switch (domain::parse_guard_reply(reply.text)) {
            case domain::guard_verdict::safe:
              st.guardrail.reasons.push_back("model:safe");
              break;
            case domain::guard_verdict::unsafe:
              block_by_model(st, "model:unsafe");
              break;
            case domain::guard_verdict::unparseable:
              block_by_model(st, "model:unparseable");
              break;
          }
        }
        rp.deliver(std::move(*box));
      },
      // Unavailable (503), budget and the like: the supervisor decides; the
      // router is never reached.
      [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

} // namespace

node_actor::behavior_type
guard_input(node_actor::stateful_pointer<guard_input_state> self,
            std::string mode, llm_actor llm, std::string model,
            std::string prompt_version, std::string system_prompt) {
  self->state.mode = std::move(mode);
  self->state.llm = std::move(llm);
  self->state.model = std::move(model);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt = std::move(system_prompt);
  return {
    [self](atom::step,
           domain::ask_box& box) -> caf::result<domain::ask_box> {
      auto& st = *box;
      if (self->state.mode == "off") {
        domain::add_warning(st, "guardrail_off");
        return std::move(box);
      }
      auto verdict = domain::rule_set::builtin().evaluate(
        st.request.question, domain::rule_scope::input);
      if (verdict.blocked) {
        std::vector<std::string> reasons;
        for (auto& name : verdict.matched)
          reasons.push_back("rule:" + name);
        domain::block(st, domain::layer_kind::input_rules, std::move(reasons),
                      std::string{domain::texts::input_blocked});
        return std::move(box);
      }
      st.guardrail.verdict = "pass";
      for (auto& name : verdict.matched)
        st.guardrail.reasons.push_back("rule:" + name);
      if (self->state.mode != "rules+model")
        return std::move(box);
      auto rp = self->make_response_promise<domain::ask_box>();
      ask_classifier(self, rp,
                     std::make_shared<domain::ask_box>(std::move(box)));
      return rp;
    },
  };
}

} // namespace candor::actors
