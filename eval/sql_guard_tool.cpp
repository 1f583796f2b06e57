// The core of `candor sql-guard`: reads statements as JSON lines and prints
// what every SQL defence layer decides about each.

#include "eval/sql_guard_tool.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

#include <boost/json.hpp>

#include "data/sales/catalog.hpp"
#include "data/pg/session.hpp"
#include "data/sql/guard.hpp"
#include "data/sql/pg_policy.hpp"
#include "domain/json_text.hpp"
#include "domain/sql/policy.hpp"
#include "eval/layers/executor_layer.hpp"

namespace candor::eval {

namespace {

namespace json = boost::json;
using domain::sql::verdict_kind;

/// One input line, read without ever holding more than the limit plus one
/// byte of it.
struct input_line {
  std::string text;
  bool too_long = false;
};

/// Reads up to the next '\n' (consumed, not stored). Returns nothing at
/// the end of the input.
std::optional<input_line> read_line(std::istream& in) {
  auto* buf = in.rdbuf();
  if (buf == nullptr)
    return std::nullopt;
  input_line result;
  bool any = false;
  for (;;) {
    auto c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      break;
    }
    any = true;
    if (c == '\n')
      break;
    if (result.text.size() < guard_tool_max_line + 1)
      result.text.push_back(std::char_traits<char>::to_char_type(c));
  }
  if (!any)
    return std::nullopt;
  if (!result.text.empty() && result.text.back() == '\r')
    result.text.pop_back();
  result.too_long = result.text.size() > guard_tool_max_line;
  return result;
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

json::object layer_json(verdict_kind verdict, std::string_view rule,
                        std::string_view message) {
  json::object obj;
  obj["verdict"] = domain::sql::to_string(verdict);
  if (rule.empty())
    obj["rule"] = nullptr;
  else
    obj["rule"] = rule;
  if (message.empty())
    obj["message"] = nullptr;
  else
    obj["message"] = message;
  return obj;
}

json::object bad_input(json::value id, int64_t line, std::string reason) {
  json::object obj;
  obj["id"] = std::move(id);
  obj["line"] = line;
  obj["verdict"] = "error";
  obj["reason"] = std::move(reason);
  return obj;
}

/// The executor layer's verdict as the tool prints it.
json::object executor_json(const executor_verdict& v) {
  json::object obj;
  obj["verdict"] = v.verdict;
  if (v.verdict == "not_available") {
    obj["message"] = v.message;
    return obj;
  }
  // json::value(nullptr), not json::value{nullptr}: braces pick the
  // initializer-list constructor and make the array [null].
  obj["rule"] = v.rule.empty() ? json::value(nullptr) : json::value(v.rule);
  obj["message"]
    = v.message.empty() ? json::value(nullptr) : json::value(v.message);
  if (v.ran()) {
    obj["rowCount"] = v.row_count;
    obj["truncated"] = v.truncated;
    obj["elapsedUs"] = v.elapsed_us;
  }
  return obj;
}

/// Sets the overall verdict of `obj` from the first layer that does not
/// allow (`layer` empty: every layer allowed).
void decide(json::object& obj, guard_tool_summary& summary,
            verdict_kind verdict, std::string_view layer,
            std::string_view rule, std::string_view message) {
  if (layer.empty()) {
    obj["verdict"] = "allow";
    obj["layer"] = nullptr;
    obj["rule"] = nullptr;
    obj["reason"] = nullptr;
    ++summary.allowed;
    return;
  }
  if (verdict == verdict_kind::block) {
    obj["verdict"] = "block";
    ++summary.blocked;
  } else {
    obj["verdict"] = "error";
    ++summary.errors;
  }
  obj["layer"] = layer;
  obj["rule"] = rule;
  obj["reason"] = message;
}

/// Judges one statement with every layer and builds its output line.
json::object judge(json::value id, int64_t line, std::string_view sql,
                   data::sql_guard& guard, executor_layer& exec,
                   guard_tool_summary& summary) {
  auto policy = domain::sql::check_sql(sql);
  auto guarded
    = guard.check(policy.allowed() ? std::string_view{policy.sql} : sql);
  json::object layers;
  auto static_layer = layer_json(policy.verdict, policy.rule, policy.message);
  if (policy.allowed()) {
    static_layer["sql"] = policy.sql;
    static_layer["limit_applied"] = policy.limit_applied;
  } else {
    static_layer["offset"] = policy.offset;
  }
  layers["static_policy"] = std::move(static_layer);
  auto auth_layer = layer_json(guarded.verdict, guarded.rule, guarded.message);
  auth_layer["stage"]
    = guarded.stage.empty() ? json::value(nullptr) : json::value(guarded.stage);
  if (guarded.allowed())
    auth_layer["plan"] = guard.query_plan(policy.sql);
  layers["authorizer"] = std::move(auth_layer);
  auto executor = executor_json(
    exec.judge(policy.allowed() ? std::string_view{policy.sql} : sql));
  bool executor_blocks
    = executor["verdict"] == "block" || executor["verdict"] == "error";
  json::object executor_reason;
  if (executor_blocks) {
    executor_reason["rule"] = executor["rule"];
    executor_reason["message"] = executor["message"];
  }
  layers["executor"] = std::move(executor);
  json::object obj;
  obj["id"] = std::move(id);
  obj["line"] = line;
  if (!policy.allowed()) {
    decide(obj, summary, policy.verdict, "sql_policy", policy.rule,
           policy.message);
  } else if (!guarded.allowed()) {
    decide(obj, summary, guarded.verdict, "sql_authorizer", guarded.rule,
           guarded.message);
  } else if (executor_blocks) {
    decide(obj, summary, verdict_kind::block, "sql_executor",
           executor_reason["rule"].as_string(),
           executor_reason["message"].as_string());
  } else {
    decide(obj, summary, verdict_kind::allow, {}, {}, {});
  }
  obj["layers"] = std::move(layers);
  return obj;
}

/// The id of an over-long line, when `"id"` is its first member and a
/// string or number that ends within the stored prefix.
std::optional<json::value> id_from_prefix(std::string_view text) {
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size()
           && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
      ++i;
  };
  auto expect = [&](std::string_view s) {
    skip();
    if (text.substr(i, s.size()) != s)
      return false;
    i += s.size();
    return true;
  };
  if (!expect("{") || !expect("\"id\"") || !expect(":"))
    return std::nullopt;
  skip();
  size_t start = i;
  if (i < text.size() && text[i] == '"') {
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\')
        ++i;
    if (i >= text.size())
      return std::nullopt;
    ++i;
  } else {
    while (i < text.size()
           && (std::isdigit(static_cast<unsigned char>(text[i])) != 0
               || text[i] == '-' || text[i] == '+' || text[i] == '.'
               || text[i] == 'e' || text[i] == 'E'))
      ++i;
  }
  std::error_code ec;
  auto id = json::parse(text.substr(start, i - start), ec);
  if (ec || (!id.is_string() && !id.is_number()))
    return std::nullopt;
  return id;
}

/// Judges one valid statement: (id, line, sql) -> the output line.
using judge_fn
  = std::function<json::object(json::value, int64_t, std::string_view)>;

/// Validates one non-blank line and judges its statement.
json::object handle_line(const input_line& in, int64_t line,
                         const judge_fn& judge_one,
                         guard_tool_summary& summary) {
  auto fail = [&](json::value id, std::string reason) {
    ++summary.errors;
    return bad_input(std::move(id), line, std::move(reason));
  };
  if (in.too_long) {
    auto reason = "line longer than " + std::to_string(guard_tool_max_line)
                  + " bytes, not judged";
    if (auto id = id_from_prefix(in.text))
      return fail(std::move(*id), std::move(reason));
    return fail(nullptr, reason
                           + " (its id could not be read: \"id\" must be "
                             "the first member to be reported)");
  }
  std::error_code ec;
  auto doc = json::parse(in.text, ec);
  if (ec)
    return fail(nullptr, "not JSON: " + ec.message());
  auto* obj = doc.if_object();
  if (obj == nullptr)
    return fail(nullptr, "expected a JSON object with \"id\" and \"sql\"");
  // Two "sql" members: which one would be judged? Neither.
  if (auto dup = domain::duplicate_member(in.text))
    return fail(nullptr, "\"" + *dup + "\" appears more than once");
  json::value id = nullptr;
  if (auto* x = obj->if_contains("id")) {
    if (!x->is_string() && !x->is_number())
      return fail(nullptr, "\"id\" must be a string or a number");
    id = *x;
  }
  auto* sql = obj->if_contains("sql");
  if (sql == nullptr)
    return fail(std::move(id), "missing \"sql\"");
  auto* text = sql->if_string();
  if (text == nullptr)
    return fail(std::move(id), "\"sql\" must be a string");
  if (is_blank(*text))
    return fail(std::move(id), "\"sql\" is empty");
  return judge_one(std::move(id), line, *text);
}

/// Reads the lines of `in` and prints each one's judgement.
domain::outcome<guard_tool_summary>
judge_lines(std::istream& in, std::ostream& out, const judge_fn& judge_one,
            guard_tool_summary& summary) {
  int64_t line = 0;
  while (auto next = read_line(in)) {
    ++line;
    if (!next->too_long && is_blank(next->text))
      continue;
    auto obj = handle_line(*next, line, judge_one, summary);
    out << json::serialize(obj) << '\n';
    out.flush();
    if (!out)
      return domain::make_error(domain::ec::internal,
                                "cannot write the sql-guard output");
  }
  if (in.bad())
    return domain::make_error(domain::ec::internal,
                              "cannot read the sql-guard input");
  return summary;
}

/// A run on the warehouse as a layer: "allow" with the row count when it
/// ran; "block" with the SQLSTATE's rule when the server refused it.
json::object server_layer(const domain::outcome<domain::sql_exec_result>& r) {
  json::object obj;
  if (r) {
    obj["verdict"] = "allow";
    obj["rule"] = nullptr;
    obj["message"] = nullptr;
    obj["rowCount"] = r->row_count;
    obj["truncated"] = r->truncated;
    obj["elapsedUs"] = r->elapsed_us;
    return obj;
  }
  auto& m = r.err().message;
  std::string rule = std::string{domain::to_string(r.err().code)};
  if (m.rfind("postgres 42501:", 0) == 0)
    rule = "role_privilege";
  else if (m.rfind("postgres 25006:", 0) == 0)
    rule = "read_only_transaction";
  obj["verdict"] = "block";
  obj["rule"] = rule;
  obj["message"] = m;
  return obj;
}

/// Judges one statement on the PostgreSQL warehouse: the pg_query policy;
/// the role's privileges alone (the statement run in a READ WRITE
/// transaction that is rolled back); the executor as on the request path
/// (READ ONLY, statement_timeout, deadline).
json::object judge_postgres(json::value id, int64_t line, std::string_view sql,
                            const data::postgres_rules& rules,
                            data::pg::session& probe,
                            data::pg::session& reader,
                            const guard_tool_options& opts,
                            guard_tool_summary& summary) {
  auto policy = rules.check(sql);
  json::object layers;
  auto static_layer = layer_json(policy.verdict, policy.rule, policy.message);
  if (policy.allowed()) {
    static_layer["sql"] = policy.sql;
    static_layer["limit_applied"] = policy.limit_applied;
  }
  layers["static_policy"] = std::move(static_layer);
  domain::sql_exec_request req;
  req.sql = policy.allowed() ? policy.sql : std::string{sql};
  req.max_rows = opts.max_rows;
  auto deadline = std::chrono::milliseconds{opts.deadline_ms};
  auto reopen = [&](data::pg::session& s) {
    if (!s.running())
      if (auto again = data::pg::session::open(opts.postgres_dsn, deadline))
        s = std::move(*again);
  };
  reopen(probe);
  auto probed = probe.run_read_write_probe(req, deadline);
  auto role = server_layer(probed);
  if (probed && data::pg::skipped_for_privileges(probe.notices())) {
    role["verdict"] = "block";
    role["rule"] = "role_privilege";
    role["message"] = "ran but skipped every table: " + probe.notices().front();
  }
  reopen(reader);
  auto executor = server_layer(reader.run(req, deadline));
  bool role_blocks = role["rule"] == "role_privilege";
  bool executor_blocks = executor["verdict"] == "block";
  json::object obj;
  obj["id"] = std::move(id);
  obj["line"] = line;
  if (!policy.allowed())
    decide(obj, summary, policy.verdict, "sql_policy", policy.rule,
           policy.message);
  else if (role_blocks)
    decide(obj, summary, verdict_kind::block, "role_privileges",
           role["rule"].as_string(), role["message"].as_string());
  else if (executor_blocks)
    decide(obj, summary, verdict_kind::block, "sql_executor",
           executor["rule"].as_string(), executor["message"].as_string());
  else
    decide(obj, summary, verdict_kind::allow, {}, {}, {});
  layers["role_privileges"] = std::move(role);
  layers["executor"] = std::move(executor);
  obj["layers"] = std::move(layers);
  return obj;
}

} // namespace

