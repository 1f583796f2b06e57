// Tests of the sales database generator: determinism and fingerprints,
// sizes, money, refunds, payments, integrity and the documents' rules.

#include "data/sales/gen.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

#include "data/sqlite.hpp"

using namespace candor;
using namespace candor::data;

namespace {

using candor::test::temp_dir;

/// The default database (seed 42), generated once for the whole suite.
struct generated {
  temp_dir dir;
  std::string path;
  sales_summary summary;
  std::vector<std::pair<std::string, double>> progress;

  generated() : path(dir.file("sales.db")) {
    auto result
      = generate_sales(path, default_sales_seed,
                       [this](std::string_view stage, double fraction) {
                         progress.emplace_back(std::string{stage}, fraction);
                       });
    if (!result)
      throw std::runtime_error("generate_sales: " + result.err().message);
    summary = std::move(*result);
  }
};

const generated& seed42() {
  static generated g;
  return g;
}

/// The error message of a failed outcome, "" otherwise (safe to evaluate
/// eagerly in a Boost.Test message).
template <class T>
std::string why(const domain::outcome<T>& x) {
  return x.ok() ? std::string{} : x.err().message;
}

database open_db(const std::string& path) {
  auto db = database::open(path, SQLITE_OPEN_READONLY);
  BOOST_REQUIRE_MESSAGE(db.ok(), (db.ok() ? "" : db.err().message));
  return std::move(*db);
}

int64_t count(database& db, const std::string& sql) {
  auto n = db.query_int64(sql);
  BOOST_REQUIRE_MESSAGE(n.ok(), sql + ": " + (n.ok() ? "" : n.err().message));
  return *n;
}

std::set<std::string> texts(database& db, const std::string& sql) {
  auto stmt = db.prepare(sql);
  BOOST_REQUIRE_MESSAGE(stmt.ok(),
                        sql + ": " + (stmt.ok() ? "" : stmt.err().message));
  std::set<std::string> out;
  for (;;) {
    auto res = stmt->step();
    BOOST_REQUIRE(res.ok());
    if (*res == step_result::done)
      return out;
    out.insert(stmt->column_text(0));
  }
}

/// Net revenue in cents of bike lines ordered in `month` ('YYYY-MM').
int64_t bike_revenue(database& db, const std::string& month) {
  return count(db,
               "SELECT COALESCE(SUM(oi.line_total_cents - COALESCE((SELECT "
               "SUM(r.amount_cents) FROM refunds r WHERE r.order_item_id = "
               "oi.order_item_id), 0)), 0) FROM order_items oi JOIN orders o "
               "ON o.order_id = oi.order_id JOIN products p ON p.product_id = "
               "oi.product_id WHERE p.category = 'bikes' AND o.status IN "
               "('paid', 'partially_refunded', 'refunded') AND "
               "strftime('%Y-%m', o.order_date) = '"
                 + month + "'");
}

std::string read_all(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_sales_gen)

BOOST_AUTO_TEST_CASE(same_seed_same_fingerprint_other_seed_different) {
  auto& base = seed42();
  BOOST_TEST(base.summary.fingerprint.size() == 64u);
  BOOST_TEST(base.summary.seed == default_sales_seed);
  temp_dir dir;
  auto again = generate_sales(dir.file("again.db"), 42, {});
  BOOST_REQUIRE_MESSAGE(again.ok(), why(again));
  BOOST_TEST(again->fingerprint == base.summary.fingerprint);
  BOOST_TEST(again->total_rows == base.summary.total_rows);
  // The fingerprint is recomputed from the file, not remembered.
  auto recomputed = sales_fingerprint(dir.file("again.db"));
  BOOST_REQUIRE(recomputed.ok());
  BOOST_TEST(*recomputed == base.summary.fingerprint);

  auto other = generate_sales(dir.file("other.db"), 43, {});
  BOOST_REQUIRE_MESSAGE(other.ok(), why(other));
  BOOST_TEST(other->fingerprint != base.summary.fingerprint);
  BOOST_TEST(other->fingerprint.size() == 64u);
}

// The shipped database is pinned: the golden data questions, the scripted
// SQL fixtures and the README's figures were made on exactly these rows.
// A change to the generator (even one that only reorders its random draws)
// changes this fingerprint, and must be made on purpose: re-run the eval
// gate and update the value here.
BOOST_AUTO_TEST_CASE(the_seed_42_database_is_the_one_the_fixtures_expect) {
  auto& base = seed42();
  const std::string pinned = "8c7f5838953abd208ab46e80b086f7e2"
                             "25ec3e045e7743d33a1c17d9bbf74bc7";
  BOOST_TEST(base.summary.fingerprint == pinned);
  BOOST_TEST(base.summary.total_rows == 140532);
  BOOST_TEST(base.summary.first_order_date == "2024-01-01");
  BOOST_TEST(base.summary.last_order_date == "2025-12-31");
}

BOOST_AUTO_TEST_CASE(fingerprint_sees_a_single_changed_cent) {
  auto& base = seed42();
  temp_dir dir;
  auto copy = dir.file("copy.db");
  std::filesystem::copy_file(base.path, copy);
  {
    auto db = database::open(copy);
    BOOST_REQUIRE(db.ok());
    BOOST_REQUIRE(!db->exec("UPDATE order_items SET discount_cents = "
                            "discount_cents + 1, line_total_cents = "
                            "line_total_cents - 1 WHERE order_item_id = 7"));
  }
  auto changed = sales_fingerprint(copy);
  BOOST_REQUIRE(changed.ok());
  BOOST_TEST(*changed != base.summary.fingerprint);
}

BOOST_AUTO_TEST_CASE(refuses_to_overwrite_and_leaves_no_temp_file) {
  temp_dir dir;
  auto path = dir.file("existing.db");
  {
    std::ofstream out{path};
    out << "keep me";
  }
  auto refused = generate_sales(path, 42, {});
  BOOST_REQUIRE(!refused.ok());
  BOOST_TEST(refused.err().code == domain::ec::invalid_request);
  BOOST_TEST(refused.err().message.find(path) != std::string::npos);
  BOOST_TEST(read_all(path) == "keep me");
  BOOST_TEST(!std::filesystem::exists(path + ".tmp"));

  // A stale temporary file from an interrupted run is replaced.
  {
    std::ofstream out{path + ".tmp"};
    out << "stale";
  }
  auto replaced = generate_sales(path, 42, {}, true);
  BOOST_REQUIRE_MESSAGE(replaced.ok(), why(replaced));
  BOOST_TEST(!std::filesystem::exists(path + ".tmp"));
  BOOST_TEST(replaced->fingerprint == seed42().summary.fingerprint);
  auto db = open_db(path);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders")
             == seed42().summary.rows("orders"));
}

