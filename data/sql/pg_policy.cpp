// The PostgreSQL statement policy: libpg_query's parse tree (JSON) walked
// against the allowlist.

#include "data/sql/pg_policy.hpp"

#include "data/sql/pg_text_check.hpp"

#include <pg_query.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include <boost/json.hpp>

namespace candor::data {

namespace json = boost::json;
using domain::sql::policy_config;
using domain::sql::policy_result;
using domain::sql::verdict_kind;

std::set<std::string> postgres_sql_functions() {
  auto out = default_sql_functions();
  for (const char* f :
       {"date_trunc", "date_part", "extract", "to_char", "to_date",
        "to_number", "make_date", "btrim", "concat", "concat_ws",
        "string_agg", "greatest", "least", "split_part", "left", "right",
        "lpad", "rpad", "initcap", "floor", "ceil", "ceiling", "trunc", "mod",
        "power", "sqrt", "position", "strpos", "stddev", "variance",
        "percentile_cont", "percentile_disc", "bool_and", "bool_or",
        "every", "age", "date", "now"})
    out.insert(f);
  out.erase("now"); // the clock is not data
  return out;
}

bool postgres_risky_function(std::string_view name) {
  static const std::set<std::string, std::less<>> exact = {
    "set_config",      "current_setting", "version",        "dblink",
    "dblink_exec",     "dblink_connect",  "query_to_xml",   "query_to_json",
    "table_to_xml",    "cursor_to_xml",   "xpath",          "txid_current",
    "inet_server_addr", "inet_client_addr", "current_database",
    "current_schema",  "current_user",    "session_user",   "has_table_privilege",
    "has_column_privilege", "row_security_active", "to_regclass",
    "generate_series", "repeat",          "format"};
  if (exact.count(name) > 0)
    return true;
  auto starts = [&](std::string_view p) {
    return name.substr(0, p.size()) == p;
  };
  return starts("pg_") || starts("lo_") || starts("dblink") || starts("xml")
         || starts("json_populate") || starts("jsonb_populate");
}

namespace {

const std::set<std::string, std::less<>> reg_types = {
  "regclass", "regproc",     "regprocedure", "regoper",  "regoperator",
  "regtype",  "regnamespace", "regrole",     "regconfig", "regdictionary",
  "regcollation"};

/// The last String of a list of name nodes ({"String": {"sval": ...}}).
std::string last_name(const json::value& list) {
  std::string out;
  if (!list.is_array())
    return out;
  for (const auto& v : list.as_array())
    if (const auto* s = v.if_object() ? v.as_object().if_contains("String")
                                      : nullptr)
      if (const auto* sv = s->as_object().if_contains("sval"))
        out = std::string{sv->as_string()};
  return out;
}

size_t location_of(const json::object& o) {
  if (const auto* l = o.if_contains("location"); l && l->is_int64())
    return static_cast<size_t>(std::max<int64_t>(0, l->as_int64()));
  return 0;
}

class walker {
public:
  walker(std::string_view sql, const sql_allowlist& allow,
         const withheld_columns& withheld, const policy_config& cfg)
      : sql_(sql), allow_(allow), withheld_(withheld), cfg_(cfg) {
    for (const auto& [table, cols] : allow_.tables)
      for (const auto& c : cols)
        known_columns_.insert(c);
  }

  /// First pass: names the query defines itself (CTEs, aliases, output
  /// names), which a column reference may use.
  void collect(const json::value& v) {
    if (v.is_array()) {
      for (const auto& x : v.as_array())
        collect(x);
      return;
    }
    if (!v.is_object())
      return;
    for (const auto& [key, val] : v.as_object()) {
      if (key == "CommonTableExpr" && val.is_object()) {
        if (const auto* n = val.as_object().if_contains("ctename"))
          ctes_.insert(std::string{n->as_string()});
        if (const auto* cols = val.as_object().if_contains("aliascolnames"))
          add_names(*cols);
      } else if (key == "ResTarget" && val.is_object()) {
        if (const auto* n = val.as_object().if_contains("name"))
          defined_.insert(std::string{n->as_string()});
      } else if (key == "alias" && val.is_object()) {
        if (const auto* n = val.as_object().if_contains("aliasname"))
          defined_.insert(std::string{n->as_string()});
        if (const auto* cols = val.as_object().if_contains("colnames"))
          add_names(*cols);
      }
      collect(val);
    }
  }

