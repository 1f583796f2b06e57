// The sql_validate node: the static SQL policy, the validation connection
// and the catalog's value domains, in that order, with an audit row for
// every statement it does not let through.

#include "actors/nodes/nodes.hpp"

#include <caf/event_based_actor.hpp>

#include "actors/nodes/sql_common.hpp"
#include "data/sales/catalog.hpp"
#include "data/sql/domain_check.hpp"
#include "data/sql/guard.hpp"
#include "data/sql/pg_policy.hpp"
#include "domain/sql/policy.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;
using domain::sql::verdict_kind;
using self_ptr = node_actor::stateful_pointer<sql_validate_state>;

void audit(self_ptr self, const ask_state& st, std::string sql,
           std::string verdict, std::string layer, std::string reason) {
  if (self->state.ledger)
    self->send(self->state.ledger, atom::put_v,
               sql_nodes::audit_row(st, std::move(sql), std::move(verdict),
                                    std::move(layer), std::move(reason)));
}

std::string policy_block_text(const domain::sql::policy_result& r,
                              bool caller) {
  if (caller)
    return "This query was blocked: it broke the query policy (" + r.rule
           + ": " + r.message + "). It was not run.";
  return "This data question was blocked: the generated query broke the "
         "query policy ("
         + r.rule + ": " + r.message
         + "). It was not run and was not sent back to the model.";
}

std::string authorizer_block_text(const data::guard_result& r, bool caller) {
  std::string what;
  if (r.rule == "denied_column" || r.rule == "denied_table")
    what = "it tried to read data that may not be read (personal data, or "
           "a table or column outside the catalog)";
  else
    what = "the database refused it as outside the allowed operations";
  if (caller)
    return "This query was blocked: " + what + " (" + r.rule
           + "). It was not run.";
  return "This data question was blocked: " + what + " (" + r.rule
         + "). The query was not run and was not sent back to the model.";
}

/// SQL written by the caller (MCP query_sales) enters the graph here, as
/// the data route's query.
void adopt_caller_sql(ask_state& st) {
  if (st.request.sql.empty() || st.has_sql)
    return;
  st.route = domain::route_kind::data;
  st.route_reason = "SQL written by the caller (MCP query_sales).";
  st.has_sql = true;
  st.sql.query = st.request.sql;
}

/// A correctable problem: sql_correct asks the model to fix a model's
/// query; the caller's query is never rewritten, it ends as `error`.
void correctable(ask_state& st, const std::string& message) {
  if (st.request.sql.empty()) {
    st.pending_error = message;
    return;
  }
  st.sql.last_error = message;
  domain::add_warning(st, "sql_not_valid");
  domain::finish(st, domain::status_kind::error,
                 "The query was not run: " + message);
}

} // namespace

node_actor::behavior_type
sql_validate(node_actor::stateful_pointer<sql_validate_state> self,
             std::string sales_db, std::shared_ptr<const data::catalog> cat,
             ledger_actor ledger, std::string backend) {
  auto& s = self->state;
  s.cat = std::move(cat);
  s.ledger = std::move(ledger);
  if (s.cat && backend == "postgres") {
    s.pg = std::make_shared<const data::postgres_rules>(
      data::postgres_rules::from(*s.cat));
  } else if (s.cat) {
    data::sql_allowlist allow{s.cat->allowed_columns(),
                              data::default_sql_functions()};
    // Nothing writes the sales database while the server runs: open it
    // immutable (no file locks per statement).
    auto guard = data::sql_guard::open(sales_db, std::move(allow), {}, true);
    if (guard)
      s.guard = std::make_shared<data::sql_guard>(std::move(*guard));
    else
      s.open_error = guard.err().message;
  } else {
    s.open_error = "no sales catalog";
  }
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      auto& s = self->state;
      auto& st = *box;
      adopt_caller_sql(st);
      if (!s.guard && !s.pg)
        return to_caf(domain::ec::internal,
                      "sql_validate has no validation connection: "
                        + s.open_error);
      if (!st.has_sql || st.sql.query.empty())
        return to_caf(domain::ec::internal, "sql_validate got no query");
      st.pending_error.clear();
      // Layer 1: the static policy (pure). On PostgreSQL it parses with
      // the server's own parser; the server's layers (the role's grants,
      // the READ ONLY transaction, statement_timeout) stand where the
      // SQLite validation connection stands.
      auto policy = s.pg ? s.pg->check(st.sql.query)
                         : domain::sql::check_sql(st.sql.query);
      if (policy.verdict == verdict_kind::block) {
        audit(self, st, st.sql.query, "block", "sql_policy",
              policy.rule + ": " + policy.message);
        domain::block(st, domain::layer_kind::sql_policy,
                      {"sql_policy:" + policy.rule},
                      policy_block_text(policy, !st.request.sql.empty()));
        return std::move(box);
      }
      if (policy.verdict == verdict_kind::correctable) {
        audit(self, st, st.sql.query, "correctable", "sql_policy",
              policy.rule + ": " + policy.message);
        correctable(st, policy.message);
        return std::move(box);
      }
      st.sql.query = policy.sql;
      st.sql.limit_applied = policy.limit_applied;
      // Layer 2: the validation connection (authorizer and bytecode audit).
      auto guarded = s.guard ? s.guard->check(st.sql.query)
                             : data::guard_result{};
      if (guarded.verdict == verdict_kind::block) {
        audit(self, st, st.sql.query, "block", "sql_authorizer",
              guarded.rule + ": " + guarded.message);
        domain::block(st, domain::layer_kind::sql_authorizer,
                      {"sql_authorizer:" + guarded.rule},
                      authorizer_block_text(guarded, !st.request.sql.empty()));
        return std::move(box);
      }
      if (guarded.verdict == verdict_kind::correctable) {
        audit(self, st, st.sql.query, "correctable", "sql_authorizer",
              guarded.rule + ": " + guarded.message);
        correctable(st, guarded.message);
        return std::move(box);
      }
      // The catalog: literals inside declared value domains.
      if (auto v = data::check_value_domains(st.sql.query, *s.cat)) {
        audit(self, st, st.sql.query, "block", "catalog_domain", v->message);
        domain::add_warning(st, "sql_value_outside_domain");
        domain::finish(st, domain::status_kind::refused, v->message);
        return std::move(box);
      }
      return std::move(box);
    },
  };
}

} // namespace candor::actors
