#include "domain/sql_policy.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>

#include "domain/sql_lexer.hpp"
#include "domain/text.hpp"

namespace candor::domain::sql {

namespace {

// -- name lists ---------------------------------------------------------------

const std::vector<std::string_view> forbidden_list = {
  "alter",     "analyze",   "attach",  "begin",       "commit",
  "conflict",  "create",    "database", "delete",     "detach",
  "do",        "drop",      "explain", "index",       "insert",
  "into",      "merge",     "nothing", "pragma",      "raise",
  "reindex",   "release",   "rename",  "replace",     "returning",
  "rollback",  "savepoint", "table",   "temp",        "temporary",
  "transaction", "trigger", "update",  "upsert",      "vacuum",
  "view",      "virtual",
};

const std::vector<std::string_view> risky_list = {
  // files and extensions (CLI-only in Debian, but never let them through)
  "load_extension", "readfile", "writefile", "edit", "sha3_query",
  "fts3_tokenizer", "fts5", "fts5_source_id",
  // size bombs and width bombs (SQL-SANDBOX-NOTES G5, G6)
  "randomblob", "zeroblob", "printf", "format",
  // build and schema introspection
  "sqlite_version", "sqlite_source_id", "sqlite_compileoption_get",
  "sqlite_compileoption_used", "sqlite_offset", "sqlite_rename_column",
  "sqlite_rename_table", "sqlite_rename_test", "sqlite_drop_column",
  "sqlite_rename_quotefix",
  // internal helpers that exist only for SQLite's own statements
  "affinity", "implies_nonnull_row", "expr_compare", "expr_implies_expr",
};

const std::vector<std::string_view> tvf_list = {
  "json_each", "json_tree", "dbstat", "sqlite_dbpage", "sqlite_stmt",
  "fts3tokenize", "fts4aux", "fts5vocab", "generate_series", "carray",
  "zipfile", "fsdir", "rtree", "rtree_i32", "geopoly", "bytecode",
  "tables_used", "swarmvtab", "unionvtab", "memstat",
};

const std::vector<std::string_view> schema_list = {
  "sqlite_schema",      "sqlite_master",     "sqlite_temp_schema",
  "sqlite_temp_master", "sqlite_sequence",   "sqlite_stat1",
  "sqlite_stat2",       "sqlite_stat3",      "sqlite_stat4",
  "dbstat",
};

const std::vector<std::string_view> all_rules = {
  "input_too_long",   "invalid_utf8",           "control_character",
  "invisible_character", "syntax_error",        "empty",
  "multiple_statements", "not_select",          "forbidden_keyword",
  "schema_table",     "table_valued_function",  "risky_function",
  "recursive_cte",    "natural_join",           "using_join",
  "cross_join",       "comma_join",             "join_without_on",
  "trivial_join_condition", "too_many_tables",  "nesting_too_deep",
  "too_many_selects", "in_list_too_long",       "non_literal_limit",
  "unbalanced_parentheses", "parameter",
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool contains(const std::vector<std::string_view>& xs, std::string_view x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

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

// -- the checker --------------------------------------------------------------

class checker {
public:
  checker(std::string_view sql, const policy_config& cfg)
    : sql_(sql), cfg_(cfg) {
    // nop
  }

  policy_result run() {
    if (!check_input() || !lex_and_split())
      return std::move(result_);
    if (!check_start() || !check_keywords() || !check_names()
        || !check_recursion() || !check_joins() || !check_sizes()
        || !check_limits() || !check_correctable())
      return std::move(result_);
    rewrite_limit();
    return std::move(result_);
  }

private:
  // -- helpers ----------------------------------------------------------------

  bool fail(verdict_kind v, std::string_view rule, std::string message,
            size_t offset = 0) {
    result_.verdict = v;
    result_.rule = std::string{rule};
    result_.message = std::move(message);
    result_.offset = offset;
    return false;
  }

  bool block(std::string_view rule, std::string message, const token& at) {
    return fail(verdict_kind::block, rule, std::move(message), at.offset);
  }

  size_t size() const noexcept {
    return t_.size();
  }

  /// The i-th significant token, or nullptr past either end.
  const token* tok(size_t i) const noexcept {
    return i < t_.size() ? t_[i] : nullptr;
  }

  bool is_kw(size_t i, std::string_view name) const noexcept {
    auto* x = tok(i);
    return x != nullptr && x->is_keyword(name);
  }

  bool is_sym(size_t i, std::string_view s) const noexcept {
    auto* x = tok(i);
    return x != nullptr && x->is_symbol(s);
  }

  /// Index of the ')' matching the '(' at `open`, or size() when none.
  size_t matching(size_t open) const noexcept {
    return open < match_.size() ? match_[open] : size();
  }

  static std::string shown(const token& x) {
    constexpr size_t max = 40;
    std::string s{x.text.substr(0, max)};
    if (x.text.size() > max)
      s += "...";
    return s;
  }

  static bool is_clause_end(const token& x) noexcept {
    static const std::vector<std::string_view> ends = {
      "where",  "group",     "having",    "order", "limit",
      "window", "union",     "except",    "intersect", "returning",
    };
    return (x.kind == token_kind::keyword && contains(ends, x.name))
           || x.is_symbol(";");
  }

  static bool is_join_op(const token& x) noexcept {
    static const std::vector<std::string_view> ops = {
      "join", "left", "right", "full", "inner", "outer", "cross", "natural",
    };
    return (x.kind == token_kind::keyword && contains(ops, x.name))
           || x.is_symbol(",");
  }

  /// Parses an integer literal (decimal or hex); nullopt for anything
  /// else. Values beyond int64 saturate.
  static std::optional<int64_t> integer_literal(const token* x) {
    if (x == nullptr || x->kind != token_kind::number)
      return std::nullopt;
    auto s = x->text;
    int64_t v = 0;
    constexpr int64_t cap = INT64_MAX / 16 - 16;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      for (char c : s.substr(2)) {
        int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        v = v > cap ? cap : v * 16 + d;
      }
      return v;
    }
    for (char c : s) {
      if (c < '0' || c > '9')
        return std::nullopt;
      v = v > cap ? cap : v * 10 + (c - '0');
    }
    return v;
  }

  // -- input and lexing -------------------------------------------------------

  bool check_input() {
    if (sql_.size() > cfg_.max_bytes)
      return fail(verdict_kind::block, "input_too_long",
                  "the SQL is " + std::to_string(sql_.size())
                    + " bytes; at most " + std::to_string(cfg_.max_bytes)
                    + " are accepted");
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
                    "the SQL contains control character U+"
                      + hex(cp) + " at byte " + std::to_string(at),
                    at);
      if (is_invisible(cp))
        return fail(verdict_kind::block, "invisible_character",
                    "the SQL contains invisible or bidirectional character U+"
                      + hex(cp) + " at byte " + std::to_string(at),
                    at);
    }
    return true;
  }

