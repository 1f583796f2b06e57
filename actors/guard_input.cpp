#include "actors/nodes.hpp"

#include "domain/contracts.hpp"
#include "domain/input_rules.hpp"

namespace candor::actors {

node_actor::behavior_type
guard_input(node_actor::stateful_pointer<guard_input_state> self,
            std::string mode) {
  self->state.mode = std::move(mode);
  return {
    [self](atom::step, domain::ask_state& st) -> domain::ask_state {
      if (self->state.mode == "off") {
        domain::add_warning(st, "guardrail_off");
        return std::move(st);
      }
      auto verdict = domain::rule_set::builtin().evaluate(
        st.request.question, domain::rule_scope::input);
      if (verdict.blocked) {
        std::vector<std::string> reasons;
        for (auto& name : verdict.matched)
          reasons.push_back("rule:" + name);
        domain::block(st, domain::layer_kind::input_rules, std::move(reasons),
                      std::string{domain::texts::input_blocked});
      } else {
        st.guardrail.verdict = "pass";
        for (auto& name : verdict.matched)
          st.guardrail.reasons.push_back("rule:" + name);
      }
      return std::move(st);
    },
  };
}

} // namespace candor::actors
