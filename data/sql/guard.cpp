// The SQL guard (data/sql/guard.hpp): compiles a statement on a hardened
// connection under the authorizer, then audits its query plan and bytecode.
// The hardening and the authorizer: data/sql/authorizer.cpp.

#include "data/sql/guard.hpp"

#include <cstdint>
#include <unordered_map>
#include <utility>

#include "data/sql/guard_detail.hpp"
#include "data/sql/recent.hpp"

namespace candor::data {

namespace sql = domain::sql;

namespace {

using namespace sql_guard_detail;

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

struct stmt_deleter {
  void operator()(sqlite3_stmt* st) const noexcept {
    sqlite3_finalize(st);
  }
};

using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_deleter>;

/// Prepares the first statement of [sql, sql+n) with SQLITE_PREPARE_NO_VTAB
/// (no virtual table, eponymous or not, may be used).
int prepare(sqlite3* db, const char* sql, size_t n, stmt_ptr& out,
            const char** tail) {
  sqlite3_stmt* raw = nullptr;
  auto rc = sqlite3_prepare_v3(db, sql, static_cast<int>(n),
                               SQLITE_PREPARE_NO_VTAB, &raw, tail);
  out.reset(raw);
  return rc;
}

/// What the bytecode audit does with an opcode.
enum class op_kind : uint8_t {
  other,      ///< nothing to check
  open_read,  ///< OpenRead, ReopenIdx: a cursor on a database b-tree
  column,     ///< Column: a read through a cursor
  function,   ///< a scalar or aggregate function call
  transaction, ///< Transaction (P2 != 0 starts a write transaction)
  result_row, ///< ResultRow: the statement returns rows
  write,      ///< changes a b-tree: only ever on an ephemeral cursor
  denied,     ///< never in a read-only SELECT
};

/// The kind of the opcode `op` names. Opcodes a read-only SELECT never
/// needs are `denied`; those that change a b-tree are `write` (fine on the
/// ephemeral tables a SELECT builds: materialized subqueries, window
/// partitions, DISTINCT; never on a cursor of the database).
op_kind classify_opcode(std::string_view op) {
  static const std::unordered_map<std::string_view, op_kind> kinds = [] {
    std::unordered_map<std::string_view, op_kind> m;
    for (std::string_view name :
         {"OpenWrite",  "VOpen",       "VCreate",     "VDestroy",
          "VUpdate",    "VBegin",      "VRename",     "VFilter",
          "VColumn",    "VNext",       "Vacuum",      "ParseSchema",
          "JournalMode", "Expire",     "Destroy",     "Clear",
          "CreateBtree", "SqlExec",    "LoadAnalysis", "DropTable",
          "DropIndex",  "DropTrigger", "IntegrityCk", "SetCookie",
          "Pagecount",  "MaxPgcnt",    "Savepoint",   "AutoCommit",
          "Program",    "Checkpoint",  "ResetCount",  "FkCheck",
          "FkCounter"})
      m.emplace(name, op_kind::denied);
    for (std::string_view name :
         {"Insert", "Delete", "IdxInsert", "IdxDelete", "NewRowid", "RowCell"})
      m.emplace(name, op_kind::write);
    for (std::string_view name : {"Function", "PureFunc", "AggStep",
                                  "AggStep1", "AggFinal", "AggValue",
                                  "AggInverse"})
      m.emplace(name, op_kind::function);
    m.emplace("OpenRead", op_kind::open_read);
    m.emplace("ReopenIdx", op_kind::open_read);
    m.emplace("Column", op_kind::column);
    m.emplace("Transaction", op_kind::transaction);
    m.emplace("ResultRow", op_kind::result_row);
    return m;
  }();
  auto it = kinds.find(op);
  return it == kinds.end() ? op_kind::other : it->second;
}

/// Column names of a table in record order, which is what Column's P2
/// counts: declaration order for a rowid table, the PRIMARY KEY columns
/// first for a WITHOUT ROWID table. Generated columns shift positions in
/// ways the audit does not model, so a table that has any gets names no
/// allowlist holds, and every Column read on it is refused.
constexpr const char* table_columns_sql = R"sql(
  SELECT CASE WHEN EXISTS (SELECT 1 FROM pragma_table_xinfo(?1)
                           WHERE hidden <> 0)
              THEN '<unverifiable>' ELSE lower(name) END
  FROM pragma_table_xinfo(?1)
  ORDER BY CASE WHEN pk > 0 AND (SELECT wr FROM pragma_table_list
                                 WHERE schema = 'main' AND name = ?1)
                THEN pk ELSE 1000000 + cid END
)sql";

/// OPFLAG_P2ISREG (sqliteInt.h): P2 of an Open opcode names a register
/// holding the root page, so the b-tree cannot be known before it runs.
constexpr int64_t p2_is_register = 0x10;

} // namespace

