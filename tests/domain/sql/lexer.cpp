// Tests of the SQLite-dialect lexer: keywords, token kinds, quoting,
// comments, errors and offsets.

#include "domain/sql/lexer.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

using namespace candor::domain::sql;

namespace {

/// The kinds of every token of `sql` (which must lex).
std::vector<token_kind> kinds(std::string_view sql) {
  auto r = lex(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error);
  std::vector<token_kind> out;
  for (auto& t : r.tokens)
    out.push_back(t.kind);
  return out;
}

/// The texts of every token of `sql` (which must lex).
std::vector<std::string> texts(std::string_view sql) {
  auto r = lex(sql);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.error);
  std::vector<std::string> out;
  for (auto& t : r.tokens)
    out.emplace_back(t.text);
  return out;
}

using V = std::vector<std::string>;
using K = token_kind;

} // namespace

BOOST_AUTO_TEST_SUITE(domain_sql_lexer)

BOOST_AUTO_TEST_CASE(keyword_set_is_sqlites) {
  auto& all = keywords();
  BOOST_TEST(all.size() == 147u);
  BOOST_TEST(std::is_sorted(all.begin(), all.end()));
  BOOST_TEST(is_keyword("select"));
  BOOST_TEST(is_keyword("ReTuRnInG"));
  BOOST_TEST(is_keyword("CURRENT_TIMESTAMP"));
  BOOST_TEST(is_keyword("MATERIALIZED"));
  BOOST_TEST(!is_keyword("updated_at"));
  BOOST_TEST(!is_keyword("upsert"));
  BOOST_TEST(!is_keyword("count"));
  BOOST_TEST(!is_keyword("true"));
  BOOST_TEST(!is_keyword(""));
}

