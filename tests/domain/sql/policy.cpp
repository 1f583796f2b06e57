// Tests of the static SQL policy: input checks, statement kinds, forbidden
// names, joins, size limits and the LIMIT rewrite.

#include "domain/sql/policy.hpp"

#include <set>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

using namespace candor::domain::sql;

namespace {

/// Expects `sql` to be stopped by `rule` with verdict `v`.
void expect_rule(const std::string& sql, const std::string& rule,
                 verdict_kind v = verdict_kind::block,
                 const policy_config& cfg = {}) {
  auto r = check_sql(sql, cfg);
  BOOST_TEST_CONTEXT(sql) {
    BOOST_TEST(r.rule == rule);
    BOOST_TEST(to_string(r.verdict) == to_string(v));
    BOOST_TEST(!r.message.empty());
    BOOST_TEST(r.sql.empty());
  }
}

/// Expects `sql` to be allowed.
policy_result expect_allow(const std::string& sql,
                           const policy_config& cfg = {}) {
  auto r = check_sql(sql, cfg);
  BOOST_TEST_CONTEXT(sql) {
    BOOST_TEST(r.allowed(), r.rule << ": " << r.message);
    BOOST_TEST(r.rule.empty());
    BOOST_TEST(!r.sql.empty());
  }
  return r;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_sql_policy)

// -- input bounds -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(input_too_long) {
  std::string filler(20 * 1024 - 40, ' ');
  expect_allow("SELECT 1 AS x" + filler);
  expect_rule("SELECT 1 AS x" + std::string(20 * 1024, ' '), "input_too_long");
  policy_config small;
  small.max_bytes = 10;
  expect_rule("SELECT 1, 2", "input_too_long", verdict_kind::block, small);
}

BOOST_AUTO_TEST_CASE(invalid_utf8) {
  expect_rule("SELECT 'caf\xC3' AS x", "invalid_utf8");
  expect_rule("SELECT '\xC0\xAF' AS x", "invalid_utf8"); // overlong '/'
  expect_allow("SELECT 'caf\xC3\xA9' AS x");
}

BOOST_AUTO_TEST_CASE(control_characters) {
  expect_rule(std::string("SELECT 1\0; DROP TABLE orders", 28),
              "control_character");
  expect_rule("SELECT 1\x1b[2J", "control_character");
  expect_rule("SELECT 1 \x0b", "control_character");
  expect_rule("SELECT '\xC2\x85'", "control_character"); // C1 NEL
  // Tab, newline and carriage return are ordinary whitespace.
  expect_allow("SELECT\t1\r\nFROM orders\n");
}

BOOST_AUTO_TEST_CASE(invisible_characters) {
  // Trojan Source: a right-to-left override, zero-width space and joiner,
  // a BOM, an isolate.
  expect_rule("SELECT status FROM orders WHERE status = 'paid\xE2\x80\xAE'",
              "invisible_character");
  expect_rule("SELECT 1 FROM orders WHERE id = 1\xE2\x80\x8B",
              "invisible_character");
  expect_rule("SELECT\xE2\x80\x8D 1", "invisible_character");
  expect_rule("\xEF\xBB\xBFSELECT 1", "invisible_character");
  expect_rule("SELECT '\xE2\x81\xA6x' AS y", "invisible_character");
  // Visible non-ASCII text is fine.
  expect_allow("SELECT name FROM products WHERE name LIKE '%Crème%'");
}

// -- lexing -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(syntax_errors_are_correctable) {
  expect_rule("SELECT 'abc FROM orders", "syntax_error",
              verdict_kind::correctable);
  expect_rule("SELECT 1 /* unterminated", "syntax_error",
              verdict_kind::correctable);
  expect_rule("SELECT 12abc", "syntax_error", verdict_kind::correctable);
  auto r = check_sql("SELECT \"abc");
  BOOST_TEST(r.message.find("unterminated quoted identifier") == 0u);
  BOOST_TEST(r.offset == 7u);
}

