// Generating the fictional sales database: the schema, the generator's
// set-up, reference rows and customers, and the file it builds (the world
// it draws from: sales_world.hpp; days and orders: sales_orders.cpp;
// checks and fingerprint: sales_check.cpp).

#include "data/sales/gen.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <system_error>
#include <utility>

#include "data/sales/generator.hpp"

namespace candor::data {

namespace {

using domain::ec;
using domain::make_error;

// -- the schema ---------------------------------------------------------------

constexpr const char* schema_sql = R"sql(
CREATE TABLE regions (
  country_code TEXT PRIMARY KEY,
  country_name TEXT NOT NULL,
  shipping_zone TEXT NOT NULL CHECK (shipping_zone IN ('A','B','C','D','E')),
  in_eu INTEGER NOT NULL CHECK (in_eu IN (0, 1))
);
CREATE TABLE categories (
  category TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL
);
CREATE TABLE channels (
  channel TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL
);
CREATE TABLE products (
  product_id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  product_name TEXT NOT NULL,
  category TEXT NOT NULL REFERENCES categories (category),
  product_line TEXT NOT NULL,
  list_price_cents INTEGER NOT NULL CHECK (list_price_cents > 0),
  unit_cost_cents INTEGER NOT NULL CHECK (unit_cost_cents > 0),
  launched_on TEXT NOT NULL,
  discontinued_on TEXT
);
CREATE TABLE customers (
  customer_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  segment TEXT NOT NULL CHECK (segment IN ('consumer','business','club')),
  country_code TEXT NOT NULL REFERENCES regions (country_code),
  signup_date TEXT NOT NULL,
  club_member INTEGER NOT NULL CHECK (club_member IN (0, 1))
);
CREATE TABLE customer_contacts (
  contact_id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  address TEXT NOT NULL
);
CREATE TABLE orders (
  order_id INTEGER PRIMARY KEY,
  order_number TEXT NOT NULL UNIQUE,
  order_date TEXT NOT NULL,
  customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
  channel TEXT NOT NULL REFERENCES channels (channel),
  store TEXT CHECK (store IN ('utrecht', 'ghent')),
  country_code TEXT NOT NULL REFERENCES regions (country_code),
  status TEXT NOT NULL CHECK (status IN
    ('paid','refunded','partially_refunded','cancelled','pending')),
  payment_method TEXT NOT NULL CHECK (payment_method IN
    ('card','ideal','paypal','klarna','bank_transfer')),
  total_cents INTEGER NOT NULL CHECK (total_cents >= 0),
  currency TEXT NOT NULL DEFAULT 'EUR' CHECK (currency = 'EUR'),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE order_items (
  order_item_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders (order_id),
  line_number INTEGER NOT NULL CHECK (line_number > 0),
  product_id INTEGER NOT NULL REFERENCES products (product_id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
  discount_cents INTEGER NOT NULL DEFAULT 0 CHECK (discount_cents >= 0),
  line_total_cents INTEGER NOT NULL,
  CHECK (line_total_cents = quantity * unit_price_cents - discount_cents),
  CHECK (line_total_cents > 0),
  UNIQUE (order_id, line_number)
);
CREATE TABLE refunds (
  refund_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders (order_id),
  order_item_id INTEGER NOT NULL REFERENCES order_items (order_item_id),
  refund_date TEXT NOT NULL,
  quantity INTEGER NOT NULL CHECK (quantity >= 0),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  reason TEXT NOT NULL CHECK (reason IN
    ('return','damaged','wrong_item','late_delivery','price_match'))
);
CREATE TABLE payments (
  payment_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders (order_id),
  method TEXT NOT NULL CHECK (method IN
    ('card','ideal','paypal','klarna','bank_transfer')),
  status TEXT NOT NULL CHECK (status IN ('captured','failed','pending')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0),
  attempted_at TEXT NOT NULL
);
)sql";

/// Indexes for the usual analytics (by date, status, channel, category,
/// product, country). None covers a personal column.
constexpr const char* index_sql = R"sql(
CREATE INDEX orders_by_date ON orders (order_date);
CREATE INDEX orders_by_status_date ON orders (status, order_date);
CREATE INDEX orders_by_channel_date ON orders (channel, order_date);
CREATE INDEX orders_by_customer ON orders (customer_id);
CREATE INDEX orders_by_country ON orders (country_code);
CREATE INDEX order_items_by_order ON order_items (order_id);
CREATE INDEX order_items_by_product ON order_items (product_id);
CREATE INDEX refunds_by_order ON refunds (order_id);
CREATE INDEX refunds_by_item ON refunds (order_item_id);
CREATE INDEX refunds_by_date ON refunds (refund_date);
CREATE INDEX payments_by_order ON payments (order_id);
CREATE INDEX products_by_category ON products (category, product_line);
CREATE INDEX customers_by_segment ON customers (segment);
CREATE INDEX customers_by_country ON customers (country_code);
CREATE INDEX customer_contacts_by_customer ON customer_contacts (customer_id);
)sql";

} // namespace

namespace sales {

generator::generator(database& db, uint64_t seed,
                     const sales_progress& progress)
    : db_(db), rng_(seed), progress_(progress) {
  first_ = parse_day(sales_first_day);
  last_ = parse_day(sales_last_day);
}

domain::error generator::run() {
  report("schema", 0.0);
  if (auto err = db_.exec(schema_sql))
    return err;
  if (auto err = prepare_all())
    return err;
  report("catalog data", 0.02);
  if (auto err = write_reference())
    return err;
  report("customers", 0.05);
  if (auto err = write_customers())
    return err;
  report("orders", 0.15);
  for (int day = first_; day <= last_; ++day) {
    if (auto err = write_day(day))
      return err;
    auto c = civil_of(day);
    if (c.d == 1)
      report("orders",
             0.15 + 0.70 * (day - first_) / double(last_ - first_ + 1));
  }
  report("indexes", 0.85);
  return db_.exec(index_sql);
}

void generator::report(std::string_view stage, double fraction) {
  if (progress_)
    progress_(stage, fraction);
}

domain::error generator::prepare_all() {
  auto prep = [&](statement& out, std::string_view sql) -> domain::error {
    auto stmt = db_.prepare(sql);
    if (!stmt)
      return stmt.err();
    out = std::move(*stmt);
    return {};
  };
  domain::error err;
  for (auto [out, sql] :
       std::initializer_list<std::pair<statement*, std::string_view>>{
         {&ins_region_, "INSERT INTO regions VALUES (?,?,?,?)"},
         {&ins_category_, "INSERT INTO categories VALUES (?,?,?)"},
         {&ins_channel_, "INSERT INTO channels VALUES (?,?,?)"},
         {&ins_product_, "INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?)"},
         {&ins_customer_, "INSERT INTO customers VALUES (?,?,?,?,?,?,?)"},
         {&ins_contact_, "INSERT INTO customer_contacts VALUES (?,?,?,?,?)"},
         {&ins_order_, "INSERT INTO orders VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,'EUR',?,?)"},
         {&ins_item_, "INSERT INTO order_items VALUES (?,?,?,?,?,?,?,?)"},
         {&ins_refund_, "INSERT INTO refunds VALUES (?,?,?,?,?,?,?)"},
         {&ins_payment_, "INSERT INTO payments VALUES (?,?,?,?,?,?)"},
       })
    if (!err)
      err = prep(*out, sql);
  return err;
}

domain::error generator::write_reference() {
  for (auto& r : regions)
    if (auto err = insert(ins_region_, r.code, r.country, r.zone, r.in_eu))
      return err;
  for (auto& c : categories)
    if (auto err = insert(ins_category_, c.code, c.display, c.description))
      return err;
  for (auto& c : channels)
    if (auto err = insert(ins_channel_, c.code, c.display, c.description))
      return err;
  std::array<int, category_count> per_category{};
  for (size_t i = 0; i < product_count; ++i) {
    auto& p = products[i];
    char sku[16];
    std::snprintf(sku, sizeof sku, "%s-%04d", sku_prefix[p.category],
                  ++per_category[p.category]);
    auto cost = p.price_cents * categories[p.category].cost_percent / 100;
    launched_[i] = parse_day(p.launched);
    until_[i] = p.discontinued ? parse_day(p.discontinued) : last_ + 1;
    if (auto err
        = insert(ins_product_, static_cast<int64_t>(i + 1), sku, p.label,
                 categories[p.category].code, p.line, p.price_cents, cost,
                 p.launched, nullable(p.discontinued)))
      return err;
  }
  return {};
}

int generator::signup_day() {
  // Growth: more sign-ups every year, most of them in 2024 and 2025.
  static constexpr std::array<double, 8> per_year{4, 6, 9, 11, 12, 13, 21, 24};
  auto year = 2018 + static_cast<int>(rng_.pick(per_year));
  auto from = day_number(year, 1, 1);
  auto to = day_number(year, 12, 31);
  return static_cast<int>(rng_.between(from, to));
}

size_t generator::pick_region(std::span<const size_t> allowed) {
  std::array<double, regions.size()> w{};
  for (size_t i = 0; i < regions.size(); ++i)
    w[i] = allowed.empty() ? regions[i].weight : 0;
  for (auto i : allowed)
    w[i] = regions[i].weight;
  return rng_.pick(w);
}

domain::error generator::write_customers() {
  std::vector<customer> all;
  auto person = [&](customer& c) {
    auto& first = any_of(rng_, first_names);
    auto& last = any_of(rng_, last_names);
    c.label = std::string{first} + " " + last;
    c.mail = slug(first, '.') + "." + slug(last, '.');
  };
  for (int i = 0; i < 12500; ++i) {
    customer c;
    c.segment = consumer;
    c.region = pick_region();
    c.signup_day = signup_day();
    c.club_member = c.signup_day >= day_number(2020, 1, 1) && rng_.chance(0.18);
    person(c);
    all.push_back(std::move(c));
  }
  // Partner dealers: about 160 shops in seven countries (zones A and B).
  static constexpr std::array<size_t, 7> dealer_regions{0, 1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 700; ++i) {
    customer c;
    c.segment = business;
    c.dealer = i < 160;
    c.region = c.dealer ? pick_region(dealer_regions) : pick_region();
    c.signup_day = c.dealer ? static_cast<int>(rng_.between(
                     day_number(2016, 1, 1), day_number(2023, 12, 31)))
                            : signup_day();
    auto& r = regions[c.region];
    auto city = r.cities[rng_.below(3)];
    if (c.dealer)
      c.label
        = rng_.chance(0.5)
            ? std::string{city} + " Bike Shop " + any_of(rng_, last_names)
            : std::string{"Fietsen "} + any_of(rng_, last_names) + " " + city;
    else {
      // Drawn one by one, the suffix first: as operands of one expression
      // their order was the compiler's (gcc right to left, clang left to
      // right); the pinned fingerprint was made in gcc's order.
      auto& suffix = any_of(rng_, business_suffixes);
      auto& name = any_of(rng_, last_names);
      c.label = std::string{name} + " " + suffix + " " + city;
    }
    c.mail = "orders@" + slug(c.label, '-');
    all.push_back(std::move(c));
  }
  static constexpr std::array<size_t, 7> club_regions{0, 1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 400; ++i) {
    customer c;
    c.segment = club;
    c.region = rng_.chance(0.85) ? pick_region(club_regions) : pick_region();
    c.signup_day = signup_day();
    auto city = regions[c.region].cities[rng_.below(3)];
    static constexpr const char* forms[]
      = {"WTC ", "RC ", "Cycling Club ", "Velo Club "};
    c.label
      = std::string{any_of(rng_, forms)} + city + " " + std::to_string(i + 1);
    c.mail = "secretary@" + slug(c.label, '-');
    all.push_back(std::move(c));
  }
  // Ids follow the sign-up order, as in a real customer table.
  std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) {
    return a.signup_day < b.signup_day;
  });
  int64_t contact_id = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    auto& c = all[i];
    c.id = static_cast<int64_t>(i + 1);
    std::string mail = c.mail;
    if (c.segment == consumer)
      mail += std::to_string(c.id) + "@" + any_of(rng_, mail_domains);
    else
      mail += ".example";
    if (auto err = insert(ins_customer_, c.id, c.label, mail,
                          segment_names[c.segment], regions[c.region].code,
                          iso_date(c.signup_day), c.club_member ? 1 : 0))
      return err;
    auto contacts = rng_.chance(0.08) ? 2 : 1;
    for (int k = 0; k < contacts; ++k) {
      auto& r = regions[c.region];
      char phone[40];
      std::snprintf(phone, sizeof phone, "%s%04d", r.phone_prefix,
                    static_cast<int>(rng_.below(10000)));
      // Drawn one by one, last part first: as arguments of one call their
      // order was the compiler's (gcc right to left, clang left to right),
      // and a clang build generated another database. This is the order
      // the pinned fingerprint was made with.
      const auto* city = r.cities[rng_.below(3)];
      auto postcode = static_cast<int>(rng_.between(1000, 9999));
      auto number = static_cast<int>(rng_.between(1, 220));
      const auto* street = any_of(rng_, street_names);
      char address[160];
      std::snprintf(address, sizeof address, "%s %d, %04d %s", street, number,
                    postcode, city);
      auto contact_mail = k == 0 ? mail
                                 : "alt." + std::to_string(c.id) + "@"
                                     + any_of(rng_, mail_domains);
      if (auto err = insert(ins_contact_, ++contact_id, c.id, contact_mail,
                            std::string_view{phone}, std::string_view{address}))
        return err;
    }
    if (c.dealer)
      pool_[3].push_back(i);
    else
      pool_[c.segment].push_back(i);
  }
  customers_ = std::move(all);
  return {};
}

