// The PostgreSQL statement policy: PostgreSQL's own parser, the rules and
// their names, the LIMIT, and the statements it allows running as the
// warehouse's reader role on a real cluster.

#include "data/sql/pg_policy.hpp"

#include "domain/build_info.hpp"

#include <fstream>
#include <sstream>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/pg/connection.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/postgres.hpp"
#include "tests/support/pg_cluster.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor;
using domain::sql::verdict_kind;

namespace {

struct policy_fixture {
  data::postgres_rules rules;

  policy_fixture() {
    auto cat = data::catalog::load_default();
    BOOST_REQUIRE(cat.ok());
    rules = data::postgres_rules::from(*cat);
  }

  /// check_postgres_sql alone (the parser's verdicts).
  domain::sql::policy_result check(const std::string& sql) const {
    return data::check_postgres_sql(sql, rules.allow, rules.withheld);
  }
};

const std::vector<std::string> allowed = {
  "SELECT channel, COUNT(*) AS n FROM orders WHERE order_date >= "
  "'2025-01-01' GROUP BY channel ORDER BY n DESC",
  "WITH t AS (SELECT customer_id, SUM(total_cents) AS s FROM orders GROUP "
  "BY 1) SELECT c.segment, AVG(t.s) FROM t JOIN customers c USING "
  "(customer_id) GROUP BY 1 LIMIT 5",
  "SELECT EXTRACT(YEAR FROM order_date::date) AS y, COUNT(*) FROM orders "
  "GROUP BY 1 ORDER BY 1",
  "SELECT p.category, SUM(i.line_total_cents) FROM order_items i JOIN "
  "products p ON p.product_id = i.product_id GROUP BY p.category LIMIT 10;",
};

boost::json::array eval_corpus() {
  std::ifstream in{std::string{CANDOR_SOURCE_DIR} + "/eval/sql_corpus.json"};
  std::stringstream ss;
  ss << in.rdbuf();
  return boost::json::parse(ss.str()).as_array();
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(data_sql_pg_policy, policy_fixture)

BOOST_AUTO_TEST_CASE(analytics_queries_are_allowed_with_a_limit) {
  for (const auto& sql : allowed) {
    auto r = check(sql);
    BOOST_TEST(r.allowed(), sql << ": " << r.rule << " " << r.message);
  }
  auto wrapped = check(allowed[0]);
  BOOST_TEST(wrapped.limit_applied);
  BOOST_TEST(wrapped.sql.find("LIMIT 200") != std::string::npos);
  auto kept = check(allowed[1]);
  BOOST_TEST(!kept.limit_applied);
  BOOST_TEST(kept.sql == allowed[1]);
  auto trailing = check(allowed[3]);
  BOOST_TEST(trailing.sql.back() != ';');
  auto big = check("SELECT order_id FROM orders LIMIT 100000");
  BOOST_TEST(big.limit_applied);
  BOOST_TEST(big.sql == "SELECT order_id FROM orders LIMIT 200");
  auto fetch = check("SELECT order_id FROM orders FETCH FIRST 5000 ROWS ONLY");
  BOOST_TEST(fetch.sql == "SELECT order_id FROM orders FETCH FIRST 200 ROWS ONLY");
  // No wrapping SELECT: the bound adds no nesting, so a statement at the
  // depth limit stays allowed once bounded (a fuzzer's finding, kept in
  // tests/fuzz/corpus/pg_policy).
  auto plain = check("SELECT order_id FROM orders -- the ids");
  BOOST_TEST(plain.sql == "SELECT order_id FROM orders -- the ids\nLIMIT 200");
  std::string deep = "SELECT ";
  for (int i = 0; i < 200; ++i)
    deep += "+";
  deep += "order_id FROM orders";
  bool at_limit = false;
  for (auto pluses = deep; !at_limit && pluses.size() > 30;
       pluses.erase(7, 1)) {
    auto r = check(pluses);
    if (r.allowed()) {
      at_limit = true;
      BOOST_TEST(check(r.sql).allowed(), r.sql);
    }
  }
  BOOST_TEST(at_limit);
  // The bounded statement is allowed again, unchanged (a wrapped query
  // over customers included: its '*' reads the subquery, not the table).
  for (const auto& sql : allowed) {
    auto once = check(sql);
    auto twice = check(once.sql);
    BOOST_TEST(twice.allowed(), once.sql << ": " << twice.rule);
    BOOST_TEST(check(twice.sql).sql == twice.sql);
  }
  // '*' over a subquery or a CTE is fine; over customers itself it is not.
  BOOST_TEST(check("SELECT * FROM (SELECT segment FROM customers) s").allowed());
  BOOST_TEST(check("WITH c AS (SELECT segment FROM customers) SELECT * FROM c")
               .allowed());
  BOOST_TEST(check("SELECT * FROM orders o JOIN customers c USING "
                   "(customer_id)")
               .rule
             == "denied_column");
}

BOOST_AUTO_TEST_CASE(each_rule_blocks_with_its_name) {
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"DELETE FROM orders", "not_select"},
    {"COPY orders TO '/tmp/x'", "not_select"},
    {"SET statement_timeout = 0", "not_select"},
    {"SELECT 1; DROP TABLE orders", "multiple_statements"},
    {"SELECT pg_sleep(10)", "risky_function"},
    {"SELECT pg_read_file('/etc/passwd')", "risky_function"},
    {"SELECT set_config('statement_timeout', '0', false)", "risky_function"},
    {"SELECT lo_import('/etc/passwd')", "risky_function"},
    {"SELECT 'orders'::regclass", "risky_function"},
    {"SELECT current_user", "risky_function"},
    {"SELECT version()", "risky_function"},
    {"SELECT * FROM dblink('host=x', 'select 1') AS t(a int)",
     "table_valued_function"},
    {"SELECT * FROM generate_series(1, 1000000000) g", "table_valued_function"},
    {"SELECT relname FROM pg_class", "schema_table"},
    {"SELECT table_name FROM information_schema.tables", "schema_table"},
    {"SELECT order_id FROM public.orders", "schema_table"},
    {"SELECT email FROM customers", "denied_column"},
    {"SELECT * FROM customers", "denied_column"},
    {"SELECT phone FROM customer_contacts", "table_not_allowed"},
    {"SELECT * INTO copy_of_orders FROM orders", "forbidden_keyword"},
    {"SELECT order_id FROM orders FOR UPDATE", "forbidden_keyword"},
    {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
     "SELECT n FROM r",
     "recursive_cte"},
    {"SELECT order_id FROM orders NATURAL JOIN order_items",
     "natural_join"},
    {"SELECT $1", "parameter"},
    {"SELECT order_id FROM orders LIMIT (SELECT 5)", "non_literal_limit"},
    {"SELECT md5(order_number) FROM orders", "function_not_allowed"},
  };
  for (const auto& [sql, rule] : cases) {
    auto r = check(sql);
    BOOST_TEST(!r.allowed(), sql);
    BOOST_TEST(r.verdict == verdict_kind::block, sql);
    BOOST_TEST(r.rule == rule, sql << " -> " << r.rule << ": " << r.message);
  }
}

