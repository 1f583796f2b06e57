// The static SQL policy's entry point and its statement-level rules: name
// lists, input checks, lexing and splitting, and the verdict (structural
// rules: domain/sql/policy_structure.cpp).

#include "domain/sql/policy.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>

#include "domain/sql/checker.hpp"
#include "domain/sql/lexer.hpp"
#include "domain/text.hpp"

namespace candor::domain::sql {

namespace {

// -- name lists ---------------------------------------------------------------

const std::vector<std::string_view> forbidden_list = {
  "alter",       "analyze",  "attach",    "begin",   "commit", "conflict",
  "create",      "database", "delete",    "detach",  "do",     "drop",
  "explain",     "index",    "insert",    "into",    "merge",  "nothing",
  "pragma",      "raise",    "reindex",   "release", "rename", "replace",
  "returning",   "rollback", "savepoint", "table",   "temp",   "temporary",
  "transaction", "trigger",  "update",    "upsert",  "vacuum", "view",
  "virtual",
};

const std::vector<std::string_view> risky_list = {
  // files and extensions (CLI-only in Debian, but never let them through)
  "load_extension",
  "readfile",
  "writefile",
  "edit",
  "sha3_query",
  "fts3_tokenizer",
  "fts5",
  "fts5_source_id",
  // size bombs and width bombs (SQL-SANDBOX-NOTES G5, G6)
  "randomblob",
  "zeroblob",
  "printf",
  "format",
  // build and schema introspection
  "sqlite_version",
  "sqlite_source_id",
  "sqlite_compileoption_get",
  "sqlite_compileoption_used",
  "sqlite_offset",
  "sqlite_rename_column",
  "sqlite_rename_table",
  "sqlite_rename_test",
  "sqlite_drop_column",
  "sqlite_rename_quotefix",
  // internal helpers that exist only for SQLite's own statements
  "affinity",
  "implies_nonnull_row",
  "expr_compare",
  "expr_implies_expr",
};

const std::vector<std::string_view> tvf_list = {
  "json_each",    "json_tree",   "dbstat",    "sqlite_dbpage",   "sqlite_stmt",
  "fts3tokenize", "fts4aux",     "fts5vocab", "generate_series", "carray",
  "zipfile",      "fsdir",       "rtree",     "rtree_i32",       "geopoly",
  "bytecode",     "tables_used", "swarmvtab", "unionvtab",       "memstat",
};

const std::vector<std::string_view> schema_list = {
  "sqlite_schema",      "sqlite_master",
  "sqlite_temp_schema", "sqlite_temp_master",
  "sqlite_sequence",    "sqlite_stat1",
  "sqlite_stat2",       "sqlite_stat3",
  "sqlite_stat4",       "dbstat",
};

const std::vector<std::string_view> all_rules = {
  "input_too_long",
  "invalid_utf8",
  "control_character",
  "invisible_character",
  "syntax_error",
  "empty",
  "multiple_statements",
  "not_select",
  "forbidden_keyword",
  "schema_table",
  "table_valued_function",
  "risky_function",
  "recursive_cte",
  "natural_join",
  "using_join",
  "cross_join",
  "comma_join",
  "join_without_on",
  "trivial_join_condition",
  "too_many_tables",
  "nesting_too_deep",
  "too_many_selects",
  "in_list_too_long",
  "cte_expansion_too_large",
  "non_literal_limit",
  "unbalanced_parentheses",
  "parameter",
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

using detail::contains;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// -- input checks -------------------------------------------------------------

/// Decodes one code point of well-formed UTF-8 at `i` and advances `i`.
uint32_t next_code_point(std::string_view s, size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : 1;
  uint32_t cp = b & (0x3F >> extra);
  for (int k = 1; k <= extra && i + k < s.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += static_cast<size_t>(extra) + 1;
  return cp;
}

/// Bidi controls, zero-width and other invisible format characters that
/// let a statement read differently to a person than to SQLite.
bool is_invisible(uint32_t cp) noexcept {
  return cp == 0x00AD || cp == 0x034F || cp == 0x061C || cp == 0x115F
         || cp == 0x1160 || cp == 0x17B4 || cp == 0x17B5 || cp == 0x180E
         || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E)
         || (cp >= 0x2060 && cp <= 0x206F) || cp == 0x3164
         || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF || cp == 0xFFA0
         || (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0x1D173 && cp <= 0x1D17A)
         || (cp >= 0xE0000 && cp <= 0xE0FFF);
}

} // namespace

// -- the checker --------------------------------------------------------------

namespace detail {

policy_result checker::run() {
  if (!check_input() || !lex_and_split())
    return std::move(result_);
  if (!check_start() || !check_keywords() || !check_names()
      || !check_recursion() || !check_joins() || !check_sizes()
      || !check_cte_expansion() || !check_limits() || !check_correctable())
    return std::move(result_);
  rewrite_limit();
  return std::move(result_);
}

bool checker::check_input() {
  if (sql_.size() > cfg_.max_bytes)
    return fail(verdict_kind::block, "input_too_long",
                "the SQL is " + std::to_string(sql_.size()) + " bytes; at most "
                  + std::to_string(cfg_.max_bytes) + " are accepted");
  if (!valid_utf8(sql_))
    return fail(verdict_kind::block, "invalid_utf8",
                "the SQL is not valid UTF-8");
  size_t i = 0;
  while (i < sql_.size()) {
    size_t at = i;
    uint32_t cp = next_code_point(sql_, i);
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F
        || (cp >= 0x80 && cp <= 0x9F))
      return fail(verdict_kind::block, "control_character",
                  "the SQL contains control character U+" + hex(cp)
                    + " at byte " + std::to_string(at),
                  at);
    if (is_invisible(cp))
      return fail(verdict_kind::block, "invisible_character",
                  "the SQL contains invisible or bidirectional character U+"
                    + hex(cp) + " at byte " + std::to_string(at),
                  at);
  }
  return true;
}

bool checker::lex_and_split() {
  lexed_ = lex(sql_);
  if (!lexed_.ok())
    return fail(verdict_kind::correctable, "syntax_error",
                lexed_.error + " at byte "
                  + std::to_string(lexed_.error_offset),
                lexed_.error_offset);
  for (const auto& x : lexed_.tokens)
    if (x.kind != token_kind::comment)
      t_.push_back(&x);
  // One statement: a ';' may only be the last significant token.
  for (size_t i = 0; i < size(); ++i) {
    if (!t_[i]->is_symbol(";"))
      continue;
    if (i + 1 != size())
      return block("multiple_statements",
                   "only one statement is allowed, but there is more after "
                   "the ';' at byte "
                     + std::to_string(t_[i]->offset),
                   *t_[i]);
    t_.pop_back();
  }
  // Matching parentheses, once, so that no rule rescans the text.
  match_.assign(size(), size());
  std::vector<size_t> open;
  for (size_t i = 0; i < size(); ++i) {
    if (t_[i]->is_symbol("(")) {
      open.push_back(i);
    } else if (t_[i]->is_symbol(")") && !open.empty()) {
      match_[open.back()] = i;
      open.pop_back();
    }
  }
  if (t_.empty())
    return fail(verdict_kind::correctable, "empty",
                "the SQL is empty: write one SELECT statement");
  return true;
}

bool checker::check_start() {
  auto& first = *t_[0];
  if (first.is_keyword("select") || first.is_keyword("with"))
    return true;
  return block("not_select",
               "only a single SELECT (or WITH ... SELECT) query is allowed, "
               "not one starting with '"
                 + shown(first) + "'",
               first);
}

bool checker::check_keywords() {
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    if (x.kind != token_kind::keyword && x.kind != token_kind::identifier)
      continue;
    if (!contains(forbidden_list, x.name))
      continue;
    if (x.name == "replace" && is_sym(i + 1, "("))
      continue; // the replace() string function
    std::string up{x.text};
    for (auto& c : up)
      c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return block("forbidden_keyword",
                 "the keyword " + up
                   + " is not allowed: queries are read-only SELECTs "
                     "(no writes, schema changes, transactions, PRAGMA or "
                     "ATTACH)",
                 x);
  }
  return true;
}

bool checker::check_names() {
  // Schema tables first, then table-valued functions, then risky calls.
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    if (x.is_word() && !is_sym(i + 1, "(") && is_schema_table(x.name))
      return block("schema_table",
                   "the internal table " + x.name
                     + " may not be queried; use the documented sales "
                       "tables",
                   x);
  }
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    if (x.is_word() && is_table_valued_function(x.name))
      return block("table_valued_function",
                   "the table-valued function " + x.name + " is not allowed",
                   x);
  }
  for (size_t i = 0; i < size(); ++i) {
    auto& x = *t_[i];
    if (!x.is_word() || !is_sym(i + 1, "("))
      continue;
    if (is_risky_function(x.name))
      return block("risky_function",
                   "the function " + x.name + "() is not allowed", x);
    if (x.name == "char") {
      auto close = matching(i + 1);
      int args = 0;
      int d = t_[i + 1]->depth + 1;
      for (size_t k = i + 2; k < close; ++k)
        if (t_[k]->depth == d && t_[k]->is_symbol(","))
          ++args;
      if (close > i + 2)
        ++args;
      if (args > cfg_.max_char_args)
        return block("risky_function",
                     "char() with " + std::to_string(args)
                       + " arguments is not allowed (at most "
                       + std::to_string(cfg_.max_char_args) + ")",
                     x);
    }
  }
  return true;
}

