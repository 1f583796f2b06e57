// Tests of the catalog draft on a database shaped unlike the sales one (a
// lending library): what it allows, restricts and why, its joins, value
// lists, draft metrics and semantic layer; and the personal-data rules.

#include "data/catalog/draft.hpp"

#include <algorithm>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/catalog/personal_data.hpp"
#include "data/local/planner.hpp"
#include "data/sales/catalog.hpp"
#include "data/sqlite.hpp"
#include "tests/support/library_db.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;
namespace json = boost::json;

namespace {

struct library {
  test::temp_dir dir{"candor-draft"};
  std::string path = dir.file("library.db");
  database db;
  catalog_draft draft;
  json::object doc;

  library() {
    test::make_library_db(path);
    auto opened = database::open(path, SQLITE_OPEN_READONLY);
    BOOST_REQUIRE(opened.ok());
    db = std::move(*opened);
    draft_options opts;
    opts.source_name = "library.db";
    auto made = draft_catalog(db, opts);
    BOOST_REQUIRE_MESSAGE(made.ok(), (made.ok() ? "" : made.err().message));
    draft = std::move(*made);
    doc = json::parse(draft.json).as_object();
  }

  const json::object* table(const std::string& name) const {
    for (auto& t : doc.at("tables").as_array())
      if (t.at("name").as_string() == name)
        return &t.as_object();
    return nullptr;
  }

