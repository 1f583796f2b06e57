#include "actors/nodes.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "domain/contracts.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using domain::ask_state;

/// The router could not get a usable decision: refuse as out of scope.
void fall_back(ask_state& st, const std::string& why) {
  st.route = domain::route_kind::out_of_scope;
  st.route_reason = "the router could not classify the question";
  domain::add_warning(st, "router_fallback");
  domain::add_warning(st, why);
}


using router_ptr = node_actor::stateful_pointer<router_state>;

/// The reply schema for real providers' structured output.
constexpr const char* router_schema
  = R"({"type":"object","properties":{)"
    R"("route":{"type":"string","enum":["docs","data","out_of_scope"]},)"
    R"("reason":{"type":"string"}},)"
    R"("required":["route","reason"],"additionalProperties":false})";

/// Asks the model; `ordinal` 1 is the single re-ask after a bad reply.
void ask_model(router_ptr self, caf::typed_response_promise<ask_state> rp,
               std::shared_ptr<ask_state> st, int32_t ordinal,
               std::string problems) {
  llm_request req;
  req.request_id = st->request.request_id;
  req.prompt = "router";
  req.prompt_version = self->state.prompt_version;
  req.key = st->request.question;
  req.system = self->state.system_prompt;
  req.user = "<question>" + domain::escape_xml(st->request.question)
             + "</question>";
  if (!problems.empty())
    req.user += "\nYour previous reply was invalid: " + problems
                + ". Reply again with the JSON object only.";
  req.chaos = st->request.chaos;
  req.budget = st->llm_budget;
  req.max_tokens = 200;
  req.ordinal = ordinal;
  req.schema = router_schema;
  self->request(self->state.llm, caf::infinite, atom::call_v, std::move(req))
    .then(
      [self, rp, st, ordinal](llm_reply& reply) mutable {
        domain::accumulate(st->usage, reply.usage);
        st->llm_budget -= reply.usage.calls;
        if (reply.finish_reason == "length") {
          fall_back(*st, "llm_truncated");
          rp.deliver(std::move(*st));
          return;
        }
        auto decision = domain::parse_router_reply(reply.text);
        if (decision) {
          st->route = decision->route;
          st->route_reason = decision->reason;
          rp.deliver(std::move(*st));
        } else if (ordinal == 0 && st->llm_budget > 0) {
          ask_model(self, rp, st, 1, decision.err().message);
        } else {
          fall_back(*st, "llm_parse_failed");
          rp.deliver(std::move(*st));
        }
      },
      [rp, st](caf::error& err) mutable {
        auto e = to_domain(err);
        if (e.code == domain::ec::llm_budget_exceeded) {
          st->route = domain::route_kind::none;
          domain::add_warning(*st, "llm_budget_exceeded");
          domain::finish(*st, domain::status_kind::error,
                         std::string{domain::texts::budget_exceeded});
          rp.deliver(std::move(*st));
          return;
        }
        rp.deliver(std::move(err));
      });
}

} // namespace

node_actor::behavior_type
router(node_actor::stateful_pointer<router_state> self, llm_actor llm,
       std::string prompt_version, std::string system_prompt) {
  self->state.llm = std::move(llm);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt = std::move(system_prompt);
  return {
    [self](atom::step, ask_state& in) -> caf::result<ask_state> {
      if (in.request.force_route != domain::route_kind::none) {
        in.route = in.request.force_route;
        in.overridden = true;
        in.route_reason = "route forced by the client (forceRoute)";
        return std::move(in);
      }
      auto rp = self->make_response_promise<ask_state>();
      ask_model(self, rp, std::make_shared<ask_state>(std::move(in)), 0, {});
      return rp;
    },
  };
}

} // namespace candor::actors
