// Tests of the sales catalog: parsing, allow and deny lists, checks against
// a database, value domains, the schema prompt and metric SQL.

#include "data/sales/catalog.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/temp_dir.hpp"

#include "data/sales/gen.hpp"
#include "data/sqlite.hpp"

using namespace candor;
using namespace candor::data;
namespace json = boost::json;

namespace {

using candor::test::temp_dir;

/// One generated sales database for the whole suite.
struct sales_db {
  temp_dir dir;
  std::string path;

  sales_db() : path(dir.file("sales.db")) {
    auto result = generate_sales(path, default_sales_seed, {});
    if (!result)
      throw std::runtime_error("generate_sales: " + result.err().message);
  }
};

const sales_db& shared_db() {
  static sales_db db;
  return db;
}

template <class T>
std::string why(const domain::outcome<T>& x) {
  return x.ok() ? std::string{} : x.err().message;
}

database open_db(const std::string& path, int flags = SQLITE_OPEN_READONLY) {
  auto db = database::open(path, flags);
  BOOST_REQUIRE_MESSAGE(db.ok(), why(db));
  return std::move(*db);
}

catalog default_catalog() {
  auto c = catalog::load_default();
  BOOST_REQUIRE_MESSAGE(c.ok(), why(c));
  return std::move(*c);
}

std::string read_all(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

/// The default catalog document, to be edited by a test.
json::object default_document() {
  return json::parse(read_all(catalog::default_path())).as_object();
}

catalog parse_document(const json::object& doc) {
  auto c = catalog::parse(json::serialize(doc));
  BOOST_REQUIRE_MESSAGE(c.ok(), why(c));
  return std::move(*c);
}

json::object& table_of(json::object& doc, std::string_view name) {
  for (auto& t : doc.at("tables").as_array())
    if (t.as_object().at("name").as_string() == name)
      return t.as_object();
  throw std::runtime_error("no table " + std::string{name});
}

/// A copy of the shared database that a test may alter.
struct db_copy {
  temp_dir dir;
  std::string path;

  db_copy() : path(dir.file("copy.db")) {
    std::filesystem::copy_file(shared_db().path, path);
  }
};

/// Identifier-like words of `text` ([A-Za-z0-9_]+), lower-cased.
std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::string word;
  for (char c : text + " ") {
    bool part = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9') || c == '_';
    if (part) {
      word += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else if (!word.empty()) {
      out.insert(word);
      word.clear();
    }
  }
  return out;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

/// A minimal valid catalog; `patch` replaces `from` by `to` in it.
constexpr std::string_view minimal = R"({
  "version": 1,
  "tables": [
    {"name": "orders", "description": "Orders.",
     "columns": [
       {"name": "order_id", "description": "Key."},
       {"name": "status", "description": "State.",
        "values": ["paid", "pending"]}
     ],
     "denied_columns": [{"name": "secret", "reason": "private"}]}
  ],
  "denied_tables": [{"name": "contacts", "reason": "personal data"}],
  "metrics": [{"name": "order_count", "description": "Orders.",
               "sql": "SELECT COUNT(*) FROM orders"}]
})";

std::string patch(std::string_view from, std::string_view to) {
  std::string text{minimal};
  auto pos = text.find(from);
  if (pos == std::string::npos)
    throw std::runtime_error("patch target not found: " + std::string{from});
  text.replace(pos, from.size(), to);
  return text;
}

/// Reads only allowlisted table.columns, like the validation connection.
int allowlist_authorizer(void* user, int action, const char* a, const char* b,
                         const char*, const char*) {
  auto* cat = static_cast<const catalog*>(user);
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_FUNCTION: return SQLITE_OK;
    case SQLITE_READ:
      if (a == nullptr || !cat->table_allowed(a))
        return SQLITE_DENY;
      if (b == nullptr || *b == '\0' || cat->column_allowed(a, b))
        return SQLITE_OK;
      return SQLITE_DENY;
    default: return SQLITE_DENY;
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_catalog)

BOOST_AUTO_TEST_CASE(default_catalog_allows_and_denies) {
  auto c = default_catalog();
  BOOST_TEST(c.tables().size() == 9u);
  BOOST_TEST(c.table_allowed("orders"));
  BOOST_TEST(c.table_allowed("ORDERS")); // SQLite names ignore case
  BOOST_TEST(c.column_allowed("Orders", "Total_Cents"));
  BOOST_TEST(c.column_allowed("customers", "segment"));
  BOOST_TEST(!c.column_allowed("customers", "name"));
  BOOST_TEST(!c.column_allowed("customers", "email"));
  BOOST_TEST(c.column_denied("customers", "name"));
  BOOST_TEST(c.column_denied("customers", "EMAIL"));
  BOOST_TEST(!c.column_denied("customers", "segment"));
  BOOST_TEST(!c.table_allowed("customer_contacts"));
  BOOST_TEST(c.table_denied("customer_contacts"));
  BOOST_TEST(c.column_denied("customer_contacts", "phone"));
  BOOST_TEST(!c.column_allowed("customer_contacts", "customer_id"));
  BOOST_TEST(!c.table_allowed("sqlite_schema"));
  BOOST_TEST(!c.column_allowed("orders", "no_such_column"));
  BOOST_TEST(!c.column_allowed("no_such_table", "order_id"));

  auto* status = c.value_domain("orders", "status");
  BOOST_REQUIRE(status != nullptr);
  BOOST_TEST(
    *status
    == (std::vector<std::string>{"paid", "refunded", "partially_refunded",
                                 "cancelled", "pending"}));
  BOOST_REQUIRE(c.value_domain("products", "category") != nullptr);
  BOOST_TEST(c.value_domain("products", "category")->size() == 6u);
  BOOST_TEST(c.value_domain("orders", "total_cents") == nullptr);
  BOOST_TEST(c.value_domain("customers", "name") == nullptr);
  BOOST_TEST(c.value_domain("nope", "status") == nullptr);
  BOOST_REQUIRE(c.find_column("orders", "order_date") != nullptr);
  BOOST_TEST(!c.find_column("orders", "order_date")->synonyms.empty());

  auto allowed = c.allowed_columns();
  BOOST_TEST(allowed.size() == 9u);
  BOOST_TEST(!allowed.contains("customer_contacts"));
  BOOST_TEST(allowed["customers"]
             == (std::set<std::string>{"customer_id", "segment", "country_code",
                                       "signup_date", "club_member"}));
  BOOST_TEST(allowed["orders"].contains("total_cents"));

  std::set<std::string> metric_names;
  for (auto& m : c.metrics())
    metric_names.insert(m.name);
  for (auto name : {"revenue", "average_order_value", "refund_rate",
                    "units_sold", "gross_revenue"})
    BOOST_TEST(metric_names.contains(name), name);
}

BOOST_AUTO_TEST_CASE(minimal_catalog_parses) {
  auto c = catalog::parse(minimal);
  BOOST_REQUIRE_MESSAGE(c.ok(), why(c));
  BOOST_TEST(c->column_allowed("orders", "status"));
  BOOST_TEST(c->column_denied("orders", "secret"));
  BOOST_TEST(c->table_denied("contacts"));
  BOOST_TEST(c->metrics().size() == 1u);
}

BOOST_AUTO_TEST_CASE(parse_errors_name_the_field) {
  struct bad_case {
    std::string json;
    std::string path;
  };
  std::vector<bad_case> cases{
    {"{\"version\": 1, ", "(document)"},
    {"[]", "(document)"},
    {patch("\"version\": 1,", ""), "version"},
    {patch("\"version\": 1", "\"version\": 2"), "version"},
    {patch("\"version\": 1,", "\"version\": 1, \"colour\": 3,"), "colour"},
    {R"({"version": 1})", "tables"},
    {R"({"version": 1, "tables": []})", "tables"},
    {patch("\"description\": \"Orders.\",", ""), "tables[0].description"},
    {patch("{\"name\": \"order_id\"", "{\"name\": \"Order Id\""),
     "tables[0].columns[0].name"},
    {patch("\"columns\"", "\"colums\""), "tables[0].colums"},
    {patch("\"values\": [\"paid\", \"pending\"]", "\"values\": \"paid\""),
     "tables[0].columns[1].values"},
    {patch("\"values\": [\"paid\", \"pending\"]",
           "\"values\": [\"paid\", \"paid\"]"),
     "tables[0].columns[1].values[1]"},
    {patch("\"values\": [\"paid\", \"pending\"]", "\"values\": [\"paid\", 3]"),
     "tables[0].columns[1].values[1]"},
    {patch("{\"name\": \"secret\"", "{\"name\": \"status\""),
     "tables[0].denied_columns[0].name"},
    {patch("\"reason\": \"private\"", "\"reason\": \"\""),
     "tables[0].denied_columns[0].reason"},
    {patch("{\"name\": \"contacts\"", "{\"name\": \"orders\""),
     "denied_tables[0].name"},
    {patch(",\n               \"sql\": \"SELECT COUNT(*) FROM orders\"", ""),
     "metrics[0].sql"},
    {patch("\"denied_tables\"", "\"tables_extra\": 1, \"denied_tables\""),
     "tables_extra"},
  };
  // A duplicate table.
  auto doc = json::parse(minimal).as_object();
  doc["tables"].as_array().push_back(doc["tables"].as_array()[0]);
  cases.push_back({json::serialize(doc), "tables[1].name"});

  for (auto& bad : cases) {
    auto c = catalog::parse(bad.json);
    BOOST_REQUIRE_MESSAGE(!c.ok(), "accepted: " << bad.json);
    BOOST_TEST((c.err().code == domain::ec::config_invalid));
    BOOST_TEST(contains(c.err().message, "catalog: " + bad.path + ":"),
               c.err().message << " should name " << bad.path);
    BOOST_REQUIRE(!c.err().issues.empty());
    BOOST_TEST(c.err().issues[0].path == bad.path);
  }
  auto broken = catalog::parse("{\n\"version\": 1,\n\"tables\": [}");
  BOOST_REQUIRE(!broken.ok());
  BOOST_TEST(contains(broken.err().message, "line 3"), broken.err().message);
}

BOOST_AUTO_TEST_CASE(load_reports_the_file) {
  temp_dir dir;
  auto missing = catalog::load(dir.file("none.json"));
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.err().message, "none.json"));
  auto path = dir.file("bad.json");
  {
    std::ofstream out{path};
    out << patch("\"columns\"", "\"colums\"");
  }
  auto bad = catalog::load(path);
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.err().message, "bad.json"));
  BOOST_TEST(contains(bad.err().message, "tables[0].colums"));
}