  /// The rules, in two walks: the sources (tables, functions in FROM,
  /// statement shape) first, so that a forbidden table is named as such
  /// rather than by its columns; then everything else. Returns false at
  /// the first violation.
  bool check_all(const json::value& v) {
    sources_only_ = true;
    if (!check(v, 0))
      return false;
    sources_only_ = false;
    return check(v, 0);
  }

  bool check(const json::value& v, int depth) {
    if (depth > 16 * cfg_.max_depth)
      return fail(verdict_kind::block, "nesting_too_deep",
                  "the statement nests too deeply", 0);
    if (v.is_array()) {
      for (const auto& x : v.as_array())
        if (!check(x, depth + 1))
          return false;
      return true;
    }
    if (!v.is_object())
      return true;
    for (const auto& [key, val] : v.as_object()) {
      if (!val.is_object() && !val.is_array())
        continue;
      if (val.is_object() && !node(key, val.as_object()))
        return false;
      if (!check(val, depth + 1))
        return false;
    }
    return true;
  }

  policy_result result;

private:
  void add_names(const json::value& list) {
    if (!list.is_array())
      return;
    for (const auto& v : list.as_array())
      if (v.is_object())
        if (const auto* s = v.as_object().if_contains("String"))
          if (const auto* sv = s->as_object().if_contains("sval"))
            defined_.insert(std::string{sv->as_string()});
  }

  bool fail(verdict_kind kind, std::string rule, std::string message,
            size_t offset) {
    result.verdict = kind;
    result.rule = std::move(rule);
    result.message = std::move(message);
    result.offset = offset;
    return false;
  }

