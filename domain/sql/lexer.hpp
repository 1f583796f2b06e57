#pragma once

// Declares the SQLite-dialect tokenizer and its tokens.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

/// A tokenizer for SQLite's SQL dialect (3.40), used by the static SQL
/// policy. It follows SQLite's own tokenizer closely enough that a keyword
/// hidden in a string, a quoted identifier or a comment is never mistaken
/// for a keyword, and that what the policy sees as one statement is what
/// SQLite would see as one statement. Pure: no SQLite, no allocation
/// beyond the token vector.
namespace candor::domain::sql {

enum class token_kind : uint8_t {
  keyword,           ///< one of SQLite's 147 keywords, unquoted
  identifier,        ///< a bare word that is not a keyword
  quoted_identifier, ///< "x", `x` or [x]
  string,            ///< 'text' with '' as the escaped quote
  blob,              ///< x'0A1B'
  number,            ///< 12, 1.5, .5, 1e3, 0x1F
  op,                ///< || -> ->> <= >= <> != == = < > << >> + - * / % & | ~
  punct,             ///< ( ) , ; .
  parameter,         ///< ?, ?12, :name, @name, $name
  comment,           ///< -- to the end of the line, or /* ... */
};

std::string_view to_string(token_kind x) noexcept;

std::ostream& operator<<(std::ostream& out, token_kind x);

/// One token. `text` points into the lexed input, which must outlive it.
struct token {
  token_kind kind = token_kind::punct;
  /// The exact source text, quotes and comment markers included.
  std::string_view text;
  /// Byte offset of `text` in the input.
  size_t offset = 0;
  /// Number of unclosed '(' before this token. A '(' has the depth of
  /// its surroundings, its contents one more, its ')' the depth of the
  /// '(' again. Never negative: a stray ')' stays at 0.
  int depth = 0;
  /// For keywords, identifiers and quoted identifiers: the name in ASCII
  /// lower case with quotes removed and doubled quotes collapsed
  /// (`"Order ""x"""` -> `order "x"`). Empty for other kinds.
  std::string name;

  bool is(token_kind k) const noexcept {
    return kind == k;
  }
  /// True for an unquoted keyword spelled `lower` (given in lower case).
  bool is_keyword(std::string_view lower) const noexcept {
    return kind == token_kind::keyword && name == lower;
  }
  /// True for a punctuation or operator token spelled exactly `s`.
  bool is_symbol(std::string_view s) const noexcept {
    return (kind == token_kind::punct || kind == token_kind::op) && text == s;
  }
  /// A keyword or identifier, quoted or not: something that can name a
  /// table, a column or a function.
  bool is_word() const noexcept {
    return kind == token_kind::keyword || kind == token_kind::identifier
           || kind == token_kind::quoted_identifier;
  }
};

/// The tokens of a text, or where and why lexing stopped.
struct lex_result {
  std::vector<token> tokens;
  /// Empty on success; otherwise what is wrong ("unterminated string").
  std::string error;
  /// Byte offset of the problem when `error` is set.
  size_t error_offset = 0;
  /// The deepest parenthesis nesting seen.
  int max_depth = 0;
  /// True when every '(' is closed and no ')' is unmatched.
  bool balanced = true;

  bool ok() const noexcept {
    return error.empty();
  }
};

/// Splits `sql` into tokens (whitespace dropped, comments kept). Errors:
/// unterminated string, quoted identifier or block comment; malformed
/// blob literal; a number running into a letter (`12abc`); a character
/// SQLite does not accept (e.g. `!` alone, `#`, a backslash).
lex_result lex(std::string_view sql);

/// True when `word` is one of SQLite 3.40's keywords (any case).
bool is_keyword(std::string_view word) noexcept;

/// All of SQLite 3.40's keywords, in upper case and sorted.
const std::vector<std::string_view>& keywords();

} // namespace candor::domain::sql