BOOST_AUTO_TEST_CASE(failure_leaves_nothing_behind) {
  temp_dir dir;
  auto path = dir.file("missing-dir/sales.db");
  auto result = generate_sales(path, 42, {});
  BOOST_REQUIRE(!result.ok());
  BOOST_TEST(result.err().code == domain::ec::storage_failed);
  BOOST_TEST(!std::filesystem::exists(path));
  BOOST_TEST(!std::filesystem::exists(path + ".tmp"));
  BOOST_TEST(!generate_sales("", 42, {}).ok());
}

BOOST_AUTO_TEST_CASE(progress_is_reported_in_order) {
  auto& p = seed42().progress;
  BOOST_REQUIRE(p.size() >= 5u);
  BOOST_TEST(p.front().first == "schema");
  BOOST_TEST(p.back().first == "done");
  BOOST_TEST(p.back().second == 1.0);
  std::set<std::string> stages;
  for (size_t i = 0; i < p.size(); ++i) {
    stages.insert(p[i].first);
    BOOST_TEST(p[i].second >= 0.0);
    BOOST_TEST(p[i].second <= 1.0);
    if (i > 0)
      BOOST_TEST(p[i].second >= p[i - 1].second);
  }
  for (auto stage : {"customers", "orders", "indexes", "checks", "fingerprint"})
    BOOST_TEST(stages.contains(stage), stage);
}