  bool node(std::string_view kind, const json::object& o) {
    bool source = kind == "SelectStmt" || kind == "RangeVar"
                  || kind == "RangeFunction" || kind == "JoinExpr";
    if (kind == "JoinExpr" && !sources_only_) {
      // USING (col): a withheld column read through the join.
      if (const auto* u = o.if_contains("usingClause"); u && u->is_array())
        for (const auto& v : u->as_array())
          if (v.is_object() && v.as_object().contains("String")) {
            std::string col{v.at("String").at("sval").as_string()};
            if (withheld_names_.count(col) > 0)
              return fail(verdict_kind::block, "denied_column",
                          "column '" + col + "' may not be read", 0);
          }
    }
    if (source != sources_only_)
      return true;
    if (kind == "SelectStmt") {
      if (++selects_ > cfg_.max_selects)
        return fail(verdict_kind::block, "too_many_selects",
                    "too many SELECTs in one statement", 0);
      if (o.contains("intoClause"))
        return fail(verdict_kind::block, "forbidden_keyword",
                    "SELECT INTO writes a table", 0);
      if (o.contains("lockingClause"))
        return fail(verdict_kind::block, "forbidden_keyword",
                    "FOR UPDATE / FOR SHARE lock rows", 0);
      if (const auto* w = o.if_contains("withClause"); w && w->is_object())
        if (const auto* r = w->as_object().if_contains("recursive");
            r && r->is_bool() && r->as_bool())
          return fail(verdict_kind::block, "recursive_cte",
                      "WITH RECURSIVE is not allowed", 0);
      if (const auto* from = o.if_contains("fromClause");
          from && from->is_array() && from->as_array().size() > 1)
        return fail(verdict_kind::block, "comma_join",
                    "join tables with JOIN ... ON, not with commas", 0);
      if (const auto* vals = o.if_contains("valuesLists");
          vals && vals->is_array()
          && static_cast<int>(vals->as_array().size()) > cfg_.max_in_list)
        return fail(verdict_kind::block, "in_list_too_long",
                    "too many rows in VALUES", 0);
      if (const auto* w = o.if_contains("withClause"); w && w->is_object())
        if (const auto* ctes = w->as_object().if_contains("ctes");
            ctes && ctes->is_array())
          for (const auto& cte : ctes->as_array()) {
            const auto* c = cte.is_object()
                              ? cte.as_object().if_contains("CommonTableExpr")
                              : nullptr;
            if (c == nullptr || !c->is_object())
              continue;
            std::string name{c->as_object().at("ctename").as_string()};
            if (const auto* q = c->as_object().if_contains("ctequery");
                q && reads(*q, name))
              return fail(verdict_kind::block, "recursive_cte",
                          "a WITH query may not read itself", 0);
          }
      if (const auto* lim = o.if_contains("limitCount"); lim && !literal(*lim))
        return fail(verdict_kind::block, "non_literal_limit",
                    "LIMIT must be a positive number", 0);
      if (const auto* off = o.if_contains("limitOffset"); off && !literal(*off))
        return fail(verdict_kind::block, "non_literal_limit",
                    "OFFSET must be a positive number", 0);
      return star_over_withheld(o);
    }
    if (kind == "RangeVar") {
      auto rel = o.if_contains("relname") ? std::string{o.at("relname").as_string()}
                                          : std::string{};
      auto off = location_of(o);
      if (const auto* s = o.if_contains("schemaname")) {
        std::string schema{s->as_string()};
        if (schema != "sales")
          return fail(verdict_kind::block, "schema_table",
                      "schema '" + schema + "' may not be read", off);
      } else if (ctes_.count(rel) > 0) {
        return true;
      }
      if (rel.rfind("pg_", 0) == 0 || rel == "information_schema")
        return fail(verdict_kind::block, "schema_table",
                    "system catalog '" + rel + "' may not be read", off);
      if (++tables_ > cfg_.max_table_refs)
        return fail(verdict_kind::block, "too_many_tables",
                    "too many table references", off);
      auto it = allow_.tables.find(rel);
      if (it == allow_.tables.end())
        return fail(verdict_kind::block, "table_not_allowed",
                    "table '" + rel + "' may not be read", off);
      if (auto w = withheld_.find(rel); w != withheld_.end())
        withheld_names_.insert(w->second.begin(), w->second.end());
      return true;
    }
    if (kind == "RangeFunction")
      return fail(verdict_kind::block, "table_valued_function",
                  "a function may not be used as a table", 0);
    if (kind == "JoinExpr") {
      if (const auto* n = o.if_contains("isNatural");
          n && n->is_bool() && n->as_bool())
        return fail(verdict_kind::block, "natural_join",
                    "NATURAL JOIN is not allowed; name the join columns", 0);
      const auto* quals = o.if_contains("quals");
      const auto* using_cols = o.if_contains("usingClause");
      if (quals == nullptr && using_cols == nullptr)
        return fail(verdict_kind::block, "cross_join",
                    "a join needs a condition (ON or USING)", 0);
      if (quals != nullptr && trivial(*quals))
        return fail(verdict_kind::block, "trivial_join_condition",
                    "the join condition must compare columns of both sides",
                    0);
      return true;
    }
    if (kind == "A_Expr") {
      if (const auto* k = o.if_contains("kind");
          k && k->is_string() && k->as_string() == "AEXPR_IN")
        if (const auto* r = o.if_contains("rexpr");
            r && r->is_object() && r->as_object().contains("List"))
          if (const auto* items = r->as_object().at("List").as_object()
                                    .if_contains("items");
              items && items->is_array()
              && static_cast<int>(items->as_array().size())
                   > cfg_.max_in_list)
            return fail(verdict_kind::block, "in_list_too_long",
                        "too many values in IN (...)", location_of(o));
      return true;
    }
    if (kind == "ParamRef")
      return fail(verdict_kind::block, "parameter",
                  "parameters ($1) are not allowed", location_of(o));
    if (kind == "SQLValueFunction") {
      std::string op = o.if_contains("op") ? std::string{o.at("op").as_string()}
                                           : std::string{};
      if (op.find("USER") != std::string::npos
          || op.find("ROLE") != std::string::npos
          || op.find("CATALOG") != std::string::npos
          || op.find("SCHEMA") != std::string::npos)
        return fail(verdict_kind::block, "risky_function",
                    "session information may not be read", location_of(o));
      return true;
    }
    if (kind == "TypeCast") {
      if (const auto* t = o.if_contains("typeName"); t && t->is_object())
        if (const auto* names = t->as_object().if_contains("names"))
          if (reg_types.count(last_name(*names)) > 0)
            return fail(verdict_kind::block, "risky_function",
                        "casts to " + last_name(*names)
                          + " look up the system catalogs",
                        location_of(o));
      return true;
    }
    if (kind == "FuncCall") {
      const auto* names = o.if_contains("funcname");
      if (names == nullptr)
        return true;
      auto name = last_name(*names);
      auto off = location_of(o);
      if (names->as_array().size() > 1) {
        // pg_catalog.extract is what EXTRACT(... FROM ...) parses to.
        auto first = names->as_array()[0];
        std::string schema = first.is_object()
                                 && first.as_object().contains("String")
                               ? std::string{first.at("String").at("sval")
                                               .as_string()}
                               : std::string{};
        if (schema != "pg_catalog")
          return fail(verdict_kind::block, "schema_table",
                      "functions of schema '" + schema + "' may not be called",
                      off);
      }
      if (postgres_risky_function(name))
        return fail(verdict_kind::block, "risky_function",
                    "function " + name + "() is not allowed", off);
      if (allow_.functions.count(name) == 0)
        return fail(verdict_kind::block, "function_not_allowed",
                    "function " + name + "() is not in the allowlist", off);
      return true;
    }
    if (kind == "ColumnRef") {
      const auto* fields = o.if_contains("fields");
      if (fields == nullptr || !fields->is_array()
          || fields->as_array().empty())
        return true;
      const auto& last = fields->as_array().back();
      if (last.is_object() && last.as_object().contains("A_Star"))
        return true; // judged per SELECT (star_over_withheld)
      auto name = last_name(*fields);
      // A withheld column of a table the statement reads is refused even
      // when the query also defines the name ("... AS email").
      if (withheld_names_.count(name) > 0)
        return fail(verdict_kind::block, "denied_column",
                    "column '" + name + "' may not be read", location_of(o));
      if (name.empty() || known_columns_.count(name) > 0
          || defined_.count(name) > 0)
        return true;
      return fail(verdict_kind::block, "denied_column",
                  "column '" + name + "' may not be read", location_of(o));
    }
    return true;
  }