BOOST_AUTO_TEST_CASE(empty_is_correctable) {
  expect_rule("", "empty", verdict_kind::correctable);
  expect_rule("   \n ", "empty", verdict_kind::correctable);
  expect_rule("-- only a comment", "empty", verdict_kind::correctable);
  expect_rule(";", "empty", verdict_kind::correctable);
  expect_allow("SELECT 1;");
}

// -- statement shape ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(multiple_statements) {
  expect_rule("SELECT 1; SELECT 2", "multiple_statements");
  expect_rule("SELECT 1; DROP TABLE orders", "multiple_statements");
  expect_rule("SELECT 1;;", "multiple_statements");
  expect_rule("SELECT 'a'''; DELETE FROM orders; --'", "multiple_statements");
  expect_rule("SELECT 1 /* ; */ ; DROP TABLE orders", "multiple_statements");
  // Near misses: a trailing ';' with comments after it, and ';' inside a
  // string, a quoted identifier or a comment.
  expect_allow("SELECT 1; -- done");
  expect_allow("SELECT 1 ; /* done */  ");
  expect_allow("SELECT 'a;b' AS \"x;y\" FROM orders -- ; DROP TABLE x");
  expect_allow("SELECT 'it''s; DROP TABLE orders' AS s");
}

BOOST_AUTO_TEST_CASE(not_select) {
  expect_rule("VALUES (1)", "not_select");
  expect_rule("EXPLAIN SELECT 1", "not_select");
  expect_rule("(SELECT 1)", "not_select");
  expect_rule("Sure SELECT 1", "not_select");
  expect_allow("  /* lead */ select 1");
  expect_allow("WITH x AS (SELECT 1 AS a) SELECT a FROM x");
}

BOOST_AUTO_TEST_CASE(forbidden_keywords_anywhere) {
  for (auto sql : {
         "SELECT 1 FROM orders; DELETE FROM orders",
         "WITH x AS (SELECT 1) DELETE FROM orders",
         "WITH x AS (SELECT 1) INSERT INTO orders(id) VALUES (1)",
         "WITH x AS (SELECT 1) UPDATE orders SET status = 'paid'",
         "SELECT * INTO backup FROM orders",
         "SELECT 1 FROM orders WHERE id IN (SELECT id FROM orders) "
         "RETURNING id",
         "SELECT 1 UNION SELECT 2 FROM pragma",
       }) {
    auto r = check_sql(sql);
    BOOST_TEST_CONTEXT(sql) {
      BOOST_TEST(to_string(r.verdict) == "block");
      BOOST_TEST(
        (r.rule == "forbidden_keyword" || r.rule == "multiple_statements"));
    }
  }
  auto r = check_sql("WITH x AS (SELECT 1) delete FROM orders");
  BOOST_TEST(r.rule == "forbidden_keyword");
  BOOST_TEST(r.message.find("DELETE") != std::string::npos);
  BOOST_TEST(r.offset == 21u);
  // Every listed keyword blocks, whatever its case.
  for (auto kw : forbidden_keywords()) {
    std::string sql = "SELECT a FROM t WHERE ";
    sql += kw;
    expect_rule(sql, "forbidden_keyword");
  }
  // Near misses: the words inside strings, comments, quoted identifiers,
  // longer identifiers, and replace() the function.
  expect_allow("SELECT 'delete' AS op, \"update\" FROM orders -- drop");
  expect_allow("SELECT updated_at, deleted_flag, created_at FROM orders");
  expect_allow("SELECT replace(status, 'paid', 'PAID') FROM orders");
  expect_allow("SELECT count(*) AS inserts FROM orders");
}