domain::outcome<guard_tool_summary>
run_sql_guard_tool(std::istream& in, std::ostream& out,
                   const std::string& sales_db_path,
                   const guard_tool_options& opts) {
  auto cat = data::catalog::load_default();
  if (!cat)
    return cat.err();
  data::sql_allowlist allow{cat->allowed_columns(),
                            data::default_sql_functions()};
  auto guard = data::sql_guard::open(sales_db_path, std::move(allow));
  if (!guard)
    return domain::make_error(domain::ec::storage_failed,
                              "cannot read the sales database '" + sales_db_path
                                + "': " + guard.err().message);
  auto settings = opts.executor;
  if (settings)
    settings->db_path = sales_db_path;
  executor_layer exec{std::move(settings), opts.deadline_ms, opts.max_rows};
  guard_tool_summary summary;
  return judge_lines(
    in, out,
    [&](json::value id, int64_t line, std::string_view sql) {
      return judge(std::move(id), line, sql, *guard, exec, summary);
    },
    summary);
}

domain::outcome<guard_tool_summary>
run_sql_guard_tool_postgres(std::istream& in, std::ostream& out,
                            const guard_tool_options& opts) {
  auto cat = data::catalog::load_default();
  if (!cat)
    return cat.err();
  auto rules = data::postgres_rules::from(*cat);
  auto timeout = std::chrono::milliseconds{std::max<int64_t>(opts.deadline_ms, 1000)};
  auto probe = data::pg::session::open(opts.postgres_dsn, timeout);
  if (!probe)
    return probe.err();
  auto reader = data::pg::session::open(opts.postgres_dsn, timeout);
  if (!reader)
    return reader.err();
  guard_tool_summary summary;
  return judge_lines(
    in, out,
    [&](json::value id, int64_t line, std::string_view sql) {
      return judge_postgres(std::move(id), line, sql, rules, *probe, *reader,
                            opts, summary);
    },
    summary);
}

} // namespace candor::eval
