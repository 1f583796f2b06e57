// The finalize node: fills the service meta, runs the output guard and the
// response schema check, the one place a response is validated.

#include "actors/nodes/nodes.hpp"

#include <boost/json/monotonic_resource.hpp>

#include "domain/api/api_json.hpp"
#include "domain/model/contracts.hpp"
#include "data/log.hpp"
#include "domain/guard/output_guard.hpp"
#include "domain/guard/response_guard.hpp"

namespace candor::actors {

using domain::ask_box;

node_actor::behavior_type
finalize(node_actor::stateful_pointer<finalize_state> self,
         std::shared_ptr<const domain::output_guard> guard,
         domain::service_info info) {
  self->state.guard = std::move(guard);
  self->state.info = std::move(info);
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      auto& st = *box;
      // The supervisor fills the service meta when it starts a request; a
      // state that comes without it gets this node's. The retrieve node
      // reports the fingerprint of the snapshot it used, which may be
      // newer than the one the server started with: it is kept.
      if (st.service.provider.empty()) {
        auto embedder = std::move(st.service.embedder);
        st.service = self->state.info;
        if (!embedder.empty())
          st.service.embedder = std::move(embedder);
      }
      if (!st.finished()) {
        domain::add_warning(st, "no_outcome");
        domain::finish(st, domain::status_kind::error,
                       std::string{domain::texts::response_invalid});
      }
      if (auto reason = domain::guard_response(*self->state.guard, st);
          !reason.empty()) {
        st.follow_ups.clear();
        st.citations.clear();
        domain::block(st, domain::layer_kind::output_guard,
                      {"output_guard:" + reason},
                      std::string{domain::texts::output_blocked});
      }
      // The local provider answered in place of models that could not be
      // reached: the meta names it, a warning flags it, and the answer
      // says so (the local provider's own notes already do).
      if (st.usage.local_fallback) {
        st.service.provider = "local";
        domain::add_warning(st, "llm_local_fallback");
        if (st.answer.find(domain::texts::no_model_reachable)
            == std::string::npos) {
          if (!st.answer.empty())
            st.answer += "\n\n";
          st.answer += domain::texts::local_fallback_note;
        }
      }
      // The response must match its schema before it leaves: checked in
      // one pass; only a response that fails it is built as a value for
      // validate_response, which names the issues and has the last word.
      if (domain::response_fits_schema(st)) {
        st.validated = true;
        return std::move(box);
      }
      // Built in a stack buffer: the value is only checked and dropped.
      unsigned char buf[8192];
      boost::json::monotonic_resource mr{buf, sizeof buf};
      auto issues = domain::validate_response(domain::to_json(st, &mr));
      if (!issues.empty()) {
        boost::json::array list;
        for (auto& i : issues)
          list.push_back(boost::json::value(i.path + ": " + i.message));
        data::log_event(
          data::log_level::error, "response_invalid",
          {{"requestId", st.request.request_id}, {"issues", std::move(list)}});
        st.citations.clear();
        st.follow_ups.clear();
        st.has_sql = false;
        st.blocked_by = domain::layer_kind::none;
        st.guardrail = {};
        domain::add_warning(st, "response_invalid");
        domain::finish(st, domain::status_kind::error,
                       std::string{domain::texts::response_invalid});
        // Still invalid after the repair: the request ends as a 500; no
        // response that fails its schema ever leaves the service.
        if (!domain::validate_response(domain::to_json(st)).empty())
          return to_caf(domain::ec::internal, "the response failed validation");
        st.validated = true;
        return std::move(box);
      }
      st.validated = true;
      return std::move(box);
    },
  };
}

} // namespace candor::actors