BOOST_AUTO_TEST_CASE(size_tables_and_two_full_years) {
  auto& g = seed42();
  auto db = open_db(g.path);
  auto tables = count(db, "SELECT COUNT(*) FROM sqlite_schema WHERE type = "
                          "'table' AND name NOT LIKE 'sqlite%'");
  BOOST_TEST(tables >= 8);
  BOOST_TEST(static_cast<int64_t>(g.summary.tables.size()) == tables);
  BOOST_TEST(g.summary.total_rows >= 50000);
  int64_t sum = 0;
  for (auto& t : g.summary.tables) {
    BOOST_TEST(t.rows > 0, t.table);
    BOOST_TEST(count(db, "SELECT COUNT(*) FROM " + t.table) == t.rows);
    sum += t.rows;
  }
  BOOST_TEST(sum == g.summary.total_rows);
  BOOST_TEST(g.summary.rows("nope") == -1);
  BOOST_TEST(g.summary.first_order_date == "2024-01-01");
  BOOST_TEST(g.summary.last_order_date == "2025-12-31");
  BOOST_TEST(count(db, "SELECT julianday(MAX(order_date)) - "
                       "julianday(MIN(order_date)) FROM orders")
             >= 730);
  BOOST_TEST(count(db, "SELECT COUNT(DISTINCT strftime('%Y-%m', order_date)) "
                       "FROM orders")
             == 24);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders") >= 20000);
}

BOOST_AUTO_TEST_CASE(money_is_integer_cents_and_totals_match_items) {
  auto db = open_db(seed42().path);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE o.total_cents <> "
                       "(SELECT SUM(i.line_total_cents) FROM order_items i "
                       "WHERE i.order_id = o.order_id)")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE NOT EXISTS "
                       "(SELECT 1 FROM order_items i WHERE i.order_id = "
                       "o.order_id)")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM order_items WHERE "
                       "line_total_cents <> quantity * unit_price_cents - "
                       "discount_cents OR discount_cents < 0 OR "
                       "line_total_cents <= 0")
             == 0);
  for (auto [table, column] :
       std::initializer_list<std::pair<const char*, const char*>>{
         {"orders", "total_cents"},
         {"order_items", "unit_price_cents"},
         {"order_items", "discount_cents"},
         {"order_items", "line_total_cents"},
         {"refunds", "amount_cents"},
         {"payments", "amount_cents"},
         {"products", "list_price_cents"},
         {"products", "unit_cost_cents"}})
    BOOST_TEST(count(db, std::string{"SELECT COUNT(*) FROM "} + table
                           + " WHERE typeof(" + column + ") <> 'integer'")
                 == 0,
               table << "." << column);
  BOOST_TEST(texts(db, "SELECT DISTINCT currency FROM orders")
             == std::set<std::string>{"EUR"});
  // Some lines really are discounted, and some orders have many lines.
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM order_items WHERE "
                       "discount_cents > 0")
             > 1000);
  BOOST_TEST(count(db, "SELECT MAX(line_number) FROM order_items") >= 5);
}

