// The tokenizer for SQLite's SQL dialect used by the static SQL policy,
// with SQLite's keyword list.

#include "domain/sql/lexer.hpp"

#include <algorithm>
#include <array>
#include <ostream>

namespace candor::domain::sql {

namespace {

// The keyword list of SQLite 3.40 (mkkeywordhash.c with the default
// options, the set `sqlite3_keyword_name` enumerates), sorted.
constexpr std::array<std::string_view, 147> keyword_list = {
  "ABORT",
  "ACTION",
  "ADD",
  "AFTER",
  "ALL",
  "ALTER",
  "ALWAYS",
  "ANALYZE",
  "AND",
  "AS",
  "ASC",
  "ATTACH",
  "AUTOINCREMENT",
  "BEFORE",
  "BEGIN",
  "BETWEEN",
  "BY",
  "CASCADE",
  "CASE",
  "CAST",
  "CHECK",
  "COLLATE",
  "COLUMN",
  "COMMIT",
  "CONFLICT",
  "CONSTRAINT",
  "CREATE",
  "CROSS",
  "CURRENT",
  "CURRENT_DATE",
  "CURRENT_TIME",
  "CURRENT_TIMESTAMP",
  "DATABASE",
  "DEFAULT",
  "DEFERRABLE",
  "DEFERRED",
  "DELETE",
  "DESC",
  "DETACH",
  "DISTINCT",
  "DO",
  "DROP",
  "EACH",
  "ELSE",
  "END",
  "ESCAPE",
  "EXCEPT",
  "EXCLUDE",
  "EXCLUSIVE",
  "EXISTS",
  "EXPLAIN",
  "FAIL",
  "FILTER",
  "FIRST",
  "FOLLOWING",
  "FOR",
  "FOREIGN",
  "FROM",
  "FULL",
  "GENERATED",
  "GLOB",
  "GROUP",
  "GROUPS",
  "HAVING",
  "IF",
  "IGNORE",
  "IMMEDIATE",
  "IN",
  "INDEX",
  "INDEXED",
  "INITIALLY",
  "INNER",
  "INSERT",
  "INSTEAD",
  "INTERSECT",
  "INTO",
  "IS",
  "ISNULL",
  "JOIN",
  "KEY",
  "LAST",
  "LEFT",
  "LIKE",
  "LIMIT",
  "MATCH",
  "MATERIALIZED",
  "NATURAL",
  "NO",
  "NOT",
  "NOTHING",
  "NOTNULL",
  "NULL",
  "NULLS",
  "OF",
  "OFFSET",
  "ON",
  "OR",
  "ORDER",
  "OTHERS",
  "OUTER",
  "OVER",
  "PARTITION",
  "PLAN",
  "PRAGMA",
  "PRECEDING",
  "PRIMARY",
  "QUERY",
  "RAISE",
  "RANGE",
  "RECURSIVE",
  "REFERENCES",
  "REGEXP",
  "REINDEX",
  "RELEASE",
  "RENAME",
  "REPLACE",
  "RESTRICT",
  "RETURNING",
  "RIGHT",
  "ROLLBACK",
  "ROW",
  "ROWS",
  "SAVEPOINT",
  "SELECT",
  "SET",
  "TABLE",
  "TEMP",
  "TEMPORARY",
  "THEN",
  "TIES",
  "TO",
  "TRANSACTION",
  "TRIGGER",
  "UNBOUNDED",
  "UNION",
  "UNIQUE",
  "UPDATE",
  "USING",
  "VACUUM",
  "VALUES",
  "VIEW",
  "VIRTUAL",
  "WHEN",
  "WHERE",
  "WINDOW",
  "WITH",
  "WITHOUT",
};

constexpr char ascii_upper(char c) noexcept {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

constexpr char ascii_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f'
         || c == '\r';
}

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

bool is_hex(char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// SQLite's IdChar: letters, digits, '_', '$' and every byte >= 0x80.
bool is_id_char(char c) noexcept {
  auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || is_digit(c) || (c >= 'a' && c <= 'z')
         || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

/// Characters that may start a bare identifier.
bool is_id_start(char c) noexcept {
  return is_id_char(c) && !is_digit(c) && c != '$';
}

std::string lower_copy(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = ascii_lower(c);
  return out;
}

/// Removes the quotes of a quoted identifier and collapses doubled ones.
std::string unquote(std::string_view text) {
  if (text.size() < 2)
    return std::string{text};
  char open = text.front();
  char close = open == '[' ? ']' : open;
  std::string out;
  out.reserve(text.size() - 2);
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    out.push_back(ascii_lower(text[i]));
    if (open != '[' && text[i] == close && i + 2 < text.size()
        && text[i + 1] == close)
      ++i;
  }
  return out;
}

class lexer {
public:
  explicit lexer(std::string_view sql) : s_(sql) {
    // nop
  }

  lex_result run() {
    while (pos_ < s_.size() && result_.ok())
      step();
    if (depth_ != 0)
      result_.balanced = false;
    return std::move(result_);
  }

private:
  char at(size_t i) const noexcept {
    return i < s_.size() ? s_[i] : '\0';
  }

  void fail(std::string message, size_t offset) {
    result_.error = std::move(message);
    result_.error_offset = offset;
  }

  void emit(token_kind kind, size_t start, size_t end) {
    token t;
    t.kind = kind;
    t.text = s_.substr(start, end - start);
    t.offset = start;
    t.depth = depth_;
    if (kind == token_kind::identifier || kind == token_kind::keyword)
      t.name = lower_copy(t.text);
    else if (kind == token_kind::quoted_identifier)
      t.name = unquote(t.text);
    result_.tokens.push_back(std::move(t));
    pos_ = end;
  }

  void step() {
    const size_t start = pos_;
    const char c = s_[pos_];
    if (is_space(c)) {
      ++pos_;
      return;
    }
    switch (c) {
      case '-':
        if (at(pos_ + 1) == '-') {
          auto end = s_.find('\n', pos_);
          emit(token_kind::comment, start,
               end == std::string_view::npos ? s_.size() : end);
        } else if (at(pos_ + 1) == '>') {
          emit(token_kind::op, start, pos_ + (at(pos_ + 2) == '>' ? 3 : 2));
        } else {
          emit(token_kind::op, start, pos_ + 1);
        }
        return;
      case '/':
        if (at(pos_ + 1) == '*') {
          // Block comments do not nest: the first "*/" ends one.
          auto end = s_.find("*/", pos_ + 2);
          if (end == std::string_view::npos)
            return fail("unterminated /* comment", start);
          emit(token_kind::comment, start, end + 2);
        } else {
          emit(token_kind::op, start, pos_ + 1);
        }
        return;
      case '(':
        emit(token_kind::punct, start, pos_ + 1);
        ++depth_;
        result_.max_depth = std::max(result_.max_depth, depth_);
        return;
      case ')':
        if (depth_ == 0)
          result_.balanced = false;
        else
          --depth_;
        emit(token_kind::punct, start, pos_ + 1);
        return;
      case ',':
      case ';': emit(token_kind::punct, start, pos_ + 1); return;
      case '.':
        if (is_digit(at(pos_ + 1)))
          return number(start);
        emit(token_kind::punct, start, pos_ + 1);
        return;
      case '+':
      case '*':
      case '%':
      case '&':
      case '~': emit(token_kind::op, start, pos_ + 1); return;
      case '=':
        emit(token_kind::op, start, pos_ + (at(pos_ + 1) == '=' ? 2 : 1));
        return;
      case '<': {
        char n = at(pos_ + 1);
        bool two = n == '=' || n == '>' || n == '<';
        emit(token_kind::op, start, pos_ + (two ? 2 : 1));
        return;
      }
      case '>': {
        char n = at(pos_ + 1);
        bool two = n == '=' || n == '>';
        emit(token_kind::op, start, pos_ + (two ? 2 : 1));
        return;
      }
      case '!':
        if (at(pos_ + 1) != '=')
          return fail("unexpected character '!'", start);
        emit(token_kind::op, start, pos_ + 2);
        return;
      case '|':
        emit(token_kind::op, start, pos_ + (at(pos_ + 1) == '|' ? 2 : 1));
        return;
      case '\'': return quoted(start, '\'', token_kind::string, "string");
      case '"':
        return quoted(start, '"', token_kind::quoted_identifier,
                      "quoted identifier");
      case '`':
        return quoted(start, '`', token_kind::quoted_identifier,
                      "quoted identifier");
      case '[': {
        auto end = s_.find(']', pos_ + 1);
        if (end == std::string_view::npos)
          return fail("unterminated [identifier]", start);
        emit(token_kind::quoted_identifier, start, end + 1);
        return;
      }
      case '?': {
        size_t i = pos_ + 1;
        while (is_digit(at(i)))
          ++i;
        emit(token_kind::parameter, start, i);
        return;
      }
      case ':':
      case '@':
      case '$': {
        size_t i = pos_ + 1;
        while (i < s_.size()) {
          if (is_id_char(s_[i]))
            ++i;
          else if (s_[i] == ':' && at(i + 1) == ':')
            i += 2;
          else
            break;
        }
        if (i == pos_ + 1)
          return fail(std::string{"unexpected character '"} + c + "'", start);
        emit(token_kind::parameter, start, i);
        return;
      }
      default: break;
    }
    if (is_digit(c))
      return number(start);
    if ((c == 'x' || c == 'X') && at(pos_ + 1) == '\'')
      return blob(start);
    if (is_id_start(c)) {
      size_t i = pos_ + 1;
      while (is_id_char(at(i)))
        ++i;
      auto word = s_.substr(start, i - start);
      emit(is_keyword(word) ? token_kind::keyword : token_kind::identifier,
           start, i);
      return;
    }
    if (c == '\0')
      return fail("NUL character", start);
    std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, c) : "?";
    fail("unexpected character '" + shown + "'", start);
  }

  void quoted(size_t start, char q, token_kind kind, const char* what) {
    size_t i = start + 1;
    while (true) {
      auto end = s_.find(q, i);
      if (end == std::string_view::npos)
        return fail(std::string{"unterminated "} + what, start);
      if (at(end + 1) == q) {
        i = end + 2; // a doubled quote stands for one
        continue;
      }
      emit(kind, start, end + 1);
      return;
    }
  }

  void blob(size_t start) {
    size_t i = start + 2;
    while (is_hex(at(i)))
      ++i;
    if (at(i) != '\'') {
      if (i >= s_.size())
        return fail("unterminated blob literal", start);
      return fail("malformed blob literal", start);
    }
    if ((i - start - 2) % 2 != 0)
      return fail("blob literal with an odd number of hex digits", start);
    emit(token_kind::blob, start, i + 1);
  }

  void number(size_t start) {
    size_t i = start;
    if (s_[i] == '0' && (at(i + 1) == 'x' || at(i + 1) == 'X')
        && is_hex(at(i + 2))) {
      i += 2;
      while (is_hex(at(i)))
        ++i;
    } else {
      while (is_digit(at(i)))
        ++i;
      if (at(i) == '.') {
        ++i;
        while (is_digit(at(i)))
          ++i;
      }
      if ((at(i) == 'e' || at(i) == 'E')
          && (is_digit(at(i + 1))
              || ((at(i + 1) == '+' || at(i + 1) == '-')
                  && is_digit(at(i + 2))))) {
        i += 2;
        while (is_digit(at(i)))
          ++i;
      }
    }
    if (is_id_char(at(i)))
      return fail("malformed number", start);
    emit(token_kind::number, start, i);
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
  lex_result result_;
};

} // namespace

std::string_view to_string(token_kind x) noexcept {
  switch (x) {
    case token_kind::keyword: return "keyword";
    case token_kind::identifier: return "identifier";
    case token_kind::quoted_identifier: return "quoted_identifier";
    case token_kind::string: return "string";
    case token_kind::blob: return "blob";
    case token_kind::number: return "number";
    case token_kind::op: return "operator";
    case token_kind::punct: return "punctuation";
    case token_kind::parameter: return "parameter";
    case token_kind::comment: return "comment";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, token_kind x) {
  return out << to_string(x);
}

bool is_keyword(std::string_view word) noexcept {
  if (word.empty() || word.size() > 17)
    return false;
  char buf[18];
  for (size_t i = 0; i < word.size(); ++i)
    buf[i] = ascii_upper(word[i]);
  std::string_view up{buf, word.size()};
  return std::binary_search(keyword_list.begin(), keyword_list.end(), up);
}

const std::vector<std::string_view>& keywords() {
  static const std::vector<std::string_view> all(keyword_list.begin(),
                                                 keyword_list.end());
  return all;
}

lex_result lex(std::string_view sql) {
  return lexer{sql}.run();
}

} // namespace candor::domain::sql