// -- the guard ----------------------------------------------------------------

namespace {

/// What the bytecode audit knows about one b-tree of the schema.
struct btree_info {
  std::string table; ///< the table (for an index: its table)
  bool is_index = false;
  /// Column names by Column p2; for an index "" is the rowid and
  /// "<expr>" an indexed expression.
  std::vector<std::string> columns;
};

/// One instruction of a compiled program, as the bytecode audit keeps it:
/// only those it checks (opcodes of kind `other` are skipped), with the
/// opcode's kind and name, P1-P3, P5, and P4 for function calls (the
/// function's name).
struct instruction {
  op_kind kind = op_kind::other;
  std::string op;
  int64_t p1 = 0;
  int64_t p2 = 0;
  int64_t p3 = 0;
  std::string p4; ///< function calls only
  int64_t p5 = 0;
};

} // namespace

struct sql_guard::impl {
  database db;
  sql_authorizer auth;
  std::map<int64_t, btree_info> roots;
  /// The audited program, reused from statement to statement.
  std::vector<instruction> program_;
  /// The statements allowed lately, by exact text. A text's verdict is
  /// fixed for the life of the guard (its allowlist, its limits and its
  /// schema snapshot do not change), so a repeat gets the verdict its
  /// first compile earned. Only allowed verdicts are kept: a block is
  /// judged afresh each time (and says why each time).
  recent_statements<guard_result> allowed_{guard_memo_entries};

  impl(database d, sql_authorizer a) : db(std::move(d)), auth(std::move(a)) {
    // nop
  }

  guard_result check(std::string_view text);

private:
  guard_result compile(std::string_view text);
  guard_result classify(const std::string& message, int rc,
                        std::string_view stage);
  bool audit(sqlite3_stmt* explain, guard_result& out);
};

namespace {

guard_result make_result(sql::verdict_kind v, std::string rule,
                         std::string message, std::string_view stage) {
  guard_result r;
  r.verdict = v;
  r.rule = std::move(rule);
  r.message = std::move(message);
  r.stage = std::string{stage};
  return r;
}

std::string describe(const sql_denial& d) {
  if (d.rule == "denied_column")
    return "reading " + d.table + "." + d.column + " is not allowed";
  if (d.rule == "denied_table")
    return "reading the table " + d.table + " is not allowed";
  if (d.rule == "other_database")
    return "reading from " + d.table
           + " (not the main database) is not "
             "allowed";
  if (d.rule == "risky_function")
    return "the function " + d.function + "() is not allowed";
  if (d.rule == "unknown_function")
    return "the function " + d.function
           + "() is not available: use aggregates, window functions and "
             "the plain text, number, null and date functions";
  if (d.rule == "denied_opcode")
    return "the statement would need the " + d.action
           + " operation, which a read-only query never does";
  std::string what = "the " + d.action + " operation";
  if (!d.table.empty())
    what += " (" + d.table + ")";
  return what + " is not allowed: only SELECT queries may run";
}

} // namespace

