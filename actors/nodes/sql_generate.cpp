// The sql_generate node: asks the model for one query over the catalog's
// schema; the model may abstain.

#include "actors/nodes/nodes.hpp"

#include <caf/event_based_actor.hpp>

#include "actors/nodes/sql_common.hpp"
#include "domain/conversation.hpp"
#include "domain/sql/contracts.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;

constexpr std::string_view abstained_text
  = "I cannot answer this from the data: the model found no query "
    "that answers it with the tables and columns available, so it did not "
    "guess. Try asking about orders, revenue, products, channels, "
    "countries, refunds or payments.";

} // namespace

node_actor::behavior_type
sql_generate(node_actor::stateful_pointer<sql_generate_state> self,
             llm_actor llm, std::string prompt_version, std::string prompt_text,
             std::string schema_text) {
  self->state.llm = std::move(llm);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt
    = sql_nodes::fill_schema(std::move(prompt_text), schema_text);
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      auto& s = self->state;
      const auto& in = *box;
      llm_request req;
      req.request_id = in.request.request_id;
      req.prompt = "sql_generate";
      req.prompt_version = s.prompt_version;
      req.key = in.request.question;
      req.chaos = in.request.chaos;
      if (!s.system_prompt.empty()) { // empty: no model reads it
        req.system = s.system_prompt;
        req.user = domain::history_block(in.request.history) + "<question>"
                   + domain::escape_xml(in.request.question) + "</question>";
        req.schema = std::string{domain::sql_reply_schema};
      }
      req.max_tokens = 800;
      req.ordinal = 0;
      auto rp = self->make_response_promise<ask_box>();
      sql_nodes::ask_model(
        self, s.llm, std::move(req), std::make_shared<ask_box>(std::move(box)),
        rp, 1,
        [](std::string_view text) { return domain::parse_sql_reply(text); },
        [](ask_state& st, domain::sql_reply& reply) {
          if (reply.abstained) {
            domain::add_warning(st, "sql_abstained");
            domain::finish(st, domain::status_kind::refused,
                           reply.reason.empty() ? std::string{abstained_text}
                                                : std::move(reply.reason));
            return;
          }
          st.has_sql = true;
          st.sql = domain::sql_block{};
          st.sql.query = std::move(reply.sql);
          st.sql.plan = std::move(reply.plan);
          st.follow_ups = std::move(reply.follow_ups);
          st.pending_error.clear();
        });
      return rp;
    },
  };
}

} // namespace candor::actors