std::vector<checker::cte> checker::ctes() const {
  std::vector<cte> out;
  for (size_t w = 0; w < size(); ++w) {
    if (!t_[w]->is_keyword("with"))
      continue;
    size_t i = w + 1;
    if (is_kw(i, "recursive"))
      ++i;
    while (i < size()) {
      auto* name = tok(i);
      if (name == nullptr || !name->is_word())
        break;
      size_t at = i++;
      if (is_sym(i, "("))
        i = matching(i) + 1;
      if (!is_kw(i, "as"))
        break;
      ++i;
      if (is_kw(i, "not"))
        ++i;
      if (is_kw(i, "materialized"))
        ++i;
      if (!is_sym(i, "(") || matching(i) == size())
        break;
      out.push_back({at, i, matching(i)});
      i = matching(i) + 1;
      if (!is_sym(i, ","))
        break;
      ++i;
    }
  }
  return out;
}

bool checker::table_position(size_t i) const {
  size_t j = i;
  bool paren = false;
  while (j > 0 && is_sym(j - 1, "(")) {
    --j;
    paren = true;
  }
  if (j == 0)
    return false;
  auto& prev = *t_[j - 1];
  if (prev.is_keyword("join"))
    return true;
  if (prev.is_keyword("from"))
    return j < 2 || !is_kw(j - 2, "distinct"); // not IS [NOT] DISTINCT FROM
  if (prev.is_keyword("in"))
    return !paren; // `x IN (c)` is a list holding the column c
  if (!prev.is_symbol(","))
    return false;
  // A comma join: the clause this ',' belongs to is a FROM clause.
  for (size_t k = j - 1; k-- > 0;) {
    auto& x = *t_[k];
    if (x.depth < prev.depth)
      return false;
    if (x.depth != prev.depth)
      continue;
    if (x.is_keyword("from"))
      return true;
    if (x.is_keyword("select") || x.is_keyword("values") || is_clause_end(x))
      return false;
  }
  return false;
}

