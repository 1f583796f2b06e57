// Tests of the catalog's value-domain check on model-written SQL.

#include "data/sql/domain_check.hpp"

#include <boost/test/unit_test.hpp>

using namespace candor;

namespace {

const data::catalog& cat() {
  static auto c = [] {
    auto x = data::catalog::load_default();
    BOOST_REQUIRE(x.ok());
    return std::move(*x);
  }();
  return c;
}

std::optional<data::domain_violation> check(std::string_view sql) {
  return data::check_value_domains(sql, cat());
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_sql_domain_check)

BOOST_AUTO_TEST_CASE(literal_outside_the_domain_is_found) {
  auto v = check("SELECT COUNT(*) FROM orders WHERE channel = 'tiktok'");
  BOOST_REQUIRE(v);
  BOOST_CHECK_EQUAL(v->table, "orders");
  BOOST_CHECK_EQUAL(v->column, "channel");
  BOOST_CHECK_EQUAL(v->literal, "tiktok");
  BOOST_CHECK_EQUAL(v->allowed.size(), 4u);
  BOOST_CHECK(v->message.find("'web', 'marketplace', 'retail', 'partner'")
              != std::string::npos);
  BOOST_CHECK(v->message.find("Ask again") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(values_inside_the_domain_pass) {
  BOOST_CHECK(!check("SELECT COUNT(*) FROM orders WHERE channel = 'web'"));
  BOOST_CHECK(!check("SELECT COUNT(*) FROM orders o WHERE o.status IN "
                     "('paid', 'refunded') AND o.store = 'ghent'"));
  // Case matters, as for SQLite's '='.
  BOOST_CHECK(check("SELECT COUNT(*) FROM orders WHERE channel = 'Web'"));
}

BOOST_AUTO_TEST_CASE(aliases_in_lists_and_reversed_comparisons) {
  auto v = check("SELECT 1 FROM orders AS o JOIN products p ON p.product_id "
                 "= o.order_id WHERE p.category NOT IN ('bikes', 'boats')");
  BOOST_REQUIRE(v);
  BOOST_CHECK_EQUAL(v->table, "products");
  BOOST_CHECK_EQUAL(v->literal, "boats");
  v = check("SELECT 1 FROM refunds r WHERE 'lost' = r.reason");
  BOOST_REQUIRE(v);
  BOOST_CHECK_EQUAL(v->column, "reason");
  v = check("SELECT 1 FROM orders o WHERE o.country_code <> 'US'");
  BOOST_REQUIRE(v);
}

BOOST_AUTO_TEST_CASE(an_undeclared_column_of_a_catalog_table_is_refused) {
  auto v = check("SELECT 1 FROM orders o WHERE o.coupon = 'SUMMER'");
  BOOST_REQUIRE(v);
  BOOST_CHECK(v->allowed.empty());
  BOOST_CHECK(v->message.find("does not declare") != std::string::npos);
  BOOST_CHECK(v->message.find("'order_date'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(near_misses_are_not_judged) {
  // Columns without a domain, LIKE patterns, CTE columns, strings in
  // comments, a status of another table in a subquery.
  BOOST_CHECK(!check("SELECT 1 FROM orders WHERE order_date = '2024-01-01'"));
  BOOST_CHECK(!check("SELECT 1 FROM products WHERE product_name LIKE "
                     "'%tiktok%'"));
  BOOST_CHECK(!check("WITH t AS (SELECT channel AS c FROM orders) SELECT * "
                     "FROM t WHERE t.c = 'tiktok'"));
  BOOST_CHECK(!check("SELECT 1 FROM orders /* channel = 'tiktok' */"));
  BOOST_CHECK(!check("SELECT 1 FROM orders o WHERE o.order_id IN (SELECT "
                     "order_id FROM payments WHERE status = 'captured')"));
  BOOST_CHECK(!check("SELECT 'tiktok' AS channel FROM orders"));
}

BOOST_AUTO_TEST_SUITE_END()