BOOST_AUTO_TEST_CASE(refunds_stay_within_totals_and_match_status) {
  auto db = open_db(seed42().path);
  auto refunded_sum = std::string{
    "(SELECT COALESCE(SUM(r.amount_cents), 0) FROM refunds r WHERE "
    "r.order_id = o.order_id)"};
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE " + refunded_sum
                         + " > o.total_cents")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM order_items i WHERE (SELECT "
                       "COALESCE(SUM(r.amount_cents), 0) FROM refunds r "
                       "WHERE r.order_item_id = i.order_item_id) > "
                       "i.line_total_cents")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM refunds r JOIN order_items i "
                       "ON i.order_item_id = r.order_item_id WHERE "
                       "i.order_id <> r.order_id OR r.quantity > i.quantity")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE status = "
                       "'refunded' AND "
                         + refunded_sum + " <> o.total_cents")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE status = "
                       "'partially_refunded' AND ("
                         + refunded_sum + " = 0 OR " + refunded_sum
                         + " >= o.total_cents)")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE status IN "
                       "('paid', 'cancelled', 'pending') AND "
                         + refunded_sum + " > 0")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM refunds r JOIN orders o ON "
                       "o.order_id = r.order_id WHERE r.refund_date < "
                       "o.order_date OR r.refund_date > '2025-12-31'")
             == 0);
  auto orders = count(db, "SELECT COUNT(*) FROM orders");
  for (auto status :
       {"paid", "refunded", "partially_refunded", "cancelled", "pending"}) {
    auto n = count(db, std::string{"SELECT COUNT(*) FROM orders WHERE "
                                   "status = '"}
                         + status + "'");
    BOOST_TEST(n > 0, status);
    bool minority = n < orders / 2;
    BOOST_TEST((minority || std::string_view{status} == "paid"), status);
  }
}

BOOST_AUTO_TEST_CASE(payments_match_order_status) {
  auto db = open_db(seed42().path);
  // Exactly one captured payment of the full total per captured order.
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE o.status IN "
                       "('paid', 'refunded', 'partially_refunded') AND "
                       "(SELECT COUNT(*) FROM payments p WHERE p.order_id = "
                       "o.order_id AND p.status = 'captured' AND "
                       "p.amount_cents = o.total_cents) <> 1")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM payments p JOIN orders o ON "
                       "o.order_id = p.order_id WHERE p.status = 'captured' "
                       "AND o.status IN ('cancelled', 'pending')")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE o.status = "
                       "'pending' AND NOT EXISTS (SELECT 1 FROM payments p "
                       "WHERE p.order_id = o.order_id AND p.status = "
                       "'pending')")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM payments p JOIN orders o ON "
                       "o.order_id = p.order_id WHERE p.method <> "
                       "o.payment_method")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM payments WHERE status = "
                       "'failed'")
             > 0);
}

BOOST_AUTO_TEST_CASE(foreign_keys_and_integrity_hold) {
  auto db = open_db(seed42().path);
  auto stmt = db.prepare("PRAGMA foreign_key_check");
  BOOST_REQUIRE(stmt.ok());
  auto res = stmt->step();
  BOOST_REQUIRE(res.ok());
  BOOST_TEST((*res == step_result::done));
  auto quick = db.query_text("PRAGMA quick_check");
  BOOST_REQUIRE(quick.ok());
  BOOST_TEST(*quick == "ok");
  // Foreign keys are declared, so the check above means something.
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM pragma_foreign_key_list("
                       "'order_items')")
             == 2);
}

BOOST_AUTO_TEST_CASE(seasonality_is_visible) {
  auto db = open_db(seed42().path);
  for (auto year : {"2024", "2025"}) {
    auto june = bike_revenue(db, std::string{year} + "-06");
    auto january = bike_revenue(db, std::string{year} + "-01");
    BOOST_TEST(june > 3 * january / 2,
               year << ": " << june << " vs " << january);
  }
  // Black Friday weekend: web and marketplace orders per day far above an
  // ordinary October day.
  auto bf = count(db, "SELECT COUNT(*) FROM orders WHERE channel IN ('web', "
                      "'marketplace') AND order_date BETWEEN '2024-11-29' "
                      "AND '2024-12-02'");
  auto october = count(db, "SELECT COUNT(*) FROM orders WHERE channel IN "
                           "('web', 'marketplace') AND order_date BETWEEN "
                           "'2024-10-01' AND '2024-10-31'");
  BOOST_TEST(bf / 4.0 > 2.0 * (october / 31.0));
  // December gifts: apparel and accessories sell more than in August.
  auto gifts = [&](const char* month) {
    return count(db, std::string{"SELECT SUM(oi.line_total_cents) FROM "
                                 "order_items oi JOIN orders o ON "
                                 "o.order_id = oi.order_id JOIN products p "
                                 "ON p.product_id = oi.product_id WHERE "
                                 "p.category IN ('apparel', 'accessories') "
                                 "AND o.channel <> 'partner' AND "
                                 "strftime('%Y-%m', o.order_date) = '"}
                       + month + "'");
  };
  BOOST_TEST(gifts("2024-12") > gifts("2024-08"));
  BOOST_TEST(gifts("2025-12") > gifts("2025-08"));
  // Growth: 2025 sells more than 2024.
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders WHERE order_date >= "
                       "'2025-01-01'")
             > count(db, "SELECT COUNT(*) FROM orders WHERE order_date < "
                         "'2025-01-01'"));
}

