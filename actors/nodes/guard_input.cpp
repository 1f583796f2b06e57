// The guard_input node: the deterministic input rules, then the model
// classifier, which fails closed on any reply that is not "safe".

#include "actors/nodes/nodes.hpp"
#include "actors/nodes/model_call.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "domain/model/contracts.hpp"
#include "domain/guard/input_rules.hpp"
#include "domain/guard/input_scorer.hpp"
#include "domain/model/openai_wire.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using guard_ptr = node_actor::stateful_pointer<guard_input_state>;

void block_by_model(domain::ask_state& st, std::string reason) {
  domain::block(st, domain::layer_kind::input_model, {std::move(reason)},
                std::string{domain::texts::input_blocked});
}

/// Asks the classifier about a question the rules let through, through
/// ask_model like every node. Fails closed: only a reply that starts with
/// "safe" lets the question on; a truncated or unparseable reply blocks and
/// is never re-asked (the re-ask ordinal is the first call's own).
void ask_classifier(guard_ptr self,
                    caf::typed_response_promise<domain::ask_box> rp,
                    std::shared_ptr<domain::ask_box> box) {
  auto& s = self->state;
  const auto& in = **box;
  llm_request req;
  req.request_id = in.request.request_id;
  req.prompt = "guard";
  req.prompt_version = s.prompt_version;
  req.key = in.request.question;
  req.system = s.system_prompt;
  req.user
    = "<question>" + domain::escape_xml(in.request.question) + "</question>";
  req.chaos = in.request.chaos;
  req.max_tokens = 10;
  req.model = s.model;
  static const auto policy = [] {
    auto p = std::make_shared<reask_policy>();
    p->reask_ordinal = 0; // no re-ask: the first call is ordinal 0
    p->on_unusable = [](domain::ask_state& st, std::string_view why) {
      block_by_model(st, why == "llm_truncated" ? "model:truncated"
                                                : "model:unparseable");
    };
    return std::shared_ptr<const reask_policy>{std::move(p)};
  }();
  auto parse = [](std::string_view text) -> domain::outcome<bool> {
    switch (domain::parse_guard_reply(text)) {
      case domain::guard_verdict::safe: return true;
      case domain::guard_verdict::unsafe: return false;
      case domain::guard_verdict::unparseable: break;
    }
    return domain::make_error(domain::ec::llm_parse_failed,
                              "not a guard verdict");
  };
  auto on_parsed = [](domain::ask_state& st, bool safe) {
    if (safe)
      st.guardrail.reasons.push_back("model:safe");
    else
      block_by_model(st, "model:unsafe");
  };
  ask_model(self, s.llm, std::move(req), std::move(box), std::move(rp), policy,
            parse, on_parsed);
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
    [self](atom::step, domain::ask_box& box) -> caf::result<domain::ask_box> {
      auto& st = *box;
      if (self->state.mode == "off") {
        domain::add_warning(st, "guardrail_off");
        return std::move(box);
      }
      auto verdict = domain::rule_set::builtin().evaluate_question(
        st.request.question, domain::input_scorer::builtin());
      // A follow-up's earlier questions reach the prompts as its history:
      // they pass the same rules (a chat client sends them itself).
      for (const auto& t : st.request.history) {
        if (verdict.blocked)
          break;
        auto earlier = domain::rule_set::builtin().evaluate_question(
          t.question, domain::input_scorer::builtin());
        if (earlier.blocked) {
          verdict = std::move(earlier);
          for (auto& name : verdict.matched)
            name = "history:" + name;
        }
      }
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