BOOST_AUTO_TEST_CASE(check_against_passes_on_a_generated_database) {
  auto c = default_catalog();
  auto db = open_db(shared_db().path);
  auto err = c.check_against(db);
  BOOST_TEST(!err, err.message);
}

BOOST_AUTO_TEST_CASE(check_against_names_a_dropped_column) {
  db_copy copy;
  {
    auto db = open_db(copy.path, default_open_flags);
    BOOST_REQUIRE(!db.exec("ALTER TABLE orders DROP COLUMN updated_at"));
  }
  auto db = open_db(copy.path);
  auto err = default_catalog().check_against(db);
  BOOST_REQUIRE(err);
  BOOST_TEST((err.code == domain::ec::config_invalid));
  BOOST_TEST(contains(err.message, "orders.updated_at"), err.message);
  BOOST_TEST(contains(err.message, "missing from the database"));
}

BOOST_AUTO_TEST_CASE(check_against_names_unknown_columns_and_tables) {
  db_copy copy;
  {
    auto db = open_db(copy.path, default_open_flags);
    BOOST_REQUIRE(!db.exec("ALTER TABLE payments ADD COLUMN card_number "
                           "TEXT"));
  }
  {
    auto db = open_db(copy.path);
    auto err = default_catalog().check_against(db);
    BOOST_REQUIRE(err);
    BOOST_TEST(contains(err.message, "payments.card_number"), err.message);
    BOOST_TEST(contains(err.message, "neither allowed nor denied"));
  }
  {
    auto db = open_db(copy.path, default_open_flags);
    BOOST_REQUIRE(!db.exec("ALTER TABLE payments DROP COLUMN card_number; "
                           "CREATE TABLE audit_notes (note TEXT); "
                           "CREATE VIEW big_orders AS SELECT order_id FROM "
                           "orders WHERE total_cents > 100000"));
  }
  auto db = open_db(copy.path);
  auto err = default_catalog().check_against(db);
  BOOST_REQUIRE(err);
  std::set<std::string> paths;
  for (auto& i : err.issues)
    paths.insert(i.path);
  BOOST_TEST(paths == (std::set<std::string>{"audit_notes", "big_orders"}));
  BOOST_TEST(contains(err.message, "and 1 more"), err.message);
}