BOOST_AUTO_TEST_CASE(schema_tables) {
  expect_rule("SELECT sql FROM sqlite_master", "schema_table");
  expect_rule("SELECT name FROM sqlite_schema", "schema_table");
  expect_rule("SELECT * FROM main.sqlite_master", "schema_table");
  expect_rule("SELECT * FROM \"SQLITE_TEMP_MASTER\"", "schema_table");
  expect_rule("SELECT * FROM [sqlite_sequence]", "schema_table");
  expect_rule("SELECT * FROM sqlite_stat1", "schema_table");
  expect_rule("SELECT * FROM dbstat", "schema_table");
  // Near miss: the word in a string; a table whose name merely contains it.
  expect_allow("SELECT 'sqlite_master' AS t FROM orders");
  expect_allow("SELECT id FROM orders_sqlite_copy");
}

BOOST_AUTO_TEST_CASE(table_valued_functions) {
  expect_rule("SELECT * FROM json_each('[1,2]')", "table_valued_function");
  expect_rule("SELECT * FROM orders, json_tree('{}')", "table_valued_function");
  expect_rule("SELECT * FROM pragma_table_info('customers')",
              "table_valued_function");
  expect_rule("SELECT name FROM \"pragma_database_list\"",
              "table_valued_function");
  expect_rule("SELECT * FROM generate_series(1, 1000000000)",
              "table_valued_function");
  expect_rule("SELECT sql FROM sqlite_stmt", "schema_table");
  expect_rule("SELECT * FROM sqlite_dbpage", "schema_table");
  BOOST_TEST(is_table_valued_function("PRAGMA_index_list"));
  BOOST_TEST(!is_table_valued_function("json_extract"));
  expect_allow("SELECT json_extract('{\"a\":1}', '$.a') AS a");
}

BOOST_AUTO_TEST_CASE(risky_functions_blocked) {
  for (auto f : risky_functions()) {
    std::string sql = "SELECT ";
    sql += f;
    sql += "(1) FROM orders";
    expect_rule(sql, "risky_function");
  }
  expect_rule("SELECT load_extension('/tmp/x.so')", "risky_function");
  expect_rule("SELECT hex(randomblob(1000000000))", "risky_function");
  expect_rule("SELECT length(zeroblob(1e9))", "risky_function");
  expect_rule("SELECT printf('%.*c', 900000000, 'x')", "risky_function");
  expect_rule("SELECT FORMAT('%999999999d', 1)", "risky_function");
  expect_rule("SELECT \"printf\"('%d', 5)", "risky_function");
  expect_rule("SELECT [load_extension]('x')", "risky_function");
  expect_rule("SELECT sqlite_version()", "risky_function");
  expect_rule("SELECT sqlite_compileoption_get(0)", "risky_function");
  expect_rule("SELECT fts3_tokenizer('simple')", "risky_function");
  expect_rule("SELECT char(65,66,67,68,69,70,71,72,73)", "risky_function");
  // Near misses: names in strings, longer names, char with few arguments,
  // a column called format.
  expect_allow("SELECT 'printf(1)' AS p, char(75, 67, 87) AS k");
  expect_allow("SELECT round(total_cents / 100.0, 2) FROM orders");
  expect_allow("SELECT format_code FROM products");
  BOOST_TEST(is_risky_function("SQLITE_OFFSET"));
  BOOST_TEST(!is_risky_function("round"));
}

BOOST_AUTO_TEST_CASE(recursive_ctes) {
  expect_rule("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
              "FROM c) SELECT x FROM c",
              "recursive_cte");
  // Recursive without the keyword, as SQLite allows.
  expect_rule("WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
              "WHERE x < 1000000000) SELECT count(*) FROM c",
              "recursive_cte");
  expect_rule("WITH a AS (SELECT 1 AS v), b AS (SELECT v FROM a UNION ALL "
              "SELECT v FROM b) SELECT * FROM b",
              "recursive_cte");
  expect_rule("WITH c AS MATERIALIZED (SELECT 1 AS x UNION ALL SELECT x "
              "FROM orders JOIN c ON c.x = orders.id) SELECT * FROM c",
              "recursive_cte");
  // Near misses: a CTE that reads another one, and one whose alias
  // matches its name in a qualified column.
  expect_allow("WITH a AS (SELECT id FROM orders), b AS (SELECT id FROM a) "
               "SELECT count(*) FROM b");
  expect_allow("WITH o AS (SELECT o.id FROM orders o) SELECT id FROM o");
  expect_allow("SELECT 'recursive' AS word");
}