  /// Whether a join condition compares nothing of both sides: no column at
  /// all ("ON 1 = 1"), or qualified columns of one table only ("ON a.id >
  /// 0").
  static bool trivial(const json::value& quals) {
    std::set<std::string> qualifiers;
    int refs = 0;
    int unqualified = 0;
    collect_refs(quals, qualifiers, refs, unqualified);
    if (refs == 0)
      return true;
    return unqualified == 0 && qualifiers.size() < 2;
  }

  static void collect_refs(const json::value& v, std::set<std::string>& q,
                           int& refs, int& unqualified) {
    if (v.is_array()) {
      for (const auto& x : v.as_array())
        collect_refs(x, q, refs, unqualified);
      return;
    }
    if (!v.is_object())
      return;
    for (const auto& [key, val] : v.as_object()) {
      if (key == "ColumnRef" && val.is_object()) {
        ++refs;
        const auto* f = val.as_object().if_contains("fields");
        if (f && f->is_array() && f->as_array().size() >= 2
            && f->as_array()[0].is_object()
            && f->as_array()[0].as_object().contains("String"))
          q.insert(std::string{
            f->as_array()[0].at("String").at("sval").as_string()});
        else
          ++unqualified;
        continue;
      }
      collect_refs(val, q, refs, unqualified);
    }
  }

  /// Whether `v` reads a relation called `name`.
  static bool reads(const json::value& v, const std::string& name) {
    if (v.is_array()) {
      for (const auto& x : v.as_array())
        if (reads(x, name))
          return true;
      return false;
    }
    if (!v.is_object())
      return false;
    for (const auto& [key, val] : v.as_object()) {
      if (key == "RangeVar" && val.is_object()) {
        const auto& rv = val.as_object();
        if (!rv.contains("schemaname") && rv.contains("relname")
            && rv.at("relname").as_string() == name)
          return true;
      }
      if (reads(val, name))
        return true;
    }
    return false;
  }

  /// A LIMIT or OFFSET that is a non-negative integer literal. (libpg_query
  /// leaves the value out of its JSON for 0, and for a negative literal
  /// too, so the text at the literal's location decides the sign.)
  bool literal(const json::value& v) const {
    const auto* c = v.is_object() ? v.as_object().if_contains("A_Const")
                                  : nullptr;
    if (c == nullptr || !c->is_object())
      return false;
    const auto* iv = c->as_object().if_contains("ival");
    if (iv == nullptr || !iv->is_object())
      return false;
    const auto* x = iv->as_object().if_contains("ival");
    if (x != nullptr)
      return x->is_int64() && x->as_int64() >= 0;
    auto at = location_of(c->as_object());
    return at < sql_.size() && sql_[at] != '-';
  }