BOOST_AUTO_TEST_CASE(check_against_names_what_the_catalog_lacks_or_adds) {
  auto db = open_db(shared_db().path);
  {
    // A denied column the catalog forgot: it would be neither allowed nor
    // denied, so it must fail rather than pass silently.
    auto doc = default_document();
    auto& customers = table_of(doc, "customers");
    customers["denied_columns"].as_array().pop_back();
    auto err = parse_document(doc).check_against(db);
    BOOST_REQUIRE(err);
    BOOST_TEST(contains(err.message, "customers.email"), err.message);
  }
  {
    // A column the catalog allows but the database does not have.
    auto doc = default_document();
    table_of(doc, "orders")["columns"].as_array().push_back(
      json::object{{"name", "shipping_cents"}, {"description", "x"}});
    auto err = parse_document(doc).check_against(db);
    BOOST_REQUIRE(err);
    BOOST_TEST(contains(err.message, "orders.shipping_cents"), err.message);
  }
  {
    // An allowed table the database does not have.
    auto doc = default_document();
    doc["tables"].as_array().push_back(json::object{
      {"name", "suppliers"},
      {"description", "x"},
      {"columns", json::array{json::object{{"name", "supplier_id"},
                                           {"description", "x"}}}}});
    auto err = parse_document(doc).check_against(db);
    BOOST_REQUIRE(err);
    BOOST_TEST(contains(err.message, "suppliers"), err.message);
    BOOST_TEST(contains(err.message, "allowed table is missing"));
  }
  {
    // The whole contacts table left out of the catalog.
    auto doc = default_document();
    doc.erase("denied_tables");
    auto err = parse_document(doc).check_against(db);
    BOOST_REQUIRE(err);
    BOOST_TEST(contains(err.message, "customer_contacts"), err.message);
  }
}