BOOST_AUTO_TEST_CASE(recursive_ctes_through_any_table_reference) {
  // A parenthesised source, a join group, IN and a comma join all read
  // the CTE as a table; SQLite then runs it recursively.
  for (auto sql : {
         "WITH c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM (c)) SELECT "
         "count(*) FROM c",
         "WITH c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM ((c))) SELECT "
         "count(*) FROM c",
         "WITH c(n) AS (SELECT 1 UNION ALL SELECT o.id FROM orders o JOIN "
         "(c) ON c.n = o.id) SELECT count(*) FROM c",
         "WITH c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM orders WHERE n IN "
         "c) SELECT count(*) FROM c",
         "WITH c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM orders, c) SELECT "
         "count(*) FROM c",
         "WITH \"C\"(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM (c)) SELECT "
         "count(*) FROM c",
       }) {
    auto r = check_sql(sql);
    BOOST_TEST_CONTEXT(sql) {
      BOOST_TEST(r.rule == "recursive_cte");
      BOOST_TEST(r.message.find("refers to itself") != std::string::npos);
    }
  }
  // Its name as a column, an alias, a list element or a qualifier is no
  // table reference.
  expect_allow("WITH revenue AS (SELECT sum(total_cents) AS revenue FROM "
               "orders) SELECT revenue FROM revenue");
  expect_allow("WITH status AS (SELECT status, count(*) AS n FROM orders "
               "GROUP BY status) SELECT * FROM status");
  expect_allow("WITH c AS (SELECT id AS c FROM orders WHERE id IN (c)) "
               "SELECT c.c FROM c");
  expect_allow("WITH c AS (SELECT id FROM orders o WHERE o.id IS DISTINCT "
               "FROM c) SELECT id FROM c");
}

// -- joins --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(natural_and_using_joins) {
  expect_rule("SELECT id FROM orders NATURAL JOIN customers", "natural_join");
  expect_rule("SELECT o.id FROM orders o JOIN customer_contacts USING "
              "(customer_id)",
              "using_join");
  expect_rule("SELECT 1 FROM orders o LEFT JOIN customers c USING (id)",
              "using_join");
  expect_allow("SELECT o.id FROM orders o JOIN customers c ON c.id = "
               "o.customer_id WHERE 'using' <> 'natural'");
}

BOOST_AUTO_TEST_CASE(cross_and_comma_joins) {
  expect_rule("SELECT count(*) FROM orders CROSS JOIN order_items",
              "cross_join");
  expect_rule("SELECT count(*) FROM orders, order_items", "comma_join");
  expect_rule("SELECT count(*) FROM orders o, order_items i WHERE o.id = "
              "i.order_id",
              "comma_join");
  expect_rule("SELECT count(*) FROM (orders, order_items)", "comma_join");
  expect_rule("SELECT * FROM (SELECT a.id FROM orders a, orders b) s",
              "comma_join");
  // Near misses: commas in the select list, in function calls, in GROUP
  // BY and ORDER BY, in IN lists, in a subquery's select list, in CTE
  // lists, and in a LIMIT.
  expect_allow("SELECT status, channel, count(*), substr(order_date, 1, 7) "
               "FROM orders WHERE status IN ('paid', 'refunded') GROUP BY "
               "status, channel ORDER BY status, channel LIMIT 10, 5");
  expect_allow("WITH a AS (SELECT id, status FROM orders), b AS (SELECT "
               "id FROM a) SELECT (SELECT count(*) FROM b) AS n, 1 AS one");
  expect_allow("SELECT * FROM (SELECT id, status FROM orders) s JOIN "
               "order_items i ON i.order_id = s.id");
}

