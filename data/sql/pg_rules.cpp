// The PostgreSQL statement policy as the sandbox applies it: its rules
// from the catalog, and a statement PostgreSQL cannot parse judged by the
// SQLite policy and the catalog's withheld names (see pg_policy.hpp).

#include "data/sql/pg_policy.hpp"

#include "data/sales/catalog.hpp"
#include "domain/sql/lexer.hpp"

namespace candor::data {

using domain::sql::verdict_kind;

postgres_rules postgres_rules::from(const catalog& cat) {
  postgres_rules r;
  r.allow.tables = cat.allowed_columns();
  r.allow.functions = postgres_sql_functions();
  for (const auto& t : cat.tables())
    for (const auto& d : t.denied_columns)
      r.withheld[t.name].insert(d.name);
  for (const auto& d : cat.denied_tables())
    r.denied_tables.insert(d.name);
  return r;
}

domain::sql::policy_result
postgres_rules::check(std::string_view sql,
                      const domain::sql::policy_config& cfg) const {
  auto r = check_postgres_sql(sql, allow, withheld, cfg);
  if (r.verdict != verdict_kind::correctable || r.rule != "syntax_error")
    return r;
  auto unparsed = "PostgreSQL cannot parse it (" + r.message + ")";
  auto blocked = [&](std::string rule, std::string why) {
    r.verdict = verdict_kind::block;
    r.rule = std::move(rule);
    r.message = unparsed + " and " + std::move(why);
    return r;
  };
  auto sqlite = domain::sql::check_sql(sql, cfg);
  if (sqlite.verdict == verdict_kind::block)
    return blocked(sqlite.rule, "the SQLite policy blocks it: "
                                  + sqlite.message);
  auto lexed = domain::sql::lex(sql);
  for (const auto& t : lexed.tokens) {
    if (!t.is_word())
      continue;
    if (denied_tables.count(t.name) > 0)
      return blocked("denied_table", "it names the table " + t.name
                                       + ", which may not be read");
    for (const auto& [table, cols] : withheld)
      if (cols.count(t.name) > 0)
        return blocked("denied_column", "it names " + table + "." + t.name
                                          + ", which may not be read");
  }
  return r;
}

} // namespace candor::data
