#pragma once

// The SQL policy checker behind check_sql (domain/sql/policy.hpp): its
// declaration and small token helpers, shared by domain/sql/policy.cpp
// (input, lexing, statement shape, names, recursion) and
// domain/sql/policy_structure.cpp (joins, sizes, limits, the LIMIT
// rewrite). Internal to those files.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/sql/lexer.hpp"
#include "domain/sql/policy.hpp"

namespace candor::domain::sql::detail {

/// Whether `xs` holds `x`.
inline bool contains(const std::vector<std::string_view>& xs,
                     std::string_view x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

class checker {
public:
  checker(std::string_view sql, const policy_config& cfg)
      : sql_(sql), cfg_(cfg) {
    // nop
  }

  policy_result run();

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
      "where",  "group", "having", "order",     "limit",
      "window", "union", "except", "intersect", "returning",
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

  bool check_input();

  static std::string hex(uint32_t cp) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (int shift = cp > 0xFFFF ? 20 : 12; shift >= 0; shift -= 4)
      out.push_back(digits[(cp >> shift) & 0xF]);
    return out;
  }

  bool lex_and_split();

  // -- statement shape --------------------------------------------------------

  bool check_start();

  bool check_keywords();

  bool check_names();

  /// One common table expression: where its name is and the parentheses
  /// around its body.
  struct cte {
    size_t name = 0;
    size_t open = 0;
    size_t close = 0;
  };

  /// Every CTE of every WITH clause in the statement (nested ones too),
  /// in text order.
  std::vector<cte> ctes() const;

  /// Whether the word at `i` stands where SQLite reads a table name:
  /// after FROM or JOIN (through any '(' in between, so `FROM (c)` too),
  /// after a ',' in a FROM clause, or directly after IN (`x IN c`).
  bool table_position(size_t i) const;

  bool check_recursion();

  // -- joins ------------------------------------------------------------------

  bool check_joins();

  /// The JOIN at `j` must have an ON that names at least one column.
  bool check_join_condition(size_t j);

  // -- sizes ------------------------------------------------------------------

  bool check_sizes();

  /// How many copies of CTE bodies SQLite makes while compiling: see
  /// `policy_config::max_cte_expansion`.
  bool check_cte_expansion();

  // -- LIMIT ------------------------------------------------------------------

  /// Whether the LIMIT clause at `l` is well formed; fills the positions
  /// of its count and offset literals.
  bool parse_limit(size_t l, size_t& count, size_t& offset, bool& comma) const;

  bool check_limits();

  bool check_correctable();

  void rewrite_limit();

  std::string_view sql_;
  const policy_config& cfg_;
  lex_result lexed_;
  std::vector<const token*> t_;
  std::vector<size_t> match_;
  policy_result result_;
};

} // namespace candor::domain::sql::detail