BOOST_AUTO_TEST_CASE(check_against_reports_values_outside_the_domain) {
  auto db = open_db(shared_db().path);
  auto doc = default_document();
  for (auto& col : table_of(doc, "orders")["columns"].as_array()) {
    auto& obj = col.as_object();
    if (obj["name"].as_string() == "store")
      obj["values"] = json::array{"utrecht"};
  }
  auto err = parse_document(doc).check_against(db);
  BOOST_REQUIRE(err);
  BOOST_TEST(contains(err.message, "orders.store"), err.message);
  BOOST_TEST(contains(err.message, "'ghent'"), err.message);
}

BOOST_AUTO_TEST_CASE(every_categorical_value_is_inside_its_domain) {
  auto c = default_catalog();
  auto db = open_db(shared_db().path);
  int checked = 0;
  for (auto& t : c.tables()) {
    for (auto& col : t.columns) {
      if (col.values.empty())
        continue;
      ++checked;
      std::set<std::string> declared(col.values.begin(), col.values.end());
      std::set<std::string> seen;
      auto stmt = db.prepare("SELECT DISTINCT " + col.name + " FROM " + t.name
                             + " WHERE " + col.name + " IS NOT NULL");
      BOOST_REQUIRE(stmt.ok());
      for (;;) {
        auto res = stmt->step();
        BOOST_REQUIRE(res.ok());
        if (*res == step_result::done)
          break;
        auto value = stmt->column_text(0);
        BOOST_TEST(declared.contains(value),
                   t.name << "." << col.name << " holds '" << value << "'");
        seen.insert(value);
      }
      // The domains are not padded: every declared value occurs.
      BOOST_TEST(seen == declared, t.name << "." << col.name);
    }
  }
  BOOST_TEST(checked >= 15);
}