BOOST_AUTO_TEST_CASE(what_the_parser_cannot_read_gets_a_second_opinion) {
  // SQLite's dialect: PostgreSQL's parser fails, the SQLite policy blocks.
  auto replace = rules.check("INSERT OR REPLACE INTO products (product_id) "
                             "VALUES (1)");
  BOOST_TEST((replace.verdict == verdict_kind::block));
  BOOST_TEST(replace.rule == "not_select");
  BOOST_TEST(replace.message.find("PostgreSQL cannot parse it")
             != std::string::npos);
  // Names of withheld data in what cannot be parsed.
  auto brackets = rules.check("SELECT [name] AS n FROM [customers]");
  BOOST_TEST((brackets.verdict == verdict_kind::block));
  BOOST_TEST(brackets.rule == "denied_column");
  auto in_table = rules.check(
    "SELECT count(*) FROM orders WHERE customer_id IN customer_contacts");
  BOOST_TEST((in_table.verdict == verdict_kind::block));
  BOOST_TEST(in_table.rule == "denied_table");
  // A plain mistake stays correctable.
  auto cut = rules.check("SELECT channel, count(*) FROM orders GROUP BY");
  BOOST_TEST((cut.verdict == verdict_kind::correctable));
  BOOST_TEST(cut.rule == "syntax_error");
  // What the parser reads is judged by the parser alone.
  BOOST_TEST(rules.check("SELECT channel FROM orders").allowed());
}