const customer* generator::pick_customer(size_t pool, int day) {
  auto& ids = pool_[pool];
  auto signed_up = [&](int d) {
    return static_cast<size_t>(
      std::upper_bound(
        ids.begin(), ids.end(), d,
        [&](int x, size_t i) { return x < customers_[i].signup_day; })
      - ids.begin());
  };
  auto known = signed_up(day);
  if (known == 0)
    return nullptr;
  if (rng_.chance(0.3)) {
    auto recent = signed_up(day - 60);
    if (recent < known)
      return &customers_[ids[recent + rng_.below(known - recent)]];
  }
  auto pos = rng_.below(known);
  if (rng_.chance(0.5))
    pos = std::min(pos, rng_.below(known));
  return &customers_[ids[pos]];
}

} // namespace sales

namespace {

/// A sales database that holds nothing: 0 bytes (what an interrupted copy
/// or `: > sales.db` leaves) or an SQLite file without a single schema
/// entry. Generating over it loses nothing, the way ledger.db gets its
/// schema in an empty file.
bool blank_database(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return false;
  if (size == 0)
    return true;
  auto db = database::open(path, SQLITE_OPEN_READONLY);
  if (!db)
    return false;
  auto entries = db->query_int64("SELECT count(*) FROM sqlite_master");
  return entries && *entries == 0;
}

} // namespace