BOOST_AUTO_TEST_CASE(joins_need_a_real_condition) {
  expect_rule("SELECT count(*) FROM orders JOIN order_items",
              "join_without_on");
  expect_rule("SELECT count(*) FROM orders o JOIN order_items i WHERE "
              "o.id = i.order_id",
              "join_without_on");
  expect_rule("SELECT 1 FROM orders o LEFT JOIN order_items i ON o.id = "
              "i.order_id JOIN products p",
              "join_without_on");
  expect_rule("SELECT count(*) FROM orders JOIN order_items ON 1 = 1",
              "trivial_join_condition");
  expect_rule("SELECT count(*) FROM orders JOIN order_items ON TRUE",
              "trivial_join_condition");
  expect_rule("SELECT count(*) FROM orders JOIN order_items ON (1)",
              "trivial_join_condition");
  expect_allow("SELECT count(*) FROM orders o JOIN order_items i ON "
               "o.id = i.order_id LEFT JOIN products p ON p.id = "
               "i.product_id");
  expect_allow("SELECT count(*) FROM orders o JOIN (order_items i JOIN "
               "products p ON p.id = i.product_id) ON i.order_id = o.id");
  expect_allow("SELECT 1 FROM orders o JOIN order_items i ON (o.id = "
               "i.order_id AND i.quantity > 1)");
}

BOOST_AUTO_TEST_CASE(too_many_tables) {
  std::string five = "SELECT 1 FROM orders a JOIN orders b ON b.id = a.id "
                     "JOIN orders c ON c.id = b.id JOIN orders d ON d.id = "
                     "c.id JOIN orders e ON e.id = d.id";
  expect_rule(five, "too_many_tables");
  std::string four = "SELECT 1 FROM orders a JOIN orders b ON b.id = a.id "
                     "JOIN orders c ON c.id = b.id JOIN orders d ON d.id = "
                     "c.id";
  expect_allow(four);
  // A join group in parentheses counts towards its FROM clause.
  expect_rule("SELECT 1 FROM orders a JOIN (orders b JOIN orders c ON "
              "c.id = b.id JOIN orders d ON d.id = c.id JOIN orders e ON "
              "e.id = d.id) ON b.id = a.id",
              "too_many_tables");
  policy_config cfg;
  cfg.max_tables = 5;
  expect_allow(five, cfg);
  // Over the whole statement.
  cfg.max_table_refs = 3;
  expect_rule("SELECT (SELECT count(*) FROM orders) AS a, (SELECT count(*) "
              "FROM products) AS b, (SELECT count(*) FROM customers) AS c, "
              "(SELECT count(*) FROM order_items) AS d",
              "too_many_tables", verdict_kind::block, cfg);
  expect_allow("SELECT (SELECT count(*) FROM orders) AS a, (SELECT count(*) "
               "FROM products) AS b, (SELECT count(*) FROM customers) AS c",
               cfg);
}

// -- sizes --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(nesting_depth) {
  std::string deep
    = "SELECT " + std::string(13, '(') + "1" + std::string(13, ')');
  expect_rule(deep, "nesting_too_deep");
  std::string ok
    = "SELECT " + std::string(12, '(') + "1" + std::string(12, ')');
  expect_allow(ok);
}

BOOST_AUTO_TEST_CASE(too_many_selects) {
  std::string sql = "SELECT 1";
  for (int i = 0; i < 12; ++i)
    sql += " UNION ALL SELECT 1";
  expect_rule(sql, "too_many_selects");
  expect_allow("SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3");
}

