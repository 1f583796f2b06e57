// Helpers shared by the data-branch nodes: the schema placeholder in
// prompts and the SQL audit row of a request.

#include "actors/nodes/sql_common.hpp"

#include "data/clock.hpp"
#include "domain/log_mask.hpp"

namespace candor::actors::sql_nodes {

std::string fill_schema(std::string text, std::string_view schema) {
  constexpr std::string_view placeholder = "{{schema}}";
  for (auto pos = text.find(placeholder); pos != std::string::npos;
       pos = text.find(placeholder, pos + schema.size()))
    text.replace(pos, placeholder.size(), schema);
  return text;
}

domain::sql_audit_record audit_row(const domain::ask_state& st, std::string sql,
                                   std::string verdict, std::string layer,
                                   std::string reason, int64_t rows,
                                   int64_t latency_us) {
  domain::sql_audit_record rec;
  rec.request_id = st.request.request_id;
  rec.ts_us = data::wall_us();
  // Masked like the question: a literal the SQL copied from it (an e-mail
  // address, a phone number) must not reach the ledger and /runs in clear.
  rec.sql
    = domain::may_hold_secret(sql) ? domain::mask_secrets(sql) : std::move(sql);
  rec.verdict = std::move(verdict);
  rec.layer = std::move(layer);
  rec.reason = domain::may_hold_secret(reason) ? domain::mask_secrets(reason)
                                               : std::move(reason);
  rec.rows = rows;
  rec.latency_us = latency_us;
  return rec;
}

void model_reply_unusable(domain::ask_state& st, std::string_view warning) {
  domain::add_warning(st, std::string{warning});
  domain::finish(st, domain::status_kind::error,
                 "The model's reply for this data question could not be "
                 "used, so no answer was given rather than a guess.");
}

} // namespace candor::actors::sql_nodes
