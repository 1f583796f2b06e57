// Tests of `candor catalog check` in-process: each kind of problem found in
// an edited draft of the library database, on the line it is about.

#include "data/catalog/check.hpp"

#include <algorithm>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/catalog/draft.hpp"
#include "data/catalog/draft_detail.hpp"
#include "data/sqlite.hpp"
#include "tests/support/library_db.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;
namespace json = boost::json;

namespace {

struct drafted {
  test::temp_dir dir{"candor-check"};
  database db;
  json::object doc;

  drafted() {
    auto path = dir.file("library.db");
    test::make_library_db(path);
    auto opened = database::open(path, SQLITE_OPEN_READONLY);
    BOOST_REQUIRE(opened.ok());
    db = std::move(*opened);
    auto made = draft_catalog(db, {});
    BOOST_REQUIRE(made.ok());
    doc = json::parse(made->json).as_object();
  }

  json::object& table(const std::string& name) {
    for (auto& t : doc.at("tables").as_array())
      if (t.at("name").as_string() == name)
        return t.as_object();
    BOOST_FAIL("no table " + name);
    throw;
  }

  std::string text() const {
    return draft_detail::catalog_json_text(doc);
  }
};

/// The 1-based line of the first occurrence of `needle` in `text`.
size_t line_at(const std::string& text, const std::string& needle) {
  auto at = text.find(needle);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, needle);
  return 1
         + static_cast<size_t>(std::count(
           text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

const catalog_finding* find(const std::vector<catalog_finding>& fs,
                            const std::string& part) {
  for (auto& f : fs)
    if (f.message.find(part) != std::string::npos)
      return &f;
  return nullptr;
}

std::string all(const std::vector<catalog_finding>& fs) {
  std::string out;
  for (auto& f : fs)
    out += format_finding("c.json", f) + "\n";
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_catalog_check)

BOOST_AUTO_TEST_CASE(a_fresh_draft_has_only_warnings_for_its_draft_metrics) {
  drafted d;
  auto text = d.text();
  auto fs = check_catalog(text, d.db);
  BOOST_CHECK_MESSAGE(
    std::none_of(fs.begin(), fs.end(), [](auto& f) { return f.error; }),
    all(fs));
  auto* draft = find(fs, "'loans_count' is a draft");
  BOOST_REQUIRE_MESSAGE(draft != nullptr, all(fs));
  BOOST_CHECK(!draft->error);
  BOOST_CHECK_EQUAL(draft->line, line_at(text, "\"name\": \"loans_count\""));
  // Reviewed metrics lose the warning.
  for (auto& m : d.doc.at("metrics").as_array())
    m.as_object().erase("draft");
  BOOST_CHECK_MESSAGE(check_catalog(d.text(), d.db).empty(),
                      all(check_catalog(d.text(), d.db)));
}

BOOST_AUTO_TEST_CASE(unknown_columns_and_unlisted_ones_name_their_line) {
  drafted d;
  for (auto& c : d.table("books").at("columns").as_array())
    if (c.at("name").as_string() == "genre")
      c.as_object()["name"] = "genres";
  auto text = d.text();
  auto fs = check_catalog(text, d.db);
  auto* missing = find(fs, "books.genres");
  BOOST_REQUIRE_MESSAGE(missing != nullptr, all(fs));
  BOOST_CHECK(missing->error);
  BOOST_CHECK_EQUAL(missing->line, line_at(text, "\"name\": \"genres\""));
  BOOST_CHECK_MESSAGE(missing->path.find("tables[") == 0
                        && missing->path.find("].columns[")
                             != std::string::npos,
                      missing->path);
  // The database's genre column is neither allowed nor denied.
  BOOST_CHECK_MESSAGE(find(fs, "books.genre:") != nullptr, all(fs));
}

BOOST_AUTO_TEST_CASE(metrics_that_do_not_compile_or_read_restricted_columns) {
  drafted d;
  auto& ms = d.doc.at("metrics").as_array();
  ms.push_back(json::object{{"name", "broken"},
                            {"description", "x"},
                            {"sql", "SELECT SUM(nope) FROM loans"}});
  ms.push_back(
    json::object{{"name", "reader_mails"},
                 {"description", "x"},
                 {"sql", "SELECT COUNT(DISTINCT email) FROM members"}});
  ms.push_back(json::object{
    {"name", "sneaky"},
    {"description", "x"},
    {"sql", "SELECT COUNT(*) FROM loans l JOIN member_addresses a "
            "ON a.member_id = l.member_id WHERE a.iban LIKE 'NL%'"}});
  ms.push_back(json::object{
    {"name", "writer"}, {"description", "x"}, {"sql", "DELETE FROM loans"}});
  auto text = d.text();
  auto fs = check_catalog(text, d.db);
  auto* broken = find(fs, "'broken' does not compile");
  BOOST_REQUIRE_MESSAGE(broken != nullptr, all(fs));
  BOOST_CHECK(broken->message.find("no such column: nope")
              != std::string::npos);
  BOOST_CHECK_EQUAL(broken->line, line_at(text, "\"name\": \"broken\""));
  auto* mails = find(fs, "reads members.email, which the catalog restricts");
  BOOST_REQUIRE_MESSAGE(mails != nullptr, all(fs));
  BOOST_CHECK(mails->error);
  BOOST_CHECK_EQUAL(mails->line, line_at(text, "\"name\": \"reader_mails\""));
  auto* iban = find(fs, "reads member_addresses.iban");
  BOOST_REQUIRE_MESSAGE(iban != nullptr, all(fs));
  BOOST_CHECK_EQUAL(iban->line, line_at(text, "\"name\": \"sneaky\""));
  auto* writer = find(fs, "'writer' does not compile: not a read-only");
  BOOST_CHECK_MESSAGE(writer != nullptr, all(fs));
}

BOOST_AUTO_TEST_CASE(a_join_that_would_multiply_rows_does_not_hold) {
  drafted d;
  auto& sem = d.doc.at("semantic").as_object();
  std::string loans_alias;
  for (auto& g : sem.at("grains").as_array())
    if (g.at("name").as_string() == "loans")
      loans_alias = std::string{g.at("provides").at(0).as_string()};
  BOOST_REQUIRE(!loans_alias.empty());
  // Another loan of the same member: loans.member_id is not unique.
  sem.at("joins").as_array().push_back(
    json::object{{"alias", "again"},
                 {"needs", loans_alias},
                 {"sql", "JOIN loans again ON again.member_id = " + loans_alias
                           + ".member_id"}});
  auto text = d.text();
  auto fs = check_catalog(text, d.db);
  auto* fanout = find(fs, "loans.member_id is not unique");
  BOOST_REQUIRE_MESSAGE(fanout != nullptr, all(fs));
  BOOST_CHECK(fanout->error);
  BOOST_CHECK_EQUAL(fanout->line, line_at(text, "\"alias\": \"again\""));
  BOOST_CHECK(fanout->message.find("multiply rows") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_json_and_bad_fields_name_their_line) {
  drafted d;
  auto text = d.text();
  auto broken = text;
  auto at = broken.find("\"tables\"");
  broken.insert(at, "\"oops\" ");
  auto fs = check_catalog(broken, d.db);
  BOOST_REQUIRE_EQUAL(fs.size(), 1u);
  BOOST_CHECK(fs[0].message.find("not valid JSON") == 0);
  BOOST_CHECK_EQUAL(fs[0].line, line_at(broken, "\"oops\""));
  // An unknown field: catalog::parse names the path, the check its line.
  d.table("loans")["colour"] = "blue";
  auto odd = d.text();
  fs = check_catalog(odd, d.db);
  BOOST_REQUIRE_EQUAL(fs.size(), 1u);
  BOOST_CHECK_MESSAGE(fs[0].path.find("].colour") != std::string::npos,
                      fs[0].path);
  BOOST_CHECK_EQUAL(fs[0].line, line_at(odd, "\"colour\""));
  BOOST_CHECK_EQUAL(
    format_finding("c.json", fs[0])
      .rfind("c.json:" + std::to_string(fs[0].line) + ": error: ", 0),
    0u);
}

BOOST_AUTO_TEST_CASE(a_semantic_layer_error_names_its_line) {
  drafted d;
  d.doc.at("semantic").as_object()["defaults"]
    = json::object{{"amount", "no_such_metric"}, {"count_sold", "loans"}};
  auto text = d.text();
  auto fs = check_catalog(text, d.db);
  auto* e = find(fs, "unknown metric 'no_such_metric'");
  BOOST_REQUIRE_MESSAGE(e != nullptr, all(fs));
  BOOST_CHECK(e->error);
  BOOST_CHECK_EQUAL(e->path, "semantic.defaults");
  BOOST_CHECK_EQUAL(e->line, line_at(text, "\"defaults\""));
}

BOOST_AUTO_TEST_SUITE_END()