bool checker::check_recursion() {
  for (size_t i = 0; i < size(); ++i)
    if (t_[i]->is_keyword("recursive"))
      return block("recursive_cte",
                   "recursive common table expressions are not allowed",
                   *t_[i]);
  // SQLite runs a CTE recursively when its body reads it as a table, with
  // or without the RECURSIVE keyword: FROM c, JOIN c, FROM (c), x IN c.
  for (const auto& c : ctes()) {
    const auto& name = t_[c.name]->name;
    for (size_t k = c.open + 1; k < c.close; ++k) {
      auto& x = *t_[k];
      if (x.is_word() && x.name == name && table_position(k))
        return block("recursive_cte",
                     "the common table expression " + name
                       + " refers to itself, which makes it recursive",
                     x);
    }
  }
  return true;
}

} // namespace detail

std::string_view to_string(verdict_kind x) noexcept {
  switch (x) {
    case verdict_kind::allow: return "allow";
    case verdict_kind::block: return "block";
    case verdict_kind::correctable: return "correctable";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, verdict_kind x) {
  return out << to_string(x);
}

policy_result check_sql(std::string_view sql, const policy_config& cfg) {
  return detail::checker{sql, cfg}.run();
}

const std::vector<std::string_view>& rule_names() {
  return all_rules;
}

const std::vector<std::string_view>& forbidden_keywords() {
  return forbidden_list;
}

const std::vector<std::string_view>& risky_functions() {
  return risky_list;
}

const std::vector<std::string_view>& table_valued_functions() {
  return tvf_list;
}

bool is_risky_function(std::string_view name) noexcept {
  auto n = lower(name);
  return contains(risky_list, n) || starts_with(n, "sqlite_");
}

bool is_table_valued_function(std::string_view name) noexcept {
  auto n = lower(name);
  return contains(tvf_list, n) || starts_with(n, "pragma_");
}

bool is_schema_table(std::string_view name) noexcept {
  auto n = lower(name);
  return contains(schema_list, n) || starts_with(n, "sqlite_");
}

} // namespace candor::domain::sql