BOOST_AUTO_TEST_CASE(schema_prompt_leaves_out_denied_data) {
  auto c = default_catalog();
  auto db = open_db(shared_db().path);
  auto prompt = c.schema_prompt(db);
  BOOST_REQUIRE_MESSAGE(prompt.ok(), why(prompt));
  auto found = words(*prompt);
  // Names denied anywhere, minus names that are also allowed columns
  // elsewhere (customer_contacts.customer_id is orders.customer_id too).
  std::set<std::string> allowed_names;
  for (auto& t : c.tables())
    for (auto& col : t.columns)
      allowed_names.insert(col.name);
  std::set<std::string> denied;
  for (auto& t : c.tables())
    for (auto& d : t.denied_columns)
      denied.insert(d.name);
  for (auto& d : c.denied_tables()) {
    denied.insert(d.name);
    auto cols
      = db.prepare("SELECT name FROM pragma_table_info('" + d.name + "')");
    BOOST_REQUIRE(cols.ok());
    while (*cols->step() == step_result::row)
      if (auto name = cols->column_text(0); !allowed_names.contains(name))
        denied.insert(name);
  }
  for (auto name :
       {"name", "email", "phone", "address", "customer_contacts", "contact_id"})
    BOOST_TEST(denied.contains(name), name);
  for (auto& name : denied)
    BOOST_TEST(!found.contains(name), "schema text mentions '" << name << "'");
  // No denial reason leaks either.
  BOOST_TEST(!contains(*prompt, "personal data:"));
  BOOST_TEST(!contains(*prompt, "telephone"));
}

BOOST_AUTO_TEST_CASE(schema_prompt_has_ddl_domains_and_metrics) {
  auto c = default_catalog();
  auto db = open_db(shared_db().path);
  auto prompt = c.schema_prompt(db);
  BOOST_REQUIRE_MESSAGE(prompt.ok(), why(prompt));
  auto& text = *prompt;
  for (auto& t : c.tables()) {
    BOOST_TEST(contains(text, "CREATE TABLE " + t.name + " ("), t.name);
    for (auto& col : t.columns)
      BOOST_TEST(contains(text, "  " + col.name + " "),
                 t.name << "." << col.name);
  }
  BOOST_TEST(contains(text, "order_id INTEGER PRIMARY KEY"));
  BOOST_TEST(contains(text, "REFERENCES customers (customer_id)"));
  BOOST_TEST(contains(text, "'partially_refunded'"));
  BOOST_TEST(contains(text, "'volt_trek'"));
  BOOST_TEST(contains(text, "Also called: sales"));
  for (auto& m : c.metrics()) {
    BOOST_TEST(contains(text, "-- " + m.name + ": "), m.name);
    BOOST_TEST(contains(text, m.sql), m.name);
  }
  for (auto& g : c.guidance())
    BOOST_TEST(contains(text, g));
}

BOOST_AUTO_TEST_CASE(metric_sql_runs_and_reads_only_allowed_columns) {
  auto c = default_catalog();
  auto db = open_db(shared_db().path);
  sqlite3_set_authorizer(db.handle(), allowlist_authorizer, &c);
  // The authorizer stands for layer 2: make sure it bites.
  BOOST_TEST(!db.prepare("SELECT name FROM customers").ok());
  BOOST_TEST(!db.prepare("SELECT phone FROM customer_contacts").ok());
  std::map<std::string, double> value;
  for (auto& m : c.metrics()) {
    auto stmt = db.prepare(m.sql);
    BOOST_REQUIRE_MESSAGE(stmt.ok(), m.name << ": " << why(stmt));
    auto res = stmt->step();
    BOOST_REQUIRE_MESSAGE(res.ok(), m.name << ": " << why(res));
    BOOST_REQUIRE(*res == step_result::row);
    auto last = stmt->column_count() - 1;
    BOOST_TEST(!stmt->is_null(last), m.name);
    value[m.name] = stmt->column_double(last);
  }
  sqlite3_set_authorizer(db.handle(), nullptr, nullptr);
  BOOST_TEST(value["revenue"] > 0);
  BOOST_TEST(value["revenue"] < value["gross_revenue"]);
  BOOST_TEST(value["gross_revenue"] - value["revenue"]
               == value["refund_rate"] * value["gross_revenue"],
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(value["refund_rate"] > 0.005);
  BOOST_TEST(value["refund_rate"] < 0.2);
  BOOST_TEST(value["average_order_value"] > 20);
  BOOST_TEST(value["cancellation_rate"] > 0);
  BOOST_TEST(value["gross_margin"] < value["gross_revenue"]);
}

BOOST_AUTO_TEST_SUITE_END()