  static std::string hex(uint32_t cp) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (int shift = cp > 0xFFFF ? 20 : 12; shift >= 0; shift -= 4)
      out.push_back(digits[(cp >> shift) & 0xF]);
    return out;
  }

  bool lex_and_split() {
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

  // -- statement shape --------------------------------------------------------

  bool check_start() {
    auto& first = *t_[0];
    if (first.is_keyword("select") || first.is_keyword("with"))
      return true;
    return block("not_select",
                 "only a single SELECT (or WITH ... SELECT) query is allowed, "
                 "not one starting with '"
                   + shown(first) + "'",
                 first);
  }

  bool check_keywords() {
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

  bool check_names() {
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
                     "the table-valued function " + x.name
                       + " is not allowed",
                     x);
    }
    for (size_t i = 0; i < size(); ++i) {
      auto& x = *t_[i];
      if (!x.is_word() || !is_sym(i + 1, "("))
        continue;
      if (is_risky_function(x.name))
        return block("risky_function",
                     "the function " + x.name + "() is not allowed",
                     x);
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

  bool check_recursion() {
    for (size_t i = 0; i < size(); ++i)
      if (t_[i]->is_keyword("recursive"))
        return block("recursive_cte",
                     "recursive common table expressions are not allowed",
                     *t_[i]);
    // SQLite runs a CTE recursively when its body names it in a FROM or
    // JOIN, with or without the RECURSIVE keyword.
    for (size_t w = 0; w < size(); ++w) {
      if (!t_[w]->is_keyword("with"))
        continue;
      size_t i = w + 1;
      while (i < size()) {
        auto* name = tok(i);
        if (name == nullptr || !name->is_word())
          break;
        ++i;
        if (is_sym(i, "("))
          i = matching(i) + 1;
        if (!is_kw(i, "as"))
          break;
        ++i;
        if (is_kw(i, "not"))
          ++i;
        if (is_kw(i, "materialized"))
          ++i;
        if (!is_sym(i, "("))
          break;
        size_t close = matching(i);
        for (size_t k = i + 1; k < close; ++k) {
          auto& x = *t_[k];
          if (x.is_word() && x.name == name->name
              && (is_kw(k - 1, "from") || is_kw(k - 1, "join")))
            return block("recursive_cte",
                         "the common table expression " + name->name
                           + " refers to itself, which makes it recursive",
                         x);
        }
        i = close + 1;
        if (!is_sym(i, ","))
          break;
        ++i;
      }
    }
    return true;
  }

  // -- joins ------------------------------------------------------------------

  bool check_joins() {
    for (size_t i = 0; i < size(); ++i) {
      auto& x = *t_[i];
      if (x.is_keyword("natural"))
        return block("natural_join",
                     "NATURAL joins are not allowed: write JOIN ... ON "
                     "a.col = b.col",
                     x);
      if (x.is_keyword("using"))
        return block("using_join",
                     "JOIN ... USING (...) is not allowed: write JOIN ... ON "
                     "a.col = b.col",
                     x);
      if (x.is_keyword("cross"))
        return block("cross_join",
                     "CROSS JOIN is not allowed: join on a condition with "
                     "JOIN ... ON",
                     x);
    }
    // Track, per parenthesis depth, whether tokens are in a FROM clause and
    // which FROM clause they count towards.
    struct level {
      bool in_from = false;
      int scope = -1;
    };
    std::vector<level> levels(1);
    std::vector<int> sources; // per FROM clause
    for (size_t i = 0; i < size(); ++i) {
      auto& x = *t_[i];
      auto d = static_cast<size_t>(x.depth);
      if (levels.size() <= d + 1)
        levels.resize(d + 2);
      auto& lv = levels[d];
      if (x.is_symbol("(")) {
        // A parenthesised join group continues the enclosing FROM clause;
        // a subquery starts afresh.
        bool group = lv.in_from && i > 0
                     && (is_kw(i - 1, "from") || is_kw(i - 1, "join")
                         || is_sym(i - 1, "(") || is_sym(i - 1, ","))
                     && !is_kw(i + 1, "select") && !is_kw(i + 1, "with")
                     && !is_kw(i + 1, "values");
        levels[d + 1] = group ? lv : level{};
        continue;
      }
      if (x.is_keyword("from")) {
        if (is_kw(i - 1, "distinct"))
          continue; // IS [NOT] DISTINCT FROM
        lv.in_from = true;
        lv.scope = static_cast<int>(sources.size());
        sources.push_back(1);
        continue;
      }
      if (!lv.in_from)
        continue;
      if (is_clause_end(x)) {
        lv = level{};
        continue;
      }
      if (x.is_symbol(","))
        return block("comma_join",
                     "comma joins are not allowed: write JOIN ... ON "
                     "a.col = b.col",
                     x);
      if (x.is_keyword("join")) {
        ++sources[static_cast<size_t>(lv.scope)];
        if (!check_join_condition(i))
          return false;
      }
    }
    int total = 0;
    for (int n : sources) {
      total += n;
      if (n > cfg_.max_tables)
        return fail(verdict_kind::block, "too_many_tables",
                    "a FROM clause joins " + std::to_string(n)
                      + " sources; at most "
                      + std::to_string(cfg_.max_tables) + " are allowed");
    }
    if (total > cfg_.max_table_refs)
      return fail(verdict_kind::block, "too_many_tables",
                  "the query reads " + std::to_string(total)
                    + " table sources; at most "
                    + std::to_string(cfg_.max_table_refs)
                    + " are allowed");
    return true;
  }

  /// The JOIN at `j` must have an ON that names at least one column.
  bool check_join_condition(size_t j) {
    int d = t_[j]->depth;
    size_t on = size();
    size_t end = size();
    for (size_t k = j + 1; k < size(); ++k) {
      auto& x = *t_[k];
      if (x.depth < d) {
        end = k;
        break;
      }
      if (x.depth != d)
        continue;
      if (on == size() && x.is_keyword("on")) {
        on = k;
        continue;
      }
      if (is_join_op(x) || is_clause_end(x)) {
        end = k;
        break;
      }
    }
    if (on == size())
      return block("join_without_on",
                   "every JOIN needs an ON condition (JOIN t ON a.col = "
                   "t.col)",
                   *t_[j]);
    for (size_t k = on + 1; k < end; ++k) {
      auto& x = *t_[k];
      if ((x.kind == token_kind::identifier
           || x.kind == token_kind::quoted_identifier)
          && x.name != "true" && x.name != "false" && !is_sym(k + 1, "("))
        return true;
    }
    return block("trivial_join_condition",
                 "the ON condition of this JOIN names no column, so it joins "
                 "every row with every row",
                 *t_[on]);
  }

  // -- sizes ------------------------------------------------------------------

  bool check_sizes() {
    if (lexed_.max_depth > cfg_.max_depth)
      return fail(verdict_kind::block, "nesting_too_deep",
                  "parentheses nest " + std::to_string(lexed_.max_depth)
                    + " deep; at most " + std::to_string(cfg_.max_depth)
                    + " levels are allowed");
    int selects = 0;
    for (auto* x : t_)
      if (x->is_keyword("select"))
        ++selects;
    if (selects > cfg_.max_selects)
      return fail(verdict_kind::block, "too_many_selects",
                  "the query has " + std::to_string(selects)
                    + " SELECTs; at most " + std::to_string(cfg_.max_selects)
                    + " are allowed");
    for (size_t i = 0; i + 1 < size(); ++i) {
      auto& x = *t_[i];
      if (x.is_keyword("in") && is_sym(i + 1, "(")) {
        if (is_kw(i + 2, "select") || is_kw(i + 2, "with")
            || is_kw(i + 2, "values"))
          continue;
        size_t close = matching(i + 1);
        int d = t_[i + 1]->depth + 1;
        int n = close > i + 2 ? 1 : 0;
        for (size_t k = i + 2; k < close; ++k)
          if (t_[k]->depth == d && t_[k]->is_symbol(","))
            ++n;
        if (n > cfg_.max_in_list)
          return block("in_list_too_long",
                       "an IN list has " + std::to_string(n)
                         + " elements; at most "
                         + std::to_string(cfg_.max_in_list)
                         + " are allowed (use a range or a join)",
                       x);
      }
      if (x.is_keyword("values")) {
        int d = x.depth;
        int rows = 0;
        for (size_t k = i + 1; k < size(); ++k) {
          if (t_[k]->depth < d || (t_[k]->depth == d && is_clause_end(*t_[k])))
            break;
          if (t_[k]->depth == d && t_[k]->is_symbol("(")
              && ++rows > cfg_.max_in_list)
            break;
        }
        if (rows > cfg_.max_in_list)
          return block("in_list_too_long",
                       "a VALUES list has " + std::to_string(rows)
                         + " rows; at most "
                         + std::to_string(cfg_.max_in_list)
                         + " are allowed",
                       x);
      }
    }
    return true;
  }

  // -- LIMIT ------------------------------------------------------------------

  /// Whether the LIMIT clause at `l` is well formed; fills the positions
  /// of its count and offset literals.
  bool parse_limit(size_t l, size_t& count, size_t& offset,
                   bool& comma) const {
    int d = t_[l]->depth;
    count = l + 1;
    offset = size();
    comma = false;
    if (!integer_literal(tok(count)))
      return false;
    size_t next = count + 1;
    if (is_kw(next, "offset") || (is_sym(next, ",") && tok(next)->depth == d)) {
      comma = is_sym(next, ",");
      if (!integer_literal(tok(next + 1)))
        return false;
      if (comma) {
        offset = count;
        count = next + 1;
      } else {
        offset = next + 1;
      }
      next += 2;
    }
    // A LIMIT clause ends its (sub)query: nothing but ')' may follow.
    auto* after = tok(next);
    return after == nullptr || (after->is_symbol(")") && after->depth < d);
  }

  bool check_limits() {
    for (size_t i = 0; i < size(); ++i) {
      auto& x = *t_[i];
      if (x.is_keyword("offset") && !is_kw(i - 1, "limit")) {
        // OFFSET is only valid inside a LIMIT clause, checked below.
        bool in_limit = false;
        for (size_t k = i; k-- > 0;)
          if (t_[k]->depth == x.depth) {
            in_limit = integer_literal(t_[k]) && k > 0
                       && t_[k - 1]->is_keyword("limit");
            break;
          }
        if (!in_limit)
          return block("non_literal_limit",
                       "OFFSET must follow LIMIT and both must be integer "
                       "literals",
                       x);
      }
      if (!x.is_keyword("limit"))
        continue;
      size_t count = 0;
      size_t offset = 0;
      bool comma = false;
      if (!parse_limit(i, count, offset, comma))
        return block("non_literal_limit",
                     "LIMIT and OFFSET must be plain integer literals (e.g. "
                     "LIMIT 50 OFFSET 100)",
                     x);
    }
    return true;
  }

  bool check_correctable() {
    if (!lexed_.balanced)
      return fail(verdict_kind::correctable, "unbalanced_parentheses",
                  "the parentheses are unbalanced");
    for (auto* x : t_)
      if (x->kind == token_kind::parameter)
        return fail(verdict_kind::correctable, "parameter",
                    "bound parameters like " + shown(*x)
                      + " are not supported: write literal values",
                    x->offset);
    return true;
  }

  void rewrite_limit() {
    const auto end = t_.back()->offset + t_.back()->text.size();
    const auto max = std::to_string(cfg_.max_limit);
    size_t l = size();
    for (size_t i = 0; i < size(); ++i)
      if (t_[i]->depth == 0 && t_[i]->is_keyword("limit"))
        l = i;
    if (l == size()) {
      result_.sql = std::string{sql_.substr(0, end)} + " LIMIT " + max;
      result_.limit_applied = true;
      return;
    }
    size_t count = 0;
    size_t offset = 0;
    bool comma = false;
    parse_limit(l, count, offset, comma); // validated by check_limits
    auto n = *integer_literal(t_[count]);
    if (n <= cfg_.max_limit) {
      result_.sql = std::string{sql_.substr(0, end)};
      return;
    }
    result_.limit_applied = true;
    auto& c = *t_[count];
    if (!comma) {
      result_.sql = std::string{sql_.substr(0, c.offset)} + max
                    + std::string{sql_.substr(c.offset + c.text.size(),
                                              end - c.offset - c.text.size())};
      return;
    }
    // LIMIT a, b means OFFSET a: spell it out while rewriting.
    auto& lim = *t_[l];
    result_.sql = std::string{sql_.substr(0, lim.offset)} + "LIMIT " + max
                  + " OFFSET " + std::string{t_[offset]->text};
  }

  std::string_view sql_;
  const policy_config& cfg_;
  lex_result lexed_;
  std::vector<const token*> t_;
  std::vector<size_t> match_;
  policy_result result_;
};

} // namespace

std::string_view to_string(verdict_kind x) noexcept {
  switch (x) {
    case verdict_kind::allow:
      return "allow";
    case verdict_kind::block:
      return "block";
    case verdict_kind::correctable:
      return "correctable";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, verdict_kind x) {
  return out << to_string(x);
}

policy_result check_sql(std::string_view sql, const policy_config& cfg) {
  return checker{sql, cfg}.run();
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
