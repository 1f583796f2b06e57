// The connection hardening and the SQLite authorizer of the SQL guard
// (data/sql/authorizer.hpp): which functions a query may call, the limits and
// flags every executor connection gets, and the per-action allowlist that
// runs while a statement compiles. The guard itself: data/sql/guard.cpp.

#include "data/sql/authorizer.hpp"

#include <utility>

#include "data/sql/guard_detail.hpp"
#include "domain/sql/policy.hpp"

namespace candor::data {

namespace sql = domain::sql;

namespace {

using namespace sql_guard_detail;

/// Percent-encodes what a `file:` URI path may not hold literally.
std::string uri_path(const std::string& path) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (c == '%' || c == '?' || c == '#' || u < 0x21 || u >= 0x7F) {
      out.push_back('%');
      out.push_back(digits[u >> 4]);
      out.push_back(digits[u & 0xF]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

} // namespace

// -- configuration ------------------------------------------------------------

std::set<std::string> default_sql_functions() {
  return {
    // aggregates
    "avg",
    "count",
    "group_concat",
    "max",
    "min",
    "sum",
    "total",
    // window functions
    "row_number",
    "rank",
    "dense_rank",
    "percent_rank",
    "cume_dist",
    "ntile",
    "lag",
    "lead",
    "first_value",
    "last_value",
    "nth_value",
    // text
    "lower",
    "upper",
    "length",
    "substr",
    "substring",
    "trim",
    "ltrim",
    "rtrim",
    "replace",
    "instr",
    "like",
    "glob",
    "hex",
    "char",
    "unicode",
    "quote",
    // null handling and types
    "coalesce",
    "ifnull",
    "nullif",
    "iif",
    "typeof",
    "likely",
    "unlikely",
    "likelihood",
    // numbers
    "abs",
    "round",
    "sign",
    "ceil",
    "ceiling",
    "floor",
    "trunc",
    "sqrt",
    "pow",
    "power",
    "mod",
    "exp",
    "ln",
    "log",
    "log2",
    "log10",
    "pi",
    // dates
    "date",
    "time",
    "datetime",
    "julianday",
    "strftime",
    "unixepoch",
  };
}

domain::outcome<database> open_read_only(const std::string& path,
                                         bool immutable, bool single_thread) {
  auto uri = "file:" + uri_path(path) + "?mode=ro";
  if (immutable)
    uri += "&immutable=1";
  return database::open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                               | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE
                               | SQLITE_OPEN_PRIVATECACHE
                               | (single_thread ? SQLITE_OPEN_NOMUTEX : 0));
}

domain::error harden_connection(database& db, const sql_limits& limits) {
  auto* h = db.handle();
  if (h == nullptr)
    return storage_error("database is not open");
  auto config = [&](int op, int value) -> bool {
    int out = -1;
    return sqlite3_db_config(h, op, value, &out) == SQLITE_OK && out == value;
  };
  if (!config(SQLITE_DBCONFIG_DEFENSIVE, 1)
      || !config(SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
      || !config(SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0)
      || !config(SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0)
      || !config(SQLITE_DBCONFIG_DQS_DML, 0)
      || !config(SQLITE_DBCONFIG_DQS_DDL, 0))
    return storage_error("sqlite3_db_config refused a hardening option");
  if (sqlite3_enable_load_extension(h, 0) != SQLITE_OK)
    return storage_error("could not disable extension loading");
  const std::pair<int, int> caps[] = {
    {SQLITE_LIMIT_LENGTH, limits.length},
    {SQLITE_LIMIT_SQL_LENGTH, limits.sql_length},
    {SQLITE_LIMIT_COLUMN, limits.column},
    {SQLITE_LIMIT_EXPR_DEPTH, limits.expr_depth},
    {SQLITE_LIMIT_COMPOUND_SELECT, limits.compound_select},
    {SQLITE_LIMIT_VDBE_OP, limits.vdbe_op},
    {SQLITE_LIMIT_FUNCTION_ARG, limits.function_arg},
    {SQLITE_LIMIT_ATTACHED, limits.attached},
    {SQLITE_LIMIT_LIKE_PATTERN_LENGTH, limits.like_pattern_length},
    {SQLITE_LIMIT_VARIABLE_NUMBER, limits.variable_number},
    {SQLITE_LIMIT_TRIGGER_DEPTH, limits.trigger_depth},
    {SQLITE_LIMIT_WORKER_THREADS, limits.worker_threads},
  };
  for (auto [id, value] : caps) {
    sqlite3_limit(h, id, value);
    if (sqlite3_limit(h, id, -1) != value)
      return storage_error("sqlite3_limit(" + std::to_string(id) + ", "
                           + std::to_string(value) + ") did not hold");
  }
  if (auto err = db.exec("PRAGMA query_only=1; PRAGMA temp_store=MEMORY; "
                         "PRAGMA mmap_size=0; PRAGMA cell_size_check=ON;"))
    return err;
  // Load the schema now, and switch off triggers and views when the
  // schema has none (nothing legitimate can then reach them).
  auto triggers = db.query_int64(
    "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'");
  if (!triggers)
    return triggers.err();
  auto views
    = db.query_int64("SELECT count(*) FROM sqlite_schema WHERE type = 'view'");
  if (!views)
    return views.err();
  if (*triggers == 0 && !config(SQLITE_DBCONFIG_ENABLE_TRIGGER, 0))
    return storage_error("could not disable triggers");
  if (*views == 0 && !config(SQLITE_DBCONFIG_ENABLE_VIEW, 0))
    return storage_error("could not disable views");
  auto qo = db.query_int64("PRAGMA query_only");
  if (!qo || *qo != 1)
    return storage_error("PRAGMA query_only did not hold");
  return {};
}

// -- the authorizer -----------------------------------------------------------

std::string_view authorizer_action_name(int action) noexcept {
  switch (action) {
    case SQLITE_CREATE_INDEX: return "create_index";
    case SQLITE_CREATE_TABLE: return "create_table";
    case SQLITE_CREATE_TEMP_INDEX: return "create_temp_index";
    case SQLITE_CREATE_TEMP_TABLE: return "create_temp_table";
    case SQLITE_CREATE_TEMP_TRIGGER: return "create_temp_trigger";
    case SQLITE_CREATE_TEMP_VIEW: return "create_temp_view";
    case SQLITE_CREATE_TRIGGER: return "create_trigger";
    case SQLITE_CREATE_VIEW: return "create_view";
    case SQLITE_DELETE: return "delete";
    case SQLITE_DROP_INDEX: return "drop_index";
    case SQLITE_DROP_TABLE: return "drop_table";
    case SQLITE_DROP_TEMP_INDEX: return "drop_temp_index";
    case SQLITE_DROP_TEMP_TABLE: return "drop_temp_table";
    case SQLITE_DROP_TEMP_TRIGGER: return "drop_temp_trigger";
    case SQLITE_DROP_TEMP_VIEW: return "drop_temp_view";
    case SQLITE_DROP_TRIGGER: return "drop_trigger";
    case SQLITE_DROP_VIEW: return "drop_view";
    case SQLITE_INSERT: return "insert";
    case SQLITE_PRAGMA: return "pragma";
    case SQLITE_READ: return "read";
    case SQLITE_SELECT: return "select";
    case SQLITE_TRANSACTION: return "transaction";
    case SQLITE_UPDATE: return "update";
    case SQLITE_ATTACH: return "attach";
    case SQLITE_DETACH: return "detach";
    case SQLITE_ALTER_TABLE: return "alter_table";
    case SQLITE_REINDEX: return "reindex";
    case SQLITE_ANALYZE: return "analyze";
    case SQLITE_CREATE_VTABLE: return "create_vtable";
    case SQLITE_DROP_VTABLE: return "drop_vtable";
    case SQLITE_FUNCTION: return "function";
    case SQLITE_SAVEPOINT: return "savepoint";
    case SQLITE_RECURSIVE: return "recursive";
    default: return "unknown";
  }
}

sql_authorizer::sql_authorizer(sql_allowlist allow,
                               std::set<std::string> schema_names,
                               std::set<std::string> module_names)
    : schema_names_(std::move(schema_names)),
      module_names_(std::move(module_names)) {
  // Normalise names once so that every comparison is in lower case.
  for (auto& [table, columns] : allow.tables) {
    auto& out = allow_.tables[lower(table)];
    for (auto& c : columns)
      out.insert(lower(c));
  }
  if (allow.functions.empty())
    allow.functions = default_sql_functions();
  for (auto& f : allow.functions)
    if (!sql::is_risky_function(f) && !sql::is_table_valued_function(f))
      allow_.functions.insert(lower(f));
}

domain::outcome<sql_authorizer>
sql_authorizer::for_connection(database& db, sql_allowlist allow) {
  auto names = strings(db, "SELECT lower(name) FROM sqlite_schema");
  if (!names)
    return names.err();
  auto modules = strings(db, "SELECT lower(name) FROM pragma_module_list");
  if (!modules)
    return modules.err();
  return sql_authorizer{std::move(allow),
                        {names->begin(), names->end()},
                        {modules->begin(), modules->end()}};
}

void sql_authorizer::install(sqlite3* db) noexcept {
  sqlite3_set_authorizer(db, &sql_authorizer::callback, this);
}

void sql_authorizer::uninstall(sqlite3* db) noexcept {
  sqlite3_set_authorizer(db, nullptr, nullptr);
}

int sql_authorizer::callback(void* self, int action, const char* a1,
                             const char* a2, const char* db,
                             const char* inner) noexcept {
  return static_cast<sql_authorizer*>(self)->decide(action, a1, a2, db, inner);
}

bool sql_authorizer::column_allowed(std::string_view table,
                                    std::string_view column) const {
  auto t = lower(table);
  if (t.empty())
    return false;
  auto it = allow_.tables.find(t);
  if (column.empty()) {
    // A whole-row read: count(*), EXISTS, or a materialized CTE under its
    // own name (G2). Real objects need the allowlist; other names are
    // CTEs and subqueries, whose own reads are judged one by one.
    if (it != allow_.tables.end())
      return true;
    return schema_names_.count(t) == 0 && module_names_.count(t) == 0
           && !starts_with(t, "sqlite_") && !starts_with(t, "pragma_")
           && !sql::is_table_valued_function(t);
  }
  return it != allow_.tables.end() && it->second.count(lower(column)) > 0;
}

bool sql_authorizer::function_allowed(std::string_view name) const {
  return allow_.functions.count(lower(name)) > 0;
}

int sql_authorizer::decide(int action, const char* a1, const char* a2,
                           const char* db, const char* inner) noexcept {
  (void)inner;
  try {
    // The allowed cases first, without building a denial: they are almost
    // every callback of a legitimate statement.
    switch (action) {
      case SQLITE_SELECT: return SQLITE_OK;
      case SQLITE_READ: {
        std::string_view column = a2 != nullptr ? a2 : "";
        std::string_view schema = db != nullptr ? db : "";
        if ((column.empty() || schema == "main")
            && column_allowed(a1 != nullptr ? a1 : "", column))
          return SQLITE_OK;
        break;
      }
      case SQLITE_FUNCTION:
        if (function_allowed(a2 != nullptr ? a2 : ""))
          return SQLITE_OK;
        break;
      default: break;
    }
    sql_denial d;
    d.action = std::string{authorizer_action_name(action)};
    switch (action) {
      case SQLITE_READ: {
        auto table = str(a1);
        auto column = str(a2);
        auto schema = str(db);
        if (!column.empty() && schema != "main") {
          d.rule = "other_database";
          d.table = schema.empty() ? table : schema + "." + table;
          d.column = column;
          break;
        }
        bool known = allow_.tables.count(lower(table)) > 0;
        d.rule = known && !column.empty() ? "denied_column" : "denied_table";
        d.table = table;
        d.column = column;
        break;
      }
      case SQLITE_FUNCTION: {
        auto name = str(a2);
        d.function = name;
        d.rule
          = sql::is_risky_function(name) || sql::is_table_valued_function(name)
              ? "risky_function"
              : "unknown_function";
        if (defer_unknown_functions_ && d.rule == "unknown_function") {
          // Recorded, and compilation goes on so that every other read
          // is judged too; the caller must refuse the statement.
          denials_.push_back(std::move(d));
          return SQLITE_OK;
        }
        break;
      }
      default:
        d.rule = "denied_action";
        d.table = str(a1);
        d.column = str(a2);
        break;
    }
    denials_.push_back(std::move(d));
  } catch (...) {
    // Out of memory while recording: deny all the same.
  }
  return SQLITE_DENY;
}

} // namespace candor::data
