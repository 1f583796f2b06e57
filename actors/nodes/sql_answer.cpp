// The sql_answer node: has the model explain the query's rows; zero rows
// or all-NULL rows end as no_results without a model call.

#include "actors/nodes/nodes.hpp"

#include <algorithm>

#include <caf/event_based_actor.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "actors/nodes/sql_common.hpp"
#include "domain/sql/contracts.hpp"
#include "domain/text.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;
using domain::cell;

bool all_null(const std::vector<std::vector<cell>>& rows) {
  for (auto& row : rows)
    for (auto& c : row)
      if (c.kind != cell::null)
        return false;
  return true;
}

boost::json::value cell_value(const cell& c) {
  switch (c.kind) {
    case cell::integer: return c.i;
    case cell::real: return c.r;
    case cell::text:
    case cell::blob: return boost::json::value(c.s);
    default: return nullptr;
  }
}

/// The result as the model sees it: `{"columns": [...], "rows": [...],
/// "rowCount": n, "rowsShown": m}`.
std::string result_json(const domain::sql_block& b, size_t shown) {
  boost::json::array cols;
  for (auto& c : b.columns)
    cols.push_back(boost::json::value(c));
  boost::json::array rows;
  for (size_t i = 0; i < shown; ++i) {
    boost::json::array r;
    for (auto& c : b.rows[i])
      r.push_back(cell_value(c));
    rows.push_back(std::move(r));
  }
  boost::json::object out{{"columns", std::move(cols)},
                          {"rows", std::move(rows)},
                          {"rowCount", b.row_count},
                          {"rowsShown", static_cast<int64_t>(shown)}};
  // The policy added or lowered the LIMIT: rowCount stops there, and an
  // answer counting rows must not take it for the number of matches.
  if (b.limit_applied) {
    out["limitApplied"] = true;
    out["note"] = "The system added or lowered this query's LIMIT: rowCount "
                  "counts the rows up to that limit only, not every row that "
                  "matches. Do not report it as a total.";
  }
  return boost::json::serialize(out);
}

std::string no_results_text(const std::string& sql, bool nulls) {
  return std::string{nulls ? "The query returned only empty (NULL) values"
                           : "The query returned no rows"}
         + ". That can mean there is no such data, but zero rows may also "
           "mean the query missed the question (a filter, period or join "
           "that does not match what you meant). Check the SQL that ran "
           "and ask again more precisely if needed: "
         + sql;
}

} // namespace

node_actor::behavior_type
sql_answer(node_actor::stateful_pointer<sql_answer_state> self, llm_actor llm,
           std::string prompt_version, std::string prompt_text,
           int32_t rows_to_model) {
  self->state.llm = std::move(llm);
  self->state.prompt_version = std::move(prompt_version);
  self->state.system_prompt = std::move(prompt_text);
  self->state.rows_to_model = std::max(rows_to_model, 1);
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      auto& s = self->state;
      auto& in = *box;
      if (in.sql.rows.empty() || in.sql.row_count == 0
          || all_null(in.sql.rows)) {
        // No model call: there is nothing to explain.
        in.follow_ups.clear();
        domain::finish(in, domain::status_kind::no_results,
                       no_results_text(in.sql.query, !in.sql.rows.empty()));
        return std::move(box);
      }
      auto shown
        = std::min(in.sql.rows.size(), static_cast<size_t>(s.rows_to_model));
      llm_request req;
      req.request_id = in.request.request_id;
      req.prompt = "sql_answer";
      req.prompt_version = s.prompt_version;
      req.key = in.request.question;
      req.chaos = in.request.chaos;
      if (!s.system_prompt.empty()) { // empty: no model reads it
        req.system = s.system_prompt;
        req.user = "<question>" + domain::escape_xml(in.request.question)
                   + "</question>\n<sql>" + domain::escape_xml(in.sql.query)
                   + "</sql>\n<result>"
                   + domain::escape_xml(result_json(in.sql, shown))
                   + "</result>";
        req.schema = std::string{domain::sql_answer_schema};
      }
      req.max_tokens = 600;
      req.sql = in.sql;
      req.ordinal = 0;
      auto rp = self->make_response_promise<ask_box>();
      sql_nodes::ask_model(
        self, s.llm, std::move(req), std::make_shared<ask_box>(std::move(box)),
        rp, 1,
        [](std::string_view text) {
          return domain::parse_sql_answer_reply(text);
        },
        [](ask_state& st, domain::sql_answer_reply& reply) {
          st.answer = std::move(reply.answer);
          st.follow_ups = std::move(reply.follow_ups);
          st.status = domain::status_kind::answered;
        });
      return rp;
    },
  };
}

} // namespace candor::actors