guard_result sql_guard::impl::classify(const std::string& message, int rc,
                                       std::string_view stage) {
  using sql::verdict_kind;
  const auto& denials = auth.denials();
  for (const auto& d : denials) {
    if (d.rule == "unknown_function")
      continue;
    auto r
      = make_result(verdict_kind::block, d.rule, describe(d), "authorizer");
    r.denial = d;
    return r;
  }
  if (!denials.empty()) {
    auto r = make_result(verdict_kind::correctable, "unknown_function",
                         describe(denials.front()), "authorizer");
    r.denial = denials.front();
    return r;
  }
  auto after = [&](std::string_view prefix) {
    auto rest = std::string_view{message}.substr(prefix.size());
    while (!rest.empty() && (rest.front() == ' '))
      rest.remove_prefix(1);
    return lower(rest);
  };
  auto prim = rc & 0xFF;
  if (starts_with(message, "no such table:")) {
    auto name = after("no such table:");
    auto dot = name.rfind('.');
    auto bare = dot == std::string::npos ? name : name.substr(dot + 1);
    if (sql::is_schema_table(bare) || sql::is_table_valued_function(bare)
        || starts_with(bare, "pragma_"))
      return make_result(
        verdict_kind::block, "denied_table",
        "reading " + name + " is not allowed (" + message + ")", stage);
    return make_result(verdict_kind::correctable, "no_such_table", message,
                       stage);
  }
  if (starts_with(message, "no such column:"))
    return make_result(verdict_kind::correctable, "no_such_column", message,
                       stage);
  if (starts_with(message, "no such function:")) {
    auto name = after("no such function:");
    if (sql::is_risky_function(name) || sql::is_table_valued_function(name))
      return make_result(verdict_kind::block, "risky_function",
                         "the function " + name + "() is not allowed", stage);
    return make_result(verdict_kind::correctable, "unknown_function", message,
                       stage);
  }
  if (prim == SQLITE_AUTH || contains(message, "not authorized")
      || contains(message, "prohibited") || contains(message, "virtual table"))
    return make_result(verdict_kind::block, "denied_action", message, stage);
  if (prim == SQLITE_TOOBIG || prim == SQLITE_NOMEM
      || contains(message, "too many") || contains(message, "too large")
      || contains(message, "too big") || contains(message, "maximum depth")
      || contains(message, "too complex") || contains(message, "too long")
      || contains(message, "stack overflow"))
    return make_result(verdict_kind::block, "resource_limit", message, stage);
  if (contains(message, "syntax error") || contains(message, "incomplete input")
      || contains(message, "unrecognized token"))
    return make_result(verdict_kind::correctable, "syntax_error", message,
                       stage);
  return make_result(verdict_kind::correctable, "sqlite_error", message, stage);
}