  bool noted(const std::string& part) const {
    return std::any_of(
      draft.notes.begin(), draft.notes.end(),
      [&](const std::string& n) { return n.find(part) != std::string::npos; });
  }
};

std::string reason_of(const json::object& table, const std::string& column) {
  if (auto* d = table.if_contains("denied_columns"))
    for (auto& c : d->as_array())
      if (c.at("name").as_string() == column)
        return std::string{c.at("reason").as_string()};
  return {};
}

column_sample sample(std::string table, std::string column,
                     std::vector<std::string> values) {
  column_sample s;
  s.table = std::move(table);
  s.column = std::move(column);
  s.text_values = values.size();
  s.values = std::move(values);
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_catalog_draft)

BOOST_AUTO_TEST_CASE(the_draft_is_a_catalog_that_fits_its_database) {
  library lib;
  auto cat = catalog::parse(lib.draft.json);
  BOOST_REQUIRE_MESSAGE(cat.ok(), (cat.ok() ? "" : cat.err().message));
  auto fits = cat->check_against(lib.db);
  BOOST_CHECK_MESSAGE(!fits, fits.message);
  auto layer = semantic_layer::parse(*cat);
  BOOST_REQUIRE_MESSAGE(layer.ok(), (layer.ok() ? "" : layer.err().message));
  // Loans are dated by loaned_on, members by joined_on; books have no date.
  BOOST_REQUIRE(layer->grain("loans") != nullptr);
  BOOST_CHECK(layer->grain("loans")->time.find("loaned_on")
              != std::string::npos);
  BOOST_REQUIRE(layer->grain("members") != nullptr);
  BOOST_CHECK(layer->grain("books") == nullptr);
  // Both foreign keys of loans are joins from it.
  size_t from_loans = 0;
  for (auto& j : layer->joins)
    if (j.sql.find("member_id = " + layer->grain("loans")->provides[0] + ".")
          != std::string::npos
        || j.sql.find("book_id = " + layer->grain("loans")->provides[0] + ".")
             != std::string::npos)
      ++from_loans;
  BOOST_CHECK_EQUAL(from_loans, 2u);
  BOOST_CHECK_EQUAL(layer->coverage_from, "2024-01-01");
  BOOST_CHECK_EQUAL(layer->coverage_to, "2025-12-28");
  // The text is indented with one line per column.
  BOOST_CHECK(lib.draft.json.find("\n        {\"name\": \"genre\"")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(personal_columns_and_tables_are_restricted_with_reasons) {
  library lib;
  auto* members = lib.table("members");
  BOOST_REQUIRE(members != nullptr);
  auto name = reason_of(*members, "full_name");
  BOOST_CHECK_MESSAGE(name.find("people's names") != std::string::npos, name);
  BOOST_CHECK_MESSAGE(name.find("its name 'full_name'") != std::string::npos,
                      name);
  auto mail = reason_of(*members, "email");
  BOOST_CHECK_MESSAGE(mail.find("e-mail addresses") != std::string::npos
                        && mail.find("40 of 40 sampled values")
                             != std::string::npos,
                      mail);
  BOOST_CHECK(reason_of(*members, "phone").find("telephone numbers")
              != std::string::npos);
  // city, tier and the join date stay allowed.
  for (auto* allowed : {"city", "tier", "joined_on", "member_id"})
    BOOST_CHECK_MESSAGE(reason_of(*members, allowed).empty(), allowed);
  // Every non-key column of member_addresses is personal: denied whole.
  BOOST_CHECK(lib.table("member_addresses") == nullptr);
  auto& denied = lib.doc.at("denied_tables").as_array();
  BOOST_REQUIRE_EQUAL(denied.size(), 1u);
  auto why = std::string{denied[0].at("reason").as_string()};
  for (auto* kind : {"IBANs", "postal addresses"})
    BOOST_CHECK_MESSAGE(why.find(kind) != std::string::npos, why);
  BOOST_CHECK(lib.noted("restricted members.email: personal data"));
  BOOST_CHECK(lib.noted("restricted table member_addresses"));
  // The planner refuses questions about them.
  auto& restricted = lib.doc.at("semantic").at("restricted").as_object();
  auto phrases = json::serialize(restricted.at("phrases"));
  BOOST_CHECK(phrases.find("\"email\"") != std::string::npos);
  BOOST_CHECK(json::serialize(restricted.at("reason")).find("members.email")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(value_lists_and_draft_metrics) {
  library lib;
  auto* books = lib.table("books");
  BOOST_REQUIRE(books != nullptr);
  for (auto& c : books->at("columns").as_array()) {
    if (c.at("name").as_string() == "genre")
      BOOST_CHECK_EQUAL(json::serialize(c.at("values")),
                        R"(["crime","fantasy","history","poetry","science"])");
    if (c.at("name").as_string() == "title") // 30 values: no list
      BOOST_CHECK(!c.as_object().contains("values"));
  }
  auto cat = catalog::parse(lib.draft.json);
  BOOST_REQUIRE(cat.ok());
  std::vector<std::string> names;
  for (auto& m : cat->metrics()) {
    BOOST_CHECK_MESSAGE(m.draft, m.name);
    names.push_back(m.name);
  }
  for (auto* want : {"loans_count", "total_fee_cents", "total_days",
                     "books_count", "total_price_cents"})
    BOOST_CHECK_MESSAGE(std::count(names.begin(), names.end(), want) == 1,
                        want);
  // Keys, years and personal columns are not summed.
  for (auto* never : {"total_member_id", "total_book_id",
                      "total_published_year", "total_loan_id"})
    BOOST_CHECK_MESSAGE(std::count(names.begin(), names.end(), never) == 0,
                        never);
  // Each metric's SQL runs and gives the sum it names.
  auto fee = lib.db.query_int64("SELECT SUM(fee_cents) FROM loans");
  for (auto& m : cat->metrics())
    if (m.name == "total_fee_cents")
      BOOST_CHECK_EQUAL(*lib.db.query_int64(m.sql), *fee);
  BOOST_CHECK(lib.noted("draft metrics"));
}

BOOST_AUTO_TEST_CASE(personal_data_by_name) {
  auto kind = [](const char* table, const char* column) {
    auto v = personal_data_in(sample(table, column, {}));
    return v ? v->kind : std::string{"-"};
  };
  BOOST_CHECK_EQUAL(kind("users", "email"), "e-mail addresses");
  BOOST_CHECK_EQUAL(kind("users", "contactEmail"), "e-mail addresses");
  BOOST_CHECK_EQUAL(kind("staff", "mobile_phone"), "telephone numbers");
  BOOST_CHECK_EQUAL(kind("patients", "date_of_birth"), "birth dates");
  BOOST_CHECK_EQUAL(kind("patients", "DOB"), "birth dates");
  BOOST_CHECK_EQUAL(kind("employees", "national_id"),
                    "national identity numbers");
  BOOST_CHECK_EQUAL(kind("people", "ssn"), "national identity numbers");
  BOOST_CHECK_EQUAL(kind("accounts", "iban"), "IBANs");
  BOOST_CHECK_EQUAL(kind("customers", "street_address"), "postal addresses");
  BOOST_CHECK_EQUAL(kind("customers", "LastName"), "people's names");
  BOOST_CHECK_EQUAL(kind("customers", "name"), "people's names");
  BOOST_CHECK_EQUAL(kind("orders", "customer_name"), "people's names");
  // A name that is not a person's.
  BOOST_CHECK_EQUAL(kind("products", "name"), "-");
  BOOST_CHECK_EQUAL(kind("products", "product_name"), "-");
  BOOST_CHECK_EQUAL(kind("orders", "order_date"), "-");
  BOOST_CHECK_EQUAL(kind("hotels", "hotel_id"), "-");
  auto words = name_words("contactEmailAddress");
  BOOST_CHECK_EQUAL(words.size(), 3u);
  BOOST_CHECK_EQUAL(words[2], "address");
}

BOOST_AUTO_TEST_CASE(personal_data_by_content) {
  auto verdict = [](std::vector<std::string> values) {
    return personal_data_in(sample("t", "notes", std::move(values)));
  };
  auto mail = verdict({"a@b.example", "c.d@e.org", "x@y.nl", "not one"});
  BOOST_REQUIRE(mail);
  BOOST_CHECK_EQUAL(mail->kind, "e-mail addresses");
  BOOST_CHECK_EQUAL(mail->evidence,
                    "3 of 4 sampled values look like e-mail addresses");
  auto iban = verdict({"NL91 ABNA 0417 1643 00", "DE89370400440532013000",
                       "GB82WEST12345698765432"});
  BOOST_REQUIRE(iban);
  BOOST_CHECK_EQUAL(iban->kind, "IBANs");
  BOOST_CHECK(looks_like_iban("NL91ABNA0417164300"));
  BOOST_CHECK(!looks_like_iban("NL92ABNA0417164300")); // check digits off
  auto phone = verdict({"+31 6 1234 5678", "(020) 555-0142", "0612345678"});
  BOOST_REQUIRE(phone);
  BOOST_CHECK_EQUAL(phone->kind, "telephone numbers");
  auto street = verdict(
    {"12 Baker Street", "Keizersgracht 124", "Hauptstrasse 5", "3 Main Rd"});
  BOOST_REQUIRE(street);
  BOOST_CHECK_EQUAL(street->kind, "postal addresses");
  auto people = verdict({"Anna de Vries", "Bram Jansen", "Chloe Peeters",
                         "Daan Moreau", "Eva Schmidt", "Finn O'Neill"});
  BOOST_REQUIRE(people);
  BOOST_CHECK_EQUAL(people->kind, "people's names");
  // Not personal: dates, codes, amounts, product titles, one stray e-mail.
  BOOST_CHECK(!verdict({"2025-03-14", "2024-11-02", "2025-01-30"}));
  BOOST_CHECK(!verdict({"BK-0002", "BK-0017", "AC-0100"}));
  BOOST_CHECK(!verdict({"Strada AL 105", "Volt City 500", "Inner tube",
                        "Canal 3", "Rain Jacket XL"}));
  BOOST_CHECK(!verdict({"ok", "late", "a@b.example", "ok", "open"}));
  // Numbers stored as numbers are not telephone numbers.
  auto numbers = sample("t", "amount", {"0612345678", "0687654321", "0611"});
  numbers.text_values = 0;
  BOOST_CHECK(!personal_data_in(numbers));
}

BOOST_AUTO_TEST_SUITE_END()