domain::outcome<sales_summary> generate_sales(const std::string& path,
                                              uint64_t seed,
                                              const sales_progress& progress,
                                              bool overwrite) {
  namespace fs = std::filesystem;
  if (path.empty())
    return make_error(ec::invalid_request, "empty sales database path");
  std::error_code fs_err;
  if (fs::exists(path, fs_err) && !overwrite && !blank_database(path))
    return make_error(ec::invalid_request,
                      "sales database already exists: " + path
                        + " (refusing to overwrite it)");
  auto tmp = path + ".tmp";
  fs::remove(tmp, fs_err);
  fs::remove(tmp + "-journal", fs_err);
  // Whatever happens below, no half-built file survives.
  struct cleanup {
    std::string file;
    bool armed = true;
    ~cleanup() {
      if (!armed)
        return;
      std::error_code ignored;
      fs::remove(file, ignored);
      fs::remove(file + "-journal", ignored);
    }
  } guard{tmp};

  sales_summary summary;
  {
    auto db = database::open(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!db)
      return db.err();
    if (auto err = db->exec("PRAGMA journal_mode = MEMORY; "
                            "PRAGMA foreign_keys = OFF; "
                            "PRAGMA cache_size = -32000"))
      return err;
    {
      auto tx = transaction::begin(*db);
      if (!tx)
        return tx.err();
      sales::generator gen{*db, seed, progress};
      if (auto err = gen.run())
        return err;
      if (progress)
        progress("checks", 0.90);
      if (auto err = check_sales(*db))
        return err;
      if (auto err = tx->commit())
        return err;
    }
    if (progress)
      progress("fingerprint", 0.95);
    auto sum = summarize_sales(*db);
    if (!sum)
      return sum.err();
    summary = std::move(*sum);
    summary.seed = seed;
  }
  fs::rename(tmp, path, fs_err);
  if (fs_err)
    return make_error(ec::storage_failed, "cannot move " + tmp + " to " + path
                                            + ": " + fs_err.message());
  guard.armed = false;
  if (progress)
    progress("done", 1.0);
  return summary;
}

const char* sales_schema_sql() noexcept {
  return schema_sql;
}

} // namespace candor::data