BOOST_AUTO_TEST_CASE(categories_channels_and_kb_families) {
  auto db = open_db(seed42().path);
  BOOST_TEST(texts(db, "SELECT category FROM categories")
             == (std::set<std::string>{"bikes", "components", "apparel",
                                       "accessories", "nutrition", "service"}));
  BOOST_TEST(texts(db, "SELECT DISTINCT p.category FROM order_items oi JOIN "
                       "products p ON p.product_id = oi.product_id")
               .size()
             == 6u);
  BOOST_TEST(
    texts(db, "SELECT DISTINCT channel FROM orders")
    == (std::set<std::string>{"web", "marketplace", "retail", "partner"}));
  BOOST_TEST(texts(db, "SELECT DISTINCT p.product_line FROM order_items oi "
                       "JOIN products p ON p.product_id = oi.product_id "
                       "WHERE p.category = 'bikes'")
             == (std::set<std::string>{"strada", "ridgeline", "canal",
                                       "volt_city", "volt_trek", "fledgling"}));
  BOOST_TEST(texts(db, "SELECT DISTINCT payment_method FROM orders").size()
             == 5u);
  BOOST_TEST(texts(db, "SELECT DISTINCT segment FROM customers")
             == (std::set<std::string>{"consumer", "business", "club"}));
  BOOST_TEST(texts(db, "SELECT DISTINCT shipping_zone FROM regions")
             == (std::set<std::string>{"A", "B", "C", "D", "E"}));
  // Channel mixes differ: partner orders are wholesale-sized.
  auto avg = [&](const char* channel) {
    return count(db, std::string{"SELECT AVG(total_cents) FROM orders WHERE "
                                 "channel = '"}
                       + channel + "'");
  };
  BOOST_TEST(avg("partner") > 5 * avg("web"));
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders WHERE channel = 'web'")
             > count(db, "SELECT COUNT(*) FROM orders WHERE channel = "
                         "'marketplace'"));
}

