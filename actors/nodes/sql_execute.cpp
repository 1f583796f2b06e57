// The sql_execute node: runs the validated query through the SQL sandbox
// and keeps at most 50 rows for the response.

#include "actors/nodes/nodes.hpp"

#include <algorithm>

#include <caf/event_based_actor.hpp>

#include "data/sql/executor.hpp"
#include "domain/sql/policy.hpp"
#include "actors/nodes/sql_common.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;
using self_ptr = node_actor::stateful_pointer<sql_execute_state>;

/// Rows a response may carry (the response schema's limit).
constexpr size_t response_rows = 50;

void audit(self_ptr self, const ask_state& st, std::string verdict,
           std::string reason, int64_t rows, int64_t latency_us) {
  if (self->state.ledger)
    self->send(self->state.ledger, atom::put_v,
               sql_nodes::audit_row(st, st.sql.query, std::move(verdict),
                                    "executor", std::move(reason), rows,
                                    latency_us));
}

/// True for a run-time SQLite error the model can fix by rewriting the
/// query (the validation connection catches these first; a mismatch
/// between it and the executor is the only way here).
bool correctable(const std::string& message) {
  for (auto* needle : {"no such column", "no such table", "no such function",
                       "syntax error", "ambiguous column name",
                       "misuse of aggregate", "wrong number of arguments"})
    if (message.find(needle) != std::string::npos)
      return true;
  // PostgreSQL's SQLSTATE (data::pg::session's "postgres CODE: ..."): an
  // unknown column, table or function, a syntax, grouping or type error.
  for (auto* code : {"42703", "42P01", "42883", "42601", "42702", "42803",
                     "42804", "42725"})
    if (message.rfind(std::string{"postgres "} + code + ":", 0) == 0)
      return true;
  return false;
}

/// The rule of a statement the PostgreSQL warehouse refused as a policy
/// matter (the role's grants, the READ ONLY transaction); empty otherwise.
/// Such a refusal blocks, like the SQLite authorizer's: it is never sent
/// back for correction.
std::string server_policy_rule(const std::string& message) {
  if (message.rfind("postgres 42501:", 0) == 0)
    return "role_privilege";
  if (message.rfind("postgres 25006:", 0) == 0)
    return "read_only_transaction";
  return {};
}

void fail(ask_state& st, std::string warning, std::string last_error,
          std::string text) {
  st.sql.last_error = std::move(last_error);
  domain::add_warning(st, std::move(warning));
  domain::finish(st, domain::status_kind::error, std::move(text));
}

} // namespace

node_actor::behavior_type
sql_execute(node_actor::stateful_pointer<sql_execute_state> self,
            sql_sandbox_actor sandbox, ledger_actor ledger, int32_t max_rows) {
  self->state.sandbox = std::move(sandbox);
  self->state.ledger = std::move(ledger);
  self->state.max_rows = max_rows;
  return {
    [self](atom::step, ask_box& in) -> caf::result<ask_box> {
      auto& s = self->state;
      if (!s.sandbox)
        return to_caf(domain::ec::internal, "sql_execute has no sandbox");
      sql_exec_request req;
      req.request_id = in->request.request_id;
      req.received_us = in->request.received_us;
      req.sql = in->sql.query;
      req.max_rows = s.max_rows;
      auto rp = self->make_response_promise<ask_box>();
      // Shared: CAF copies the handlers below several times.
      auto box = std::make_shared<ask_box>(std::move(in));
      auto t0 = std::chrono::steady_clock::now();
      auto micros = [t0] {
        return std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::steady_clock::now() - t0)
          .count();
      };
      self->request(s.sandbox, caf::infinite, atom::exec_v, std::move(req))
        .then(
          [self, rp, box, micros](sql_exec_result& res) mutable {
            auto& st = **box;
            audit(self, st, "allow", "executed", res.row_count, micros());
            auto& b = st.sql;
            b.columns = std::move(res.columns);
            b.row_count = std::max<int64_t>(
              res.row_count, static_cast<int64_t>(res.rows.size()));
            auto keep = std::min(res.rows.size(), response_rows);
            b.truncated = res.truncated || keep < res.rows.size();
            // The policy's LIMIT cut rows only when the query returned as
            // many rows as it allows; fewer rows were all there was.
            if (b.row_count < domain::sql::policy_config{}.max_limit)
              b.limit_applied = false;
            res.rows.resize(keep);
            b.rows = std::move(res.rows);
            // The caller's SQL (MCP query_sales): the rows are the
            // answer; no model words them.
            if (!st.request.sql.empty())
              domain::finish(st,
                             b.row_count == 0 ? domain::status_kind::no_results
                                              : domain::status_kind::answered,
                             "The query returned " + std::to_string(b.row_count)
                               + (b.row_count == 1 ? " row." : " rows."));
            rp.deliver(std::move(*box));
          },
          [self, rp, box, micros](caf::error& err) mutable {
            auto& st = **box;
            st.sql.limit_applied = false; // no rows: nothing was cut
            auto e = to_domain(err);
            auto reason
              = std::string{domain::to_string(e.code)} + ": " + e.message;
            switch (e.code) {
              case domain::ec::sql_timeout:
                audit(self, st, "error", reason, 0, micros());
                fail(st, "sql_timeout", e.message,
                     "The query took longer than the time allowed for one "
                     "query and was stopped, so there is no answer. Try "
                     "a narrower question (a shorter period, fewer "
                     "groups).");
                break;
              case domain::ec::sql_failed:
                if (auto rule = server_policy_rule(e.message);
                    !rule.empty()) {
                  audit(self, st, "block", reason, 0, micros());
                  domain::block(st, domain::layer_kind::sql_authorizer,
                                {"sql_authorizer:" + rule},
                                "This data question was blocked: the "
                                "database refused the query as outside "
                                "what candor may read or do ("
                                  + rule
                                  + "). The query was not sent back to the "
                                    "model.");
                  break;
                }
                if (correctable(e.message) && st.request.sql.empty()) {
                  audit(self, st, "correctable", reason, 0, micros());
                  st.pending_error = e.message;
                  break;
                }
                audit(self, st, "error", reason, 0, micros());
                fail(st, "sql_failed", e.message,
                     "The database stopped the query before it finished ("
                       + e.message + "), so there is no answer.");
                break;
              case domain::ec::sql_executor_failed:
                audit(self, st, "error", reason, 0, micros());
                if (data::is_executor_limit(e)) {
                  // e.g. "the executor reached its CPU time limit
                  // (RLIMIT_CPU 10 s ..., sql.executorCpuSeconds) and was
                  // killed by signal 24 (SIGXCPU)"
                  fail(st, "sql_resource_limit", e.message,
                       "The query was stopped because its executor "
                       "process reached its "
                         + e.message.substr(data::executor_limit_prefix.size())
                         + ", so there is no answer. A narrower question "
                           "(a shorter period, fewer groups) may stay "
                           "within the limit.");
                  break;
                }
                // The server's own failure, not the question's: the
                // sandbox already ran the statement again once on a
                // healthy executor where the first was lost. No answer-
                // shaped 200: an error per the error contract (503).
                rp.deliver(to_caf(domain::ec::sql_executor_failed,
                                  "the SQL executor failed (" + e.message
                                    + "), so the query was not answered; "
                                      "try again"));
                return;
              default:
                audit(self, st, "error", reason, 0, micros());
                rp.deliver(std::move(err));
                return;
            }
            rp.deliver(std::move(*box));
          });
      return rp;
    },
  };
}

} // namespace candor::actors
