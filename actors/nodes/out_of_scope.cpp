// The out_of_scope node: ends the request with the fixed refusal, without
// a model call.

#include "actors/nodes/nodes.hpp"

#include "domain/model/contracts.hpp"

namespace candor::actors {

node_actor::behavior_type
out_of_scope(node_actor::stateful_pointer<out_of_scope_state>) {
  return {
    [](atom::step, domain::ask_box& box) -> domain::ask_box {
      domain::finish(*box, domain::status_kind::refused,
                     std::string{domain::texts::out_of_scope});
      return std::move(box);
    },
  };
}

} // namespace candor::actors
