#include "actors/nodes.hpp"

#include "domain/api_json.hpp"
#include "domain/contracts.hpp"
#include "domain/log.hpp"
#include "domain/output_guard.hpp"

namespace candor::actors {

namespace {

using domain::ask_state;

/// Runs the output guard over everything that leaves the server. Returns
/// the reason of the first leak, or an empty string.
std::string guard_output(const domain::output_guard& guard, ask_state& st) {
  const auto& spans = st.redacted_spans;
  // The route reason is model text too: withhold it on a leak.
  if (auto r = guard.check(st.route_reason, spans); !r.empty()) {
    st.route_reason = std::string{domain::texts::route_reason_withheld};
    return r;
  }
  if (st.has_sql) {
    std::string joined = st.sql.query + "\n" + st.sql.original_query + "\n"
                         + st.sql.last_error;
    for (auto& c : st.sql.columns)
      joined += "\n" + c;
    for (auto& row : st.sql.rows)
      for (auto& c : row)
        joined += "\n" + c.s;
    if (auto r = guard.check(joined, spans); !r.empty()) {
      st.sql.query = "(withheld by the output guard)";
      st.sql.original_query.clear();
      st.sql.columns.clear();
      st.sql.rows.clear();
      st.sql.last_error.clear();
      return r;
    }
  }
  if (auto r = guard.check(st.answer, spans); !r.empty())
    return r;
  for (auto& f : st.follow_ups)
    if (auto r = guard.check(f, spans); !r.empty())
      return r;
  return {};
}

} // namespace

node_actor::behavior_type
finalize(node_actor::stateful_pointer<finalize_state> self,
         std::shared_ptr<const domain::output_guard> guard,
         domain::service_info info) {
  self->state.guard = std::move(guard);
  self->state.info = std::move(info);
  return {
    [self](atom::step, ask_state& st) -> ask_state {
      // The retrieve node reports the fingerprint of the snapshot it used,
      // which may be newer than the one the server started with.
      auto embedder = std::move(st.service.embedder);
      st.service = self->state.info;
      if (!embedder.empty())
        st.service.embedder = std::move(embedder);
      if (!st.finished()) {
        domain::add_warning(st, "no_outcome");
        domain::finish(st, domain::status_kind::error,
                       std::string{domain::texts::response_invalid});
      }
      if (auto reason = guard_output(*self->state.guard, st);
          !reason.empty()) {
        st.follow_ups.clear();
        st.citations.clear();
        domain::block(st, domain::layer_kind::output_guard,
                      {"output_guard:" + reason},
                      std::string{domain::texts::output_blocked});
      }
      // The response must match its schema before it leaves.
      auto issues = domain::validate_response(domain::to_json(st));
      if (!issues.empty()) {
        boost::json::array list;
        for (auto& i : issues)
          list.push_back(boost::json::value(i.path + ": " + i.message));
        domain::log_event(domain::log_level::error, "response_invalid",
                          {{"requestId", st.request.request_id},
                           {"issues", std::move(list)}});
        st.citations.clear();
        st.follow_ups.clear();
        st.has_sql = false;
        st.blocked_by = domain::layer_kind::none;
        st.guardrail = {};
        domain::add_warning(st, "response_invalid");
        domain::finish(st, domain::status_kind::error,
                       std::string{domain::texts::response_invalid});
        // Still invalid after the repair: leave it to the HTTP layer's 500.
        st.validated = domain::validate_response(domain::to_json(st)).empty();
        return std::move(st);
      }
      st.validated = true;
      return std::move(st);
    },
  };
}

} // namespace candor::actors