BOOST_AUTO_TEST_CASE(business_rules_from_the_kb_hold) {
  auto db = open_db(seed42().path);
  auto none = [&](const char* what, const std::string& where) {
    BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders o WHERE " + where) == 0,
               what);
  };
  auto item_of = [](const char* cond) {
    return std::string{"EXISTS (SELECT 1 FROM order_items oi JOIN products p "
                       "ON p.product_id = oi.product_id WHERE oi.order_id = "
                       "o.order_id AND "}
           + cond + ")";
  };
  none("no service or e-bikes on the marketplace",
       "o.channel = 'marketplace' AND "
         + item_of("(p.category = 'service' OR p.product_line IN "
                   "('volt_city', 'volt_trek'))"));
  none("no e-bikes shipped to Norway or Switzerland",
       "o.channel <> 'retail' AND o.country_code IN ('NO', 'CH') AND "
         + item_of("p.product_line IN ('volt_city', 'volt_trek')"));
  none("workshop jobs and fittings only in stores",
       "o.channel <> 'retail' AND "
         + item_of("p.product_line IN ('workshop_jobs', 'bike_fitting')"));
  none("retail sales name their store and its country",
       "o.channel = 'retail' AND NOT ((o.store = 'utrecht' AND "
       "o.country_code = 'NL') OR (o.store = 'ghent' AND o.country_code = "
       "'BE'))");
  none("only retail sales have a store",
       "o.channel <> 'retail' AND o.store IS NOT NULL");
  none("stores are closed on Mondays, Ghent also on Sundays",
       "o.channel = 'retail' AND (strftime('%w', o.order_date) = '1' OR "
       "(o.store = 'ghent' AND strftime('%w', o.order_date) = '0'))");
  none("iDEAL only in the Netherlands",
       "o.payment_method = 'ideal' AND o.country_code <> 'NL'");
  none("Klarna: consumers in NL/BE/DE/AT, EUR 35 to 1,500",
       "o.payment_method = 'klarna' AND (o.country_code NOT IN ('NL', 'BE', "
       "'DE', 'AT') OR o.total_cents NOT BETWEEN 3500 AND 150000 OR (SELECT "
       "segment FROM customers c WHERE c.customer_id = o.customer_id) <> "
       "'consumer')");
  none("bank transfer only for business and club accounts",
       "o.payment_method = 'bank_transfer' AND (SELECT segment FROM "
       "customers c WHERE c.customer_id = o.customer_id) = 'consumer'");
  none("partner orders come from business accounts",
       "o.channel = 'partner' AND (SELECT segment FROM customers c WHERE "
       "c.customer_id = o.customer_id) <> 'business'");
  none("nothing sold before launch or after discontinuation",
       item_of("(o.order_date < p.launched_on OR (p.discontinued_on IS NOT "
               "NULL AND o.order_date > p.discontinued_on))"));
  none("customers order only after signing up",
       "o.order_date < (SELECT signup_date FROM customers c WHERE "
       "c.customer_id = o.customer_id)");
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM orders WHERE order_number LIKE "
                       "'MP-%' AND channel <> 'marketplace'")
             == 0);
}

BOOST_AUTO_TEST_CASE(personal_data_exists_but_no_index_covers_it) {
  auto db = open_db(seed42().path);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM customers WHERE name = '' OR "
                       "email NOT LIKE '%@%.example'")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM customer_contacts WHERE phone "
                       "NOT LIKE '+%' OR address = ''")
             == 0);
  BOOST_TEST(count(db, "SELECT COUNT(DISTINCT customer_id) FROM "
                       "customer_contacts")
             == count(db, "SELECT COUNT(*) FROM customers"));
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM sqlite_schema s, "
                       "pragma_index_info(s.name) i WHERE s.type = 'index' "
                       "AND ((s.tbl_name = 'customers' AND i.name IN ('name', "
                       "'email')) OR (s.tbl_name = 'customer_contacts' AND "
                       "i.name IN ('email', 'phone', 'address')))")
             == 0);
  // The analytics indexes exist.
  BOOST_TEST(count(db, "SELECT COUNT(*) FROM sqlite_schema WHERE type = "
                       "'index' AND name = 'orders_by_date'")
             == 1);
}

BOOST_AUTO_TEST_CASE(summarize_reads_an_existing_file) {
  auto& g = seed42();
  auto summary = summarize_sales(g.path);
  BOOST_REQUIRE_MESSAGE(summary.ok(), why(summary));
  BOOST_TEST(summary->fingerprint == g.summary.fingerprint);
  BOOST_TEST(summary->total_rows == g.summary.total_rows);
  BOOST_TEST(summary->first_order_date == g.summary.first_order_date);
  BOOST_TEST(summary->seed == 0u);
  BOOST_TEST(summary->tables.size() == g.summary.tables.size());
  temp_dir dir;
  auto missing = summarize_sales(dir.file("none.db"));
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.err().message.find("none.db") != std::string::npos);
  BOOST_TEST(!std::filesystem::exists(dir.file("none.db")));
}

BOOST_AUTO_TEST_SUITE_END()
