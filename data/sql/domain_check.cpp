// The catalog's value-domain check on model-written SQL: finds filters
// that compare a categorical column with a value it never holds.

#include "data/sql/domain_check.hpp"

#include <algorithm>
#include <map>

#include "domain/sql/lexer.hpp"

namespace candor::data {

namespace {

using domain::sql::token;
using domain::sql::token_kind;

/// The text of a string literal token without its quotes.
std::string unquote(std::string_view text) {
  std::string out;
  if (text.size() < 2)
    return out;
  text = text.substr(1, text.size() - 2);
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\'' && i + 1 < text.size() && text[i + 1] == '\'')
      ++i;
  }
  return out;
}

bool is_comparison(const token& t) {
  return t.kind == token_kind::op
         && (t.text == "=" || t.text == "==" || t.text == "!="
             || t.text == "<>");
}

/// A column reference ending at token `end` (inclusive): `col` or
/// `qualifier.col`.
struct column_ref {
  std::string qualifier;
  std::string column;
};

std::optional<column_ref> ref_ending_at(const std::vector<token>& ts,
                                        size_t end) {
  if (end >= ts.size() || !ts[end].is_word())
    return std::nullopt;
  if (ts[end].kind == token_kind::keyword)
    return std::nullopt;
  column_ref r;
  r.column = ts[end].name;
  if (end >= 2 && ts[end - 1].is_symbol(".") && ts[end - 2].is_word())
    r.qualifier = ts[end - 2].name;
  return r;
}

std::optional<column_ref> ref_starting_at(const std::vector<token>& ts,
                                          size_t begin) {
  if (begin >= ts.size() || !ts[begin].is_word()
      || ts[begin].kind == token_kind::keyword)
    return std::nullopt;
  if (begin + 2 < ts.size() && ts[begin + 1].is_symbol(".")
      && ts[begin + 2].is_word())
    return column_ref{ts[begin].name, ts[begin + 2].name};
  // Not a column when it is followed by '(' (a function) or '.'.
  if (begin + 1 < ts.size()
      && (ts[begin + 1].is_symbol("(") || ts[begin + 1].is_symbol(".")))
    return std::nullopt;
  return column_ref{{}, ts[begin].name};
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs) {
    if (!out.empty())
      out += ", ";
    out += "'" + x + "'";
  }
  return out;
}

class checker {
public:
  checker(const std::vector<token>& ts, const catalog& cat)
      : ts_(ts), cat_(cat) {
    collect_sources();
  }

  std::optional<domain_violation> run() {
    for (size_t i = 0; i < ts_.size(); ++i) {
      if (ts_[i].kind != token_kind::string)
        continue;
      auto literal = unquote(ts_[i].text);
      std::optional<column_ref> ref;
      if (i >= 2 && is_comparison(ts_[i - 1]))
        ref = ref_ending_at(ts_, i - 2);
      else if (i + 2 < ts_.size() && is_comparison(ts_[i + 1]))
        ref = ref_starting_at(ts_, i + 2);
      else
        ref = in_list_ref(i);
      if (!ref)
        continue;
      if (auto v = judge(*ref, literal))
        return v;
    }
    return std::nullopt;
  }

private:
  /// Table names and aliases after FROM and JOIN.
  void collect_sources() {
    for (size_t i = 0; i + 1 < ts_.size(); ++i) {
      if (!(ts_[i].is_keyword("from") || ts_[i].is_keyword("join")))
        continue;
      const auto& t = ts_[i + 1];
      if (!t.is_word() || !cat_.find_table(t.name))
        continue;
      tables_.push_back(t.name);
      aliases_[t.name] = t.name;
      size_t j = i + 2;
      if (j < ts_.size() && ts_[j].is_keyword("as"))
        ++j;
      if (j < ts_.size() && ts_[j].is_word()
          && ts_[j].kind != token_kind::keyword)
        aliases_[ts_[j].name] = t.name;
    }
  }

  /// For a string inside `col [NOT] IN ( ... )`: the column.
  std::optional<column_ref> in_list_ref(size_t i) const {
    size_t j = i;
    while (j > 0) {
      --j;
      const auto& t = ts_[j];
      if (t.kind == token_kind::string || t.kind == token_kind::number
          || t.is_symbol(","))
        continue;
      if (!t.is_symbol("(") || j == 0 || !ts_[j - 1].is_keyword("in"))
        return std::nullopt;
      size_t k = j - 1; // the IN keyword
      if (k == 0)
        return std::nullopt;
      --k;
      if (ts_[k].is_keyword("not")) {
        if (k == 0)
          return std::nullopt;
        --k;
      }
      return ref_ending_at(ts_, k);
    }
    return std::nullopt;
  }

  std::optional<domain_violation> judge(const column_ref& ref,
                                        const std::string& literal) const {
    std::vector<std::string> candidates;
    if (!ref.qualifier.empty()) {
      auto it = aliases_.find(ref.qualifier);
      if (it == aliases_.end())
        return std::nullopt; // a CTE or subquery: not judged
      candidates.push_back(it->second);
      if (!cat_.find_column(it->second, ref.column)) {
        domain_violation v;
        v.table = it->second;
        v.column = ref.column;
        v.literal = literal;
        std::vector<std::string> cols;
        if (auto* t = cat_.find_table(it->second))
          for (auto& c : t->columns)
            cols.push_back(c.name);
        v.message = "The filter on " + it->second + "." + ref.column
                    + " uses a column the sales catalog does not declare, "
                      "so it cannot be answered reliably. Ask again about "
                      "one of the columns of "
                    + it->second + ": " + join(cols) + ".";
        return v;
      }
    } else {
      for (auto& t : tables_)
        if (cat_.find_column(t, ref.column))
          candidates.push_back(t);
    }
    // The literal must fit at least one of the columns it may name (an
    // unqualified name can belong to several tables of the statement).
    const std::vector<std::string>* first = nullptr;
    std::string first_table;
    for (auto& table : candidates) {
      auto* values = cat_.value_domain(table, ref.column);
      if (!values)
        return std::nullopt; // a column without a domain: not judged
      if (std::find(values->begin(), values->end(), literal) != values->end())
        return std::nullopt;
      if (!first) {
        first = values;
        first_table = table;
      }
    }
    if (!first)
      return std::nullopt;
    domain_violation v;
    v.table = first_table;
    v.column = ref.column;
    v.literal = literal;
    v.allowed = *first;
    v.message = "The sales data has no " + ref.column + " '" + literal
                + "': " + first_table + "." + ref.column + " only holds "
                + join(*first) + ". Ask again with one of these values.";
    return v;
  }

  const std::vector<token>& ts_;
  const catalog& cat_;
  std::vector<std::string> tables_;
  std::map<std::string, std::string> aliases_;
};

} // namespace

std::optional<domain_violation> check_value_domains(std::string_view sql,
                                                    const catalog& cat) {
  auto lexed = domain::sql::lex(sql);
  if (!lexed.ok())
    return std::nullopt;
  std::vector<token> ts;
  ts.reserve(lexed.tokens.size());
  for (auto& t : lexed.tokens)
    if (t.kind != token_kind::comment)
      ts.push_back(t);
  return checker{ts, cat}.run();
}

} // namespace candor::data