namespace {

/// A chain of CTEs: CTE a<i> reads a<i-1> once after FROM and
/// `refs - 1` times through `n IN a<i-1>`.
std::string cte_chain(int levels, int refs) {
  std::string sql = "WITH a0(n) AS (SELECT 1)";
  for (int i = 1; i <= levels; ++i) {
    auto prev = "a" + std::to_string(i - 1);
    std::string conds;
    for (int k = 1; k < refs; ++k)
      conds += (k > 1 ? " AND n IN " : "n IN ") + prev;
    sql += ", a" + std::to_string(i) + "(n) AS (SELECT n FROM " + prev
           + " WHERE " + (conds.empty() ? "1" : conds) + ")";
  }
  return sql + " SELECT n FROM a" + std::to_string(levels);
}

} // namespace

BOOST_AUTO_TEST_CASE(cte_expansion) {
  // Nine levels of four references took 10.8 s and 593 MB to prepare.
  auto bomb = check_sql(cte_chain(9, 4));
  BOOST_TEST(bomb.rule == "cte_expansion_too_large");
  BOOST_TEST(bomb.message.find("349525 copies") != std::string::npos,
             bomb.message);
  // cost(a<i>) = 1 + 2 cost(a<i-1>): 63 copies at five levels, 127 at six.
  expect_allow(cte_chain(5, 2));
  auto six = check_sql(cte_chain(6, 2));
  BOOST_TEST(six.rule == "cte_expansion_too_large");
  BOOST_TEST(six.message.find("expands to 127 copies") != std::string::npos,
             six.message);
  BOOST_TEST(six.message.find("a6 alone is 127") != std::string::npos,
             six.message);
  BOOST_TEST(six.message.find("at most 64") != std::string::npos);
  // IN, subqueries and every read in the main query count: b costs
  // 1 + 3, sixteen reads of it 64.
  auto reads = [](int n) {
    std::string sql = "WITH a AS (SELECT id FROM orders), b AS (SELECT id "
                      "FROM a WHERE id IN a AND id IN (SELECT id FROM a)) "
                      "SELECT count(*) FROM orders WHERE id IN b";
    for (int i = 1; i < n; ++i)
      sql += " OR id IN b";
    return sql;
  };
  expect_allow(reads(16));
  expect_rule(reads(17), "cte_expansion_too_large");
  policy_config cfg;
  cfg.max_cte_expansion = 68;
  expect_allow(reads(17), cfg);
  // A WITH nested in a subquery counts where it is read.
  cfg.max_cte_expansion = 6;
  expect_rule("SELECT n FROM (WITH a(n) AS (SELECT 1), b(n) AS (SELECT n "
              "FROM a WHERE n IN a AND n IN a) SELECT n FROM b WHERE n IN b)",
              "cte_expansion_too_large", verdict_kind::block, cfg);
  expect_allow("SELECT n FROM (WITH a(n) AS (SELECT 1), b(n) AS (SELECT n "
               "FROM a WHERE n IN a) SELECT n FROM b WHERE n IN b)",
               cfg);
  // A CTE nobody reads is never compiled.
  expect_allow("WITH big AS (SELECT id FROM orders), unused AS (SELECT id "
               "FROM big WHERE id IN big AND id IN big) SELECT id FROM big",
               cfg);
}

BOOST_AUTO_TEST_CASE(in_lists) {
  std::string big = "SELECT id FROM orders WHERE id IN (";
  for (int i = 0; i < 51; ++i)
    big += (i ? "," : "") + std::to_string(i);
  big += ")";
  expect_rule(big, "in_list_too_long");
  std::string fifty = "SELECT id FROM orders WHERE id IN (";
  for (int i = 0; i < 50; ++i)
    fifty += (i ? "," : "") + std::to_string(i);
  fifty += ")";
  expect_allow(fifty);
  // Subqueries and commas nested inside elements do not count.
  expect_allow("SELECT id FROM orders WHERE customer_id IN (SELECT id FROM "
               "customers WHERE segment IN ('smb', 'enterprise'))");
  expect_allow("SELECT id FROM orders WHERE id IN (abs(1), round(2, 0))");
  std::string values = "WITH v(x) AS (VALUES ";
  for (int i = 0; i < 51; ++i)
    values += std::string(i ? ", " : "") + "(" + std::to_string(i) + ")";
  values += ") SELECT x FROM v";
  expect_rule(values, "in_list_too_long");
}