BOOST_AUTO_TEST_CASE(mistakes_are_correctable_and_bounds_hold) {
  auto syntax = check("SELEC channel FROM orders");
  BOOST_TEST((syntax.verdict == verdict_kind::correctable));
  BOOST_TEST(syntax.rule == "syntax_error");
  BOOST_TEST(syntax.message.find("SELEC") != std::string::npos);
  BOOST_TEST(syntax.offset == 0u);
  for (const char* empty : {"", "   ", "-- nothing\n", ";"}) {
    auto r = check(empty);
    BOOST_TEST(!r.allowed(), empty);
  }
  auto long_sql = check("SELECT " + std::string(30000, '1'));
  BOOST_TEST(long_sql.rule == "input_too_long");
  auto nul = check(std::string{"SELECT 1\0; DELETE FROM orders", 30});
  BOOST_TEST(nul.rule == "control_character");
  // An expression 2,000 operators deep: refused, not walked to the end.
  std::string deep = "SELECT ";
  for (int i = 0; i < 2000; ++i)
    deep += "1 + ";
  deep += "1";
  auto r = check(deep);
  BOOST_TEST(!r.allowed());
  BOOST_TEST((r.rule == "nesting_too_deep" || r.rule == "syntax_error"),
             r.rule);
}

// eval/sql_corpus.json through this policy alone: no statement the
// corpus expects blocked may be allowed. Statements it expects allowed
// but written in SQLite's dialect (strftime, ...) are counted and named,
// not gated: their PostgreSQL spelling is in eval/sql_corpus.postgres.json,
// and e2e_postgres_route holds every verdict to SQLite's.
BOOST_AUTO_TEST_CASE(the_sql_corpus_dangerous_statements_are_all_blocked) {
  auto doc = eval_corpus();
  size_t blocked_ok = 0, allowed_ok = 0, dialect = 0;
  for (const auto& v : doc) {
    const auto& o = v.as_object();
    std::string id{o.at("id").as_string()};
    std::string sql{o.at("sql").as_string()};
    bool expect_block = o.at("expect").as_string() == "block";
    auto r = check(sql);
    if (expect_block) {
      BOOST_TEST(!r.allowed(), id << " allowed on PostgreSQL: " << sql);
      blocked_ok += !r.allowed();
    } else if (r.allowed()) {
      ++allowed_ok;
    } else {
      ++dialect;
      BOOST_TEST_MESSAGE("not allowed on PostgreSQL: " << id << " " << r.rule
                                                      << ": " << r.message);
    }
  }
  BOOST_TEST_MESSAGE("sql corpus on the PostgreSQL policy: blocked "
                     << blocked_ok << " of the statements to block; allowed "
                     << allowed_ok << " of the statements to allow, "
                     << dialect << " refused");
  BOOST_TEST(blocked_ok > 100u);
}

BOOST_AUTO_TEST_CASE(what_it_allows_runs_as_the_reader_role) {
  test::pg_cluster cluster;
  {
    auto admin = data::pg::connection::open(cluster.dsn());
    BOOST_REQUIRE(admin.ok());
    BOOST_REQUIRE(!admin->exec("CREATE DATABASE warehouse"));
  }
  auto dsn = cluster.dsn("warehouse");
  BOOST_REQUIRE(
    data::copy_sales_to_postgres(test::shared_sales_db(), dsn, {}).ok());
  auto cat = data::catalog::load_default();
  BOOST_REQUIRE(cat.ok());
  BOOST_REQUIRE(
    !data::provision_postgres_reader(dsn, *cat, "candor_reader", {}));
  auto c = data::pg::connection::open(cluster.dsn("warehouse",
                                                  "candor_reader"));
  BOOST_REQUIRE(c.ok());
  for (const auto& sql : allowed) {
    auto r = check(sql);
    BOOST_REQUIRE(r.allowed());
    auto rows = c->query(r.sql);
    BOOST_TEST(rows.ok(), r.sql << ": "
                                << (rows.ok() ? "" : rows.err().message));
    if (rows.ok()) {
      BOOST_TEST(!rows->values.empty(), r.sql);
      BOOST_TEST(rows->values.size() <= 200u);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