bool sql_guard::impl::audit(sqlite3_stmt* explain, guard_result& out) {
  using sql::verdict_kind;
  auto* h = db.handle();
  int rc = SQLITE_OK;
  auto& program = program_;
  program.clear();
  bool returns_rows = false;
  while ((rc = sqlite3_step(explain)) == SQLITE_ROW) {
    auto* raw = reinterpret_cast<const char*>(sqlite3_column_text(explain, 1));
    std::string_view op = raw != nullptr ? raw : "";
    auto kind = classify_opcode(op);
    if (kind == op_kind::result_row) {
      // P2: how many columns the row has.
      returns_rows = returns_rows || sqlite3_column_int64(explain, 3) > 0;
      continue;
    }
    if (kind == op_kind::other)
      continue; // nothing below looks at it
    auto& in = program.emplace_back();
    in.kind = kind;
    in.op.assign(op);
    in.p1 = sqlite3_column_int64(explain, 2);
    in.p2 = sqlite3_column_int64(explain, 3);
    in.p3 = sqlite3_column_int64(explain, 4);
    if (kind == op_kind::function)
      in.p4 = str(
        reinterpret_cast<const char*>(sqlite3_column_text(explain, 5)));
    in.p5 = sqlite3_column_int64(explain, 6);
  }
  if (rc != SQLITE_DONE) {
    out = classify(sqlite3_errmsg(h), sqlite3_extended_errcode(h), "bytecode");
    return false;
  }
  // The statement's shape, from this same compile: read-only (SQLite
  // documents that sqlite3_stmt_readonly of an EXPLAIN statement is that of
  // the statement without the prefix), and a query whose program returns
  // rows. Checked before the audit, so that a write is `not_read_only`.
  if (!sqlite3_stmt_readonly(explain)) {
    out = make_result(verdict_kind::block, "not_read_only",
                      "the statement would write", "statement");
    return false;
  }
  if (!returns_rows) {
    out = make_result(verdict_kind::block, "not_a_query",
                      "the statement is not a query that returns rows",
                      "statement");
    return false;
  }
  auto deny = [&](sql_denial d, verdict_kind v = verdict_kind::block) {
    out = make_result(v, d.rule, describe(d), "bytecode");
    out.denial = std::move(d);
    return false;
  };
  // Pass 1: every cursor on a database b-tree, wherever it is opened
  // (jumps make address order differ from execution order).
  std::map<int64_t, const btree_info*> cursors;
  for (const auto& in : program) {
    if (in.kind != op_kind::open_read)
      continue;
    sql_denial d;
    d.action = in.op;
    if (in.p3 != 0) {
      d.rule = "other_database";
      d.table = "database #" + std::to_string(in.p3);
      return deny(std::move(d));
    }
    auto it = roots.find(in.p2);
    if ((in.p5 & p2_is_register) != 0 || it == roots.end()) {
      d.rule = "denied_table";
      d.table = "root page " + std::to_string(in.p2);
      return deny(std::move(d));
    }
    if (auth.allowlist().tables.count(it->second.table) == 0) {
      d.rule = "denied_table";
      d.table = it->second.table;
      return deny(std::move(d));
    }
    cursors[in.p1] = &it->second;
  }
  // Pass 2: what the program does with them.
  for (const auto& in : program) {
    if (in.kind == op_kind::denied
        || (in.kind == op_kind::transaction && in.p2 != 0)
        || (in.kind == op_kind::write && cursors.count(in.p1) > 0)) {
      sql_denial d;
      d.action = in.op;
      d.rule = "denied_opcode";
      return deny(std::move(d));
    }
    if (in.kind == op_kind::column) {
      auto it = cursors.find(in.p1);
      if (it == cursors.end())
        continue; // an ephemeral, sorter or pseudo cursor
      const auto& info = *it->second;
      bool in_range
        = in.p2 >= 0 && static_cast<size_t>(in.p2) < info.columns.size();
      // "" is the rowid an index stores; "<expr>" an indexed expression.
      if (in_range) {
        const auto& name = info.columns[static_cast<size_t>(in.p2)];
        if (info.is_index && name.empty())
          continue;
        if (auth.column_allowed(info.table, name))
          continue;
      }
      sql_denial d;
      d.action = in.op;
      d.rule = "denied_column";
      d.table = info.table;
      d.column = in_range ? info.columns[static_cast<size_t>(in.p2)]
                          : "#" + std::to_string(in.p2);
      return deny(std::move(d));
    }
    if (in.kind == op_kind::function) {
      auto name = lower(in.p4.substr(0, in.p4.find('(')));
      if (!name.empty() && !auth.function_allowed(name)) {
        sql_denial d;
        d.action = in.op;
        d.function = name;
        bool risky
          = sql::is_risky_function(name) || sql::is_table_valued_function(name);
        d.rule = risky ? "risky_function" : "unknown_function";
        return deny(std::move(d),
                    risky ? verdict_kind::block : verdict_kind::correctable);
      }
    }
  }
  return true;
}

guard_result sql_guard::impl::check(std::string_view text) {
  using sql::verdict_kind;
  if (auto* kept = allowed_.find(text))
    return *kept;
  auth.clear();
  allocation_budget budget{guard_compile_budget};
  auto r = compile(text);
  if (budget.exceeded())
    return make_result(
      verdict_kind::block, "compile_budget",
      "compiling the statement needed more than "
        + std::to_string(guard_compile_budget >> 20)
        + " MiB (SQLite copies a common table expression's body for every "
          "reference to it): read each CTE once and join it",
      r.stage.empty() ? std::string_view{"prepare"} : r.stage);
  if (r.allowed())
    allowed_.put(text, guard_result{r});
  return r;
}