// -- LIMIT --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(non_literal_limits) {
  expect_rule("SELECT id FROM orders LIMIT (SELECT 1000000)",
              "non_literal_limit");
  expect_rule("SELECT id FROM orders LIMIT -1", "non_literal_limit");
  expect_rule("SELECT id FROM orders LIMIT 10 * 10", "non_literal_limit");
  expect_rule("SELECT id FROM orders LIMIT 10 OFFSET abs(-5)",
              "non_literal_limit");
  expect_rule("SELECT id FROM orders LIMIT 1e3", "non_literal_limit");
  expect_rule("SELECT id FROM orders LIMIT", "non_literal_limit");
  expect_rule("SELECT id FROM (SELECT id FROM orders LIMIT 1 + 1)",
              "non_literal_limit");
  expect_rule("SELECT id FROM orders LIMIT :n", "non_literal_limit");
  expect_rule("SELECT id FROM orders OFFSET 5", "non_literal_limit");
  expect_allow("SELECT id FROM orders LIMIT 10 OFFSET 20");
  expect_allow("SELECT id FROM orders LIMIT 0x10");
  expect_allow("SELECT id FROM (SELECT id FROM orders ORDER BY id LIMIT 5 "
               "OFFSET 2) s");
}

BOOST_AUTO_TEST_CASE(limit_is_appended) {
  auto r = expect_allow("SELECT id FROM orders");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200");
  BOOST_TEST(r.limit_applied);
  // A trailing ';' and trailing comments go (a comment would otherwise
  // swallow the LIMIT).
  r = expect_allow("SELECT id FROM orders -- all of them");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200");
  r = expect_allow("SELECT id FROM orders; /* x */ -- y");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200");
  // A LIMIT inside a subquery or CTE is not the outermost one.
  r = expect_allow("WITH t AS (SELECT id FROM orders LIMIT 5) SELECT id "
                   "FROM t");
  BOOST_TEST(r.sql
             == "WITH t AS (SELECT id FROM orders LIMIT 5) SELECT id "
                "FROM t LIMIT 200");
  r = expect_allow("SELECT id FROM (SELECT id FROM orders LIMIT 1000) s");
  BOOST_TEST(r.sql
             == "SELECT id FROM (SELECT id FROM orders LIMIT 1000) s "
                "LIMIT 200");
  // A compound gets one LIMIT for the whole.
  r = expect_allow("SELECT id FROM orders UNION SELECT id FROM products");
  BOOST_TEST(r.sql
             == "SELECT id FROM orders UNION SELECT id FROM products "
                "LIMIT 200");
}

BOOST_AUTO_TEST_CASE(limit_is_lowered_keeping_offset) {
  auto r = expect_allow("SELECT id FROM orders LIMIT 1000");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200");
  BOOST_TEST(r.limit_applied);
  r = expect_allow("SELECT id FROM orders LIMIT 5000 OFFSET 40;");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200 OFFSET 40");
  BOOST_TEST(r.limit_applied);
  // LIMIT offset, count: spelled out as LIMIT count OFFSET offset.
  r = expect_allow("SELECT id FROM orders LIMIT 40, 5000");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200 OFFSET 40");
  BOOST_TEST(r.limit_applied);
  r = expect_allow("SELECT id FROM orders LIMIT 0xFFFFFFFFFFFFFFFFFF");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200");
  r = expect_allow("SELECT id FROM orders LIMIT 99999999999999999999999");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200");
}