  /// The tables a FROM item reads directly (through joins, not through
  /// subqueries, which are judged as SELECTs of their own).
  void direct_tables(const json::value& item, std::vector<std::string>& out) {
    if (!item.is_object())
      return;
    const auto& o = item.as_object();
    if (const auto* rv = o.if_contains("RangeVar"); rv && rv->is_object()) {
      if (const auto* n = rv->as_object().if_contains("relname"))
        out.emplace_back(n->as_string());
    } else if (const auto* j = o.if_contains("JoinExpr");
               j && j->is_object()) {
      if (const auto* l = j->as_object().if_contains("larg"))
        direct_tables(*l, out);
      if (const auto* r = j->as_object().if_contains("rarg"))
        direct_tables(*r, out);
    }
  }

  /// `*` in a SELECT whose own FROM reads a table with withheld columns
  /// would read them.
  bool star_over_withheld(const json::object& select) {
    const auto* targets = select.if_contains("targetList");
    if (targets == nullptr || !targets->is_array())
      return true;
    size_t star_at = 0;
    bool star = false;
    for (const auto& t : targets->as_array()) {
      const auto* rt = t.is_object() ? t.as_object().if_contains("ResTarget")
                                     : nullptr;
      const auto* val = rt && rt->is_object()
                          ? rt->as_object().if_contains("val")
                          : nullptr;
      const auto* cr = val && val->is_object()
                         ? val->as_object().if_contains("ColumnRef")
                         : nullptr;
      if (cr == nullptr || !cr->is_object())
        continue;
      const auto* fields = cr->as_object().if_contains("fields");
      if (fields && fields->is_array() && !fields->as_array().empty()
          && fields->as_array().back().is_object()
          && fields->as_array().back().as_object().contains("A_Star")) {
        star = true;
        star_at = location_of(cr->as_object());
      }
    }
    if (!star)
      return true;
    std::vector<std::string> tables;
    if (const auto* from = select.if_contains("fromClause");
        from && from->is_array())
      for (const auto& item : from->as_array())
        direct_tables(item, tables);
    for (const auto& t : tables)
      if (withheld_.count(t) > 0 && !withheld_.at(t).empty()
          && ctes_.count(t) == 0)
        return fail(verdict_kind::block, "denied_column",
                    "SELECT * on " + t
                      + " would read withheld columns; name the columns",
                    star_at);
    return true;
  }

private:
  std::string_view sql_;
  const sql_allowlist& allow_;
  const withheld_columns& withheld_;
  /// Withheld column names of the tables the statement reads.
  std::set<std::string> withheld_names_;
  const policy_config& cfg_;
  std::set<std::string> known_columns_;
  std::set<std::string> defined_;
  std::set<std::string> ctes_;
  int selects_ = 0;
  int tables_ = 0;
  bool sources_only_ = true;
};

/// Whether `sql` has only white space and comments.
bool blank(std::string_view sql) {
  PgQueryScanResult r = pg_query_scan(std::string{sql}.c_str());
  bool empty = r.error == nullptr && r.pbuf.len <= 4;
  pg_query_free_scan_result(r);
  return empty;
}

} // namespace

domain::sql::policy_result
check_postgres_sql(std::string_view sql, const sql_allowlist& allow,
                   const withheld_columns& withheld,
                   const policy_config& cfg) {
  policy_result out;
  auto fail = [&](verdict_kind kind, std::string rule, std::string message,
                  size_t offset) {
    out.verdict = kind;
    out.rule = std::move(rule);
    out.message = std::move(message);
    out.offset = offset;
    return out;
  };
  if (sql.size() > cfg.max_bytes)
    return fail(verdict_kind::block, "input_too_long",
                "the statement is longer than "
                  + std::to_string(cfg.max_bytes) + " bytes",
                cfg.max_bytes);
  if (auto bad = text_problem(sql, cfg.max_depth); !bad.rule.empty())
    return fail(verdict_kind::block, bad.rule, bad.message, bad.offset);
  std::string text{sql};
  PgQueryParseResult parsed = pg_query_parse(text.c_str());
  struct freer {
    PgQueryParseResult& r;
    ~freer() {
      pg_query_free_parse_result(r);
    }
  } guard{parsed};
  if (parsed.error != nullptr)
    return fail(verdict_kind::correctable, "syntax_error",
                std::string{"syntax error: "} + parsed.error->message,
                parsed.error->cursorpos > 0
                  ? static_cast<size_t>(parsed.error->cursorpos - 1)
                  : 0);
  boost::system::error_code ec;
  json::parse_options deep;
  deep.max_depth = 2000; // the walker bounds the depth it accepts
  auto tree = json::parse(parsed.parse_tree, ec, {}, deep);
  if (ec || !tree.is_object())
    return fail(verdict_kind::block, "syntax_error",
                "the parse tree could not be read", 0);
  const auto* stmts = tree.as_object().if_contains("stmts");
  if (stmts == nullptr || !stmts->is_array() || stmts->as_array().empty())
    return fail(verdict_kind::correctable, "empty", "there is no statement",
                0);
  if (stmts->as_array().size() > 1)
    return fail(verdict_kind::block, "multiple_statements",
                "only one statement may be run", 0);
  const auto& raw = stmts->as_array()[0].as_object();
  const auto& stmt = raw.at("stmt").as_object();
  if (stmt.size() != 1 || !stmt.contains("SelectStmt"))
    return fail(verdict_kind::block, "not_select",
                "only SELECT (or WITH ... SELECT) may run, not "
                  + std::string{stmt.begin()->key()},
                0);
  if (stmt.at("SelectStmt").as_object().contains("valuesLists"))
    return fail(verdict_kind::block, "not_select",
                "only SELECT (or WITH ... SELECT) may run, not VALUES", 0);
  walker w{sql, allow, withheld, cfg};
  w.collect(stmt);
  if (!w.check_all(stmt))
    return w.result;
  // The outermost LIMIT.
  const auto& top = stmt.at("SelectStmt").as_object();
  // The statement's own text: from its location (after any leading ';'
  // or comment), its length when the parser gives one.
  size_t from = 0;
  if (const auto* l = raw.if_contains("stmt_location"); l && l->is_int64())
    from = std::min(sql.size(), static_cast<size_t>(
                                  std::max<int64_t>(0, l->as_int64())));
  size_t len = sql.size() - from;
  if (const auto* l = raw.if_contains("stmt_len");
      l && l->is_int64() && l->as_int64() > 0)
    len = std::min(len, static_cast<size_t>(l->as_int64()));
  std::string body{sql.substr(from, len)};
  while (!body.empty()
         && (body.back() == ';' || body.back() == ' ' || body.back() == '\n'))
    body.pop_back();
  out.sql = body;
  // The row bound is spliced into the text, never by wrapping the
  // statement in another SELECT: a wrapper would add nesting, so a
  // statement just inside the depth limits would no longer pass them.
  const auto max = std::to_string(cfg.max_limit);
  const auto* lim = top.if_contains("limitCount");
  if (lim == nullptr) {
    // On a line of its own: a '--' comment at the end must not swallow it.
    out.sql = body + "\nLIMIT " + max;
    out.limit_applied = true;
    return out;
  }
  const auto* c = lim->is_object() ? lim->as_object().if_contains("A_Const")
                                   : nullptr;
  const auto* iv = c && c->is_object() ? c->as_object().if_contains("ival")
                                       : nullptr;
  if (iv == nullptr)
    return fail(verdict_kind::block, "non_literal_limit",
                "LIMIT must be a number", 0);
  int64_t n = 0;
  if (const auto* x = iv->as_object().if_contains("ival"))
    n = x->as_int64();
  if (n <= cfg.max_limit)
    return out;
  // A larger literal is replaced where it stands (LIMIT or FETCH FIRST).
  const auto* at = c->as_object().if_contains("location");
  size_t pos = at && at->is_int64() && at->as_int64() >= 0
                 ? static_cast<size_t>(at->as_int64())
                 : sql.size();
  if (pos < from || pos >= from + body.size())
    return fail(verdict_kind::block, "non_literal_limit",
                "LIMIT must be a number", 0);
  size_t digits = pos - from;
  size_t end = digits;
  while (end < body.size() && body[end] >= '0' && body[end] <= '9')
    ++end;
  if (end == digits)
    return fail(verdict_kind::block, "non_literal_limit",
                "LIMIT must be a number", 0);
  out.sql = body.substr(0, digits) + max + body.substr(end);
  out.limit_applied = true;
  return out;
}

} // namespace candor::data
