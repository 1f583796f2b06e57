// The sql_correct node: gives the model the failed query and its error, at
// most max_corrections times, before ending the request as an error.

#include "actors/nodes/nodes.hpp"

#include <caf/event_based_actor.hpp>

#include "actors/nodes/sql_common.hpp"
#include "domain/sql/contracts.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;

std::string exhausted_text(int32_t corrections) {
  return "The data question could not be answered: the generated query "
         "still failed after "
         + std::to_string(corrections)
         + (corrections == 1 ? " correction" : " corrections")
         + ". The last query and its error are shown; try rephrasing the "
           "question.";
}

constexpr std::string_view abstained_text
  = "I cannot answer this from the data: the model could not repair "
    "its query with the tables and columns available, so it did not "
    "guess.";

} // namespace

node_actor::behavior_type
sql_correct(node_actor::stateful_pointer<sql_correct_state> self, llm_actor llm,
            std::string prompt_version, std::string prompt_text,
            std::string schema_text, int32_t max_corrections) {
  self->state.llm = std::move(llm);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt
    = sql_nodes::fill_schema(std::move(prompt_text), schema_text);
  self->state.max_corrections = max_corrections;
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      auto& s = self->state;
      auto& in = *box;
      if (in.sql.corrections >= s.max_corrections) {
        in.sql.last_error = std::move(in.pending_error);
        in.pending_error.clear();
        domain::add_warning(in, "sql_corrections_exhausted");
        domain::finish(in, domain::status_kind::error,
                       exhausted_text(in.sql.corrections));
        return std::move(box);
      }
      llm_request req;
      req.request_id = in.request.request_id;
      req.prompt = "sql_correct";
      req.prompt_version = s.prompt_version;
      req.key = in.request.question;
      req.system = s.system_prompt;
      req.user = "<question>" + domain::escape_xml(in.request.question)
                 + "</question>\n<sql>" + domain::escape_xml(in.sql.query)
                 + "</sql>\n<error>" + domain::escape_xml(in.pending_error)
                 + "</error>";
      req.chaos = in.request.chaos;
      req.schema = std::string{domain::sql_reply_schema};
      req.max_tokens = 800;
      // The k-th correction is fixture ordinal 2k, its re-ask 2k+1.
      req.ordinal = 2 * in.sql.corrections;
      auto reask = req.ordinal + 1;
      auto rp = self->make_response_promise<ask_box>();
      sql_nodes::ask_model(
        self, s.llm, std::move(req), std::make_shared<ask_box>(std::move(box)),
        rp, reask,
        [](std::string_view text) { return domain::parse_sql_reply(text); },
        [](ask_state& st, domain::sql_reply& reply) {
          if (reply.abstained) {
            st.sql.last_error = std::move(st.pending_error);
            st.pending_error.clear();
            domain::add_warning(st, "sql_abstained");
            domain::finish(st, domain::status_kind::refused,
                           std::string{abstained_text});
            return;
          }
          if (st.sql.original_query.empty())
            st.sql.original_query = st.sql.query;
          st.sql.query = std::move(reply.sql);
          st.sql.limit_applied = false;
          st.sql.last_error = std::move(st.pending_error);
          st.pending_error.clear();
          ++st.sql.corrections;
          if (!reply.follow_ups.empty())
            st.follow_ups = std::move(reply.follow_ups);
        });
      return rp;
    },
  };
}

} // namespace candor::actors