BOOST_AUTO_TEST_CASE(limit_within_bounds_is_kept) {
  auto r = expect_allow("SELECT id FROM orders ORDER BY id DESC LIMIT 10;");
  BOOST_TEST(r.sql == "SELECT id FROM orders ORDER BY id DESC LIMIT 10");
  BOOST_TEST(!r.limit_applied);
  r = expect_allow("SELECT id FROM orders LIMIT 200 OFFSET 1000");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 200 OFFSET 1000");
  BOOST_TEST(!r.limit_applied);
  r = expect_allow("SELECT id FROM orders LIMIT 3, 7");
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 3, 7");
  BOOST_TEST(!r.limit_applied);
  policy_config cfg;
  cfg.max_limit = 5;
  r = expect_allow("SELECT id FROM orders LIMIT 10", cfg);
  BOOST_TEST(r.sql == "SELECT id FROM orders LIMIT 5");
}

// -- correctable shapes -------------------------------------------------------

BOOST_AUTO_TEST_CASE(unbalanced_parentheses) {
  expect_rule("SELECT count(* FROM orders", "unbalanced_parentheses",
              verdict_kind::correctable);
  expect_rule("SELECT count(*)) FROM orders", "unbalanced_parentheses",
              verdict_kind::correctable);
  // A policy violation wins over a shape problem.
  expect_rule("SELECT (1 FROM orders, products", "comma_join");
  expect_allow("SELECT ')' AS p, count(*) FROM orders");
}

BOOST_AUTO_TEST_CASE(parameters) {
  expect_rule("SELECT id FROM orders WHERE id = ?", "parameter",
              verdict_kind::correctable);
  expect_rule("SELECT id FROM orders WHERE status = :status", "parameter",
              verdict_kind::correctable);
  expect_allow("SELECT id FROM orders WHERE status = ':status'");
}

BOOST_AUTO_TEST_CASE(rule_names_are_stable_and_distinct) {
  const auto& names = rule_names();
  std::set<std::string_view> unique(names.begin(), names.end());
  BOOST_TEST(unique.size() == names.size());
  BOOST_TEST(unique.count("forbidden_keyword") == 1u);
  BOOST_TEST(unique.count("using_join") == 1u);
}

BOOST_AUTO_TEST_CASE(legitimate_analytics_pass) {
  for (auto sql : {
         "SELECT strftime('%Y-%m', order_date) AS month, "
         "sum(total_cents) / 100.0 AS revenue FROM orders WHERE status = "
         "'paid' GROUP BY month ORDER BY month",
         "WITH monthly AS (SELECT strftime('%Y-%m', order_date) AS m, "
         "sum(total_cents) AS cents FROM orders GROUP BY m) SELECT m, cents, "
         "cents - lag(cents) OVER (ORDER BY m) AS delta FROM monthly",
         "SELECT p.category, sum(i.line_total_cents) AS cents, rank() OVER "
         "(ORDER BY sum(i.line_total_cents) DESC) AS r FROM order_items i "
         "JOIN products p ON p.id = i.product_id GROUP BY p.category",
         "SELECT CASE WHEN total_cents >= 100000 THEN 'large' ELSE 'small' "
         "END AS size, count(*) FROM orders GROUP BY size",
         "SELECT count(*) FROM orders WHERE status = 'cancelled' AND "
         "channel LIKE '%web%' AND updated_at > '2024-01-01'",
         "SELECT 'DROP TABLE orders; --' AS not_an_attack",
         "WITH paid AS (SELECT id, total_cents FROM orders WHERE status = "
         "'paid'), big AS (SELECT id FROM paid WHERE total_cents > 100000) "
         "SELECT count(*) AS n, (SELECT count(*) FROM big) AS big FROM paid "
         "WHERE id NOT IN big",
       }) {
    expect_allow(sql);
  }
}

BOOST_AUTO_TEST_SUITE_END()