BOOST_AUTO_TEST_CASE(basic_kinds) {
  auto k = kinds("SELECT a, \"b\", `c`, [d], 'e', x'0aFF', 1.5e3, ?1, :p, "
                 "@q, $r FROM t -- note\n/* block */;");
  std::vector<K> expect = {
    K::keyword, K::identifier,
    K::punct,   K::quoted_identifier,
    K::punct,   K::quoted_identifier,
    K::punct,   K::quoted_identifier,
    K::punct,   K::string,
    K::punct,   K::blob,
    K::punct,   K::number,
    K::punct,   K::parameter,
    K::punct,   K::parameter,
    K::punct,   K::parameter,
    K::punct,   K::parameter,
    K::keyword, K::identifier,
    K::comment, K::comment,
    K::punct,
  };
  BOOST_TEST(k == expect, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(names_are_lower_case_and_unquoted) {
  auto r = lex("SELECT \"Order \"\"X\"\"\", [Total Cents], `a``b`, UpDated_At");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.tokens[0].name == "select");
  BOOST_TEST(r.tokens[1].name == "order \"x\"");
  BOOST_TEST(r.tokens[3].name == "total cents");
  BOOST_TEST(r.tokens[5].name == "a`b");
  BOOST_TEST(r.tokens[7].name == "updated_at");
  BOOST_TEST(r.tokens[7].kind == K::identifier);
}

BOOST_AUTO_TEST_CASE(operators_longest_first) {
  BOOST_TEST(texts("a||b->c->>d<=e>=f<>g!=h==i<<j>>k%l&m|n~o")
               == (V{"a", "||", "b", "->", "c", "->>", "d", "<=", "e", ">=",
                     "f", "<>", "g", "!=", "h", "==",  "i", "<<", "j", ">>",
                     "k", "%",  "l", "&",  "m", "|",   "n", "~",  "o"}),
             boost::test_tools::per_element());
  BOOST_TEST(texts("a-1") == (V{"a", "-", "1"}),
             boost::test_tools::per_element());
  BOOST_TEST(texts("t.c") == (V{"t", ".", "c"}),
             boost::test_tools::per_element());
  BOOST_TEST(texts(".5+1.") == (V{".5", "+", "1."}),
             boost::test_tools::per_element());
  BOOST_TEST(texts("0x1F 1e+3 2E-2") == (V{"0x1F", "1e+3", "2E-2"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(doubled_quotes_stay_inside_strings) {
  // 'it''s; DROP TABLE x' is one string: no ';' and no keyword escape it.
  auto r = lex("SELECT 'it''s; DROP TABLE x' AS s");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.tokens.size() == 4u);
  BOOST_TEST(r.tokens[1].kind == K::string);
  BOOST_TEST(r.tokens[1].text == "'it''s; DROP TABLE x'");
  // 'a''' is the string a' followed by whatever comes next.
  auto r2 = lex("SELECT 'a'''; DROP TABLE x");
  BOOST_REQUIRE(r2.ok());
  BOOST_TEST(r2.tokens[1].text == "'a'''");
  BOOST_TEST(r2.tokens[2].text == ";");
  BOOST_TEST(r2.tokens[3].is_keyword("drop"));
  // An empty string and a string of one quote.
  BOOST_TEST(texts("'' ''''") == (V{"''", "''''"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(keywords_in_strings_and_comments_are_not_keywords) {
  auto r = lex("SELECT 'delete from x' /* drop table y; */ -- insert\n, 1");
  BOOST_REQUIRE(r.ok());
  for (auto& t : r.tokens) {
    if (t.kind == K::keyword)
      BOOST_TEST(t.name == "select");
  }
  BOOST_TEST(r.tokens.size() == 6u);
}

BOOST_AUTO_TEST_CASE(block_comments_do_not_nest) {
  // SQLite ends a comment at the first */: the rest is code.
  auto r = lex("SELECT 1 /* outer /* inner */ DROP TABLE x /* */");
  BOOST_REQUIRE(r.ok());
  std::vector<std::string> words;
  for (auto& t : r.tokens)
    if (t.kind == K::keyword)
      words.push_back(t.name);
  BOOST_TEST(words == (V{"select", "drop", "table"}),
             boost::test_tools::per_element());
  // A nested-looking comment that leaves "*/" behind lexes as operators.
  BOOST_TEST(texts("/* a /* b */ */") == (V{"/* a /* b */", "*", "/"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(line_comment_ends_at_newline) {
  auto r = lex("SELECT 1 -- comment ; DROP\nFROM t");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.tokens[2].kind == K::comment);
  BOOST_TEST(r.tokens[2].text == "-- comment ; DROP");
  BOOST_TEST(r.tokens[3].is_keyword("from"));
  // At the very end, without a newline.
  BOOST_TEST(kinds("SELECT 1 --")
               == (std::vector<K>{K::keyword, K::number, K::comment}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(unterminated_things_are_errors) {
  struct item {
    std::string sql;
    std::string error;
    size_t offset;
  };
  std::vector<item> items = {
    {"SELECT 'abc", "unterminated string", 7},
    {"SELECT 'it''s", "unterminated string", 7},
    {"SELECT \"abc", "unterminated quoted identifier", 7},
    {"SELECT `abc", "unterminated quoted identifier", 7},
    {"SELECT [abc", "unterminated [identifier]", 7},
    {"SELECT 1 /* open", "unterminated /* comment", 9},
    {"SELECT x'0a", "unterminated blob literal", 7},
    {"SELECT x'0g'", "malformed blob literal", 7},
    {"SELECT x'abc'", "blob literal with an odd number of hex digits", 7},
    {"SELECT 12abc", "malformed number", 7},
    {"SELECT 1e", "malformed number", 7},
    {"SELECT !1", "unexpected character '!'", 7},
    {"SELECT #1", "unexpected character '#'", 7},
    {"SELECT \\", "unexpected character '\\'", 7},
    {"SELECT :", "unexpected character ':'", 7},
  };
  for (auto& x : items) {
    auto r = lex(x.sql);
    BOOST_TEST_CONTEXT(x.sql) {
      BOOST_TEST(!r.ok());
      BOOST_TEST(r.error == x.error);
      BOOST_TEST(r.error_offset == x.offset);
    }
  }
}

BOOST_AUTO_TEST_CASE(depth_and_balance) {
  auto r = lex("SELECT (a + (b)) FROM t");
  BOOST_REQUIRE(r.ok());
  std::vector<int> depths;
  for (auto& t : r.tokens)
    depths.push_back(t.depth);
  BOOST_TEST(depths == (std::vector<int>{0, 0, 1, 1, 1, 2, 1, 0, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(r.max_depth == 2);
  BOOST_TEST(r.balanced);
  BOOST_TEST(!lex("SELECT (1").balanced);
  BOOST_TEST(!lex("SELECT 1)").balanced);
  BOOST_TEST(!lex("SELECT 1) + (2").balanced);
  // Parentheses inside strings and comments do not count.
  auto s = lex("SELECT '(' /* ( */ -- (\n");
  BOOST_TEST(s.balanced);
  BOOST_TEST(s.max_depth == 0);
}

BOOST_AUTO_TEST_CASE(offsets_point_into_the_input) {
  std::string sql = "SELECT  amount\n FROM   orders";
  auto r = lex(sql);
  BOOST_REQUIRE(r.ok());
  for (auto& t : r.tokens)
    BOOST_TEST(sql.substr(t.offset, t.text.size()) == t.text);
  BOOST_TEST(r.tokens[1].offset == 8u);
  BOOST_TEST(r.tokens[3].offset == 23u);
}

BOOST_AUTO_TEST_CASE(non_ascii_identifiers_and_strings) {
  auto r = lex("SELECT 'Crème brûlée', größe FROM t");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.tokens[1].kind == K::string);
  BOOST_TEST(r.tokens[3].kind == K::identifier);
  BOOST_TEST(r.tokens[3].text == "größe");
}

BOOST_AUTO_TEST_CASE(nul_is_an_error) {
  std::string sql("SELECT 1\0; DROP TABLE t", 23);
  auto r = lex(sql);
  BOOST_TEST(!r.ok());
  BOOST_TEST(r.error == "NUL character");
  BOOST_TEST(r.error_offset == 8u);
}

BOOST_AUTO_TEST_CASE(helpers) {
  auto r = lex("SELECT replace(a, 'x', 'y') FROM t;");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r.tokens[0].is_keyword("select"));
  BOOST_TEST(!r.tokens[0].is_keyword("SELECT")); // names are lower case
  BOOST_TEST(r.tokens[1].is_word());
  BOOST_TEST(r.tokens[1].is_keyword("replace"));
  BOOST_TEST(r.tokens[2].is_symbol("("));
  BOOST_TEST(!r.tokens[4].is_word());
  BOOST_TEST(r.tokens.back().is_symbol(";"));
  BOOST_TEST(to_string(K::quoted_identifier) == "quoted_identifier");
}

BOOST_AUTO_TEST_SUITE_END()