guard_result sql_guard::impl::compile(std::string_view text) {
  using sql::verdict_kind;
  auto* h = db.handle();
  if (text.find('\0') != std::string_view::npos)
    return make_result(verdict_kind::block, "invalid_input",
                       "the SQL contains a NUL byte", "statement");
  // 1. One compile, of EXPLAIN <statement>, under the authorizer: SQLite
  // compiles the statement itself behind the prefix (every authorizer
  // callback fires as for the bare statement) and lists its program
  // instead of running it. A statement that is itself an EXPLAIN is a
  // syntax error behind the prefix.
  std::string explain;
  explain.reserve(text.size() + 8);
  explain.append("EXPLAIN ").append(text);
  stmt_ptr st;
  const char* tail = nullptr;
  auto rc = prepare(h, explain.data(), explain.size(), st, &tail);
  if (rc != SQLITE_OK || !auth.denials().empty())
    return classify(sqlite3_errmsg(h), sqlite3_extended_errcode(h), "prepare");
  if (!st)
    return make_result(verdict_kind::correctable, "syntax_error",
                       "the SQL is empty", "prepare");
  // 2. Nothing after it: what follows must compile to no statement
  // (whitespace and comments, judged by SQLite's own tokenizer).
  if (tail != nullptr && *tail != '\0') {
    stmt_ptr rest;
    auto end = explain.data() + explain.size();
    auto rc2 = prepare(h, tail, static_cast<size_t>(end - tail), rest, nullptr);
    auth.clear();
    if (rc2 != SQLITE_OK || rest)
      return make_result(verdict_kind::block, "multiple_statements",
                         "only one statement is allowed", "statement");
  }
  // 3. Read-only, a query that returns rows, and the bytecode audit (G1
  // and every other read the authorizer missed), all from that compile's
  // listing (see `audit`).
  guard_result out;
  if (!audit(st.get(), out))
    return out;
  return make_result(verdict_kind::allow, "", "", "bytecode");
}

domain::outcome<sql_guard> sql_guard::open(const std::string& path,
                                           sql_allowlist allow,
                                           const sql_limits& limits,
                                           bool immutable) {
  if (!allocation_budget_installed())
    return storage_error("the SQL guard needs install_allocation_budget() "
                         "before any database is opened: its compile "
                         "budget bounds what one statement may cost");
  // One thread at a time uses a guard: no connection mutex.
  auto db = open_read_only(path, immutable, true);
  if (!db)
    return db.err();
  if (auto err = harden_connection(*db, limits))
    return err;
  // Root pages and column positions for the bytecode audit.
  std::map<int64_t, btree_info> roots;
  {
    auto st = db->prepare("SELECT type, lower(name), lower(tbl_name), "
                          "rootpage FROM sqlite_schema WHERE rootpage > 0 "
                          "AND type IN ('table', 'index')");
    if (!st)
      return st.err();
    while (true) {
      auto r = st->step();
      if (!r)
        return r.err();
      if (*r == step_result::done)
        break;
      btree_info info;
      info.is_index = st->column_text(0) == "index";
      auto name = st->column_text(1);
      info.table = st->column_text(2);
      auto cols = strings(*db,
                          info.is_index
                            ? "SELECT CASE cid WHEN -1 THEN '' WHEN -2 THEN "
                              "'<expr>' ELSE lower(name) END FROM "
                              "pragma_index_xinfo(?1) ORDER BY seqno"
                            : table_columns_sql,
                          name);
      if (!cols)
        return cols.err();
      info.columns = std::move(*cols);
      roots.emplace(st->column_int64(3), std::move(info));
    }
  }
  auto auth = sql_authorizer::for_connection(*db, std::move(allow));
  if (!auth)
    return auth.err();
  auto p = std::make_unique<impl>(std::move(*db), std::move(*auth));
  p->roots = std::move(roots);
  p->auth.defer_unknown_functions(true);
  p->auth.install(p->db.handle());
  return sql_guard{std::move(p)};
}

sql_guard::sql_guard(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {
  // nop
}

sql_guard::sql_guard(sql_guard&&) noexcept = default;

sql_guard& sql_guard::operator=(sql_guard&&) noexcept = default;

sql_guard::~sql_guard() = default;

guard_result sql_guard::check(std::string_view sql) {
  return impl_->check(sql);
}

std::string sql_guard::query_plan(std::string_view sql) {
  auto* h = impl_->db.handle();
  impl_->auth.clear();
  allocation_budget budget{guard_compile_budget};
  std::string text = "EXPLAIN QUERY PLAN ";
  text.append(sql);
  stmt_ptr st;
  std::string out;
  if (prepare(h, text.data(), text.size(), st, nullptr) != SQLITE_OK || !st
      || !impl_->auth.denials().empty())
    return out;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    auto* detail
      = reinterpret_cast<const char*>(sqlite3_column_text(st.get(), 3));
    if (!out.empty())
      out += "; ";
    out += str(detail);
  }
  return out;
}

sqlite3* sql_guard::handle() const noexcept {
  return impl_->db.handle();
}

} // namespace candor::data
