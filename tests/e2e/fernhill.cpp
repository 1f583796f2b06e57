// The second sample world (eval/worlds/fernhill): the same every time,
// its kept catalog is the draft plus a short hand edit, and its PDF and
// HTML documents answer with the page or section cited. Its labelled sets
// are measured by the eval_fernhill_gate CTest entry.

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor::test;
namespace json = boost::json;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string kept_catalog() {
  return std::string{CANDOR_SOURCE_DIR} + "/eval/worlds/fernhill/catalog.json";
}

/// "table.column" of every allowed (or denied) column.
std::set<std::string> columns(const json::object& cat, const char* which) {
  std::set<std::string> out;
  for (auto& t : cat.at("tables").as_array())
    if (auto* cs = t.as_object().if_contains(which))
      for (auto& c : cs->as_array())
        out.insert(std::string{t.at("name").as_string()} + "."
                   + std::string{c.at("name").as_string()});
  return out;
}

struct world {
  temp_dir dir{"candor-fernhill"};
  world() {
    auto r = run_candor_eval({"sample", "--out", dir.file("w")});
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_fernhill)

BOOST_AUTO_TEST_CASE(the_sample_is_the_same_every_time) {
  world a;
  auto r = run_candor_eval({"sample", "--out", a.dir.file("again")});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_CHECK(r.out.find("13674 rows") != std::string::npos);
  BOOST_CHECK(slurp(a.dir.file("w/fernhill.db"))
              == slurp(a.dir.file("again/fernhill.db")));
  for (auto* doc : {"fees-and-payment.pdf", "vaccinations.pdf",
                    "clinics-and-opening-hours.html", "dental-care.html"})
    BOOST_CHECK_MESSAGE(std::filesystem::exists(a.dir.file("w/docs/") + doc),
                        doc);
}

BOOST_AUTO_TEST_CASE(the_kept_catalog_is_the_draft_and_a_short_edit) {
  world w;
  auto draft
    = run_candor({"catalog", "draft", "--db", w.dir.file("w/fernhill.db")});
  BOOST_REQUIRE_EQUAL(draft.exit_code, 0);
  auto drafted = json::parse(draft.out).as_object();
  auto kept = json::parse(slurp(kept_catalog())).as_object();
  // The draft restricted the owners' and vets' personal columns, and, on
  // the safe side, the pets' birth year: the edit allows that one only.
  auto denied = columns(drafted, "denied_columns");
  BOOST_CHECK_EQUAL(denied.size(), 5u);
  for (auto* c : {"owners.full_name", "owners.email", "owners.phone",
                  "vets.vet_name", "pets.birth_year"})
    BOOST_CHECK_MESSAGE(denied.count(c) == 1, c);
  denied.erase("pets.birth_year");
  BOOST_CHECK(columns(kept, "denied_columns") == denied);
  auto allowed = columns(drafted, "columns");
  allowed.insert("pets.birth_year");
  BOOST_CHECK(columns(kept, "columns") == allowed);
  // The draft's joins are kept (one, clinics from vets, dropped: no grain
  // starts at vets any more).
  std::set<std::string> draft_joins, kept_joins;
  for (auto& j : drafted.at("semantic").at("joins").as_array())
    draft_joins.insert(std::string{j.at("sql").as_string()});
  for (auto& j : kept.at("semantic").at("joins").as_array())
    kept_joins.insert(std::string{j.at("sql").as_string()});
  for (auto& j : kept_joins)
    BOOST_CHECK_MESSAGE(draft_joins.count(j) == 1, j);
  // It fits the database.
  auto check
    = run_candor({"catalog", "check", "--db", w.dir.file("w/fernhill.db"),
                  "--catalog", kept_catalog()});
  BOOST_CHECK_MESSAGE(check.exit_code == 0, check.out);
  BOOST_CHECK(check.out.find(": 0 errors, 0 warnings") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(its_pdf_and_html_documents_answer_with_citations) {
  world w;
  auto ing = run_candor(
    {"ingest", "--kb", w.dir.file("w/docs"), "--data-dir", w.dir.file("var")});
  BOOST_REQUIRE_MESSAGE(ing.exit_code == 0, ing.err);
  BOOST_CHECK(ing.out.find("documents: 8 created") != std::string::npos);
  auto ask = [&](const std::string& q) {
    auto r
      = run_candor({"ask", q, "--json", "--data-dir", w.dir.file("var"), "--db",
                    w.dir.file("w/fernhill.db"), "--catalog", kept_catalog()},
                   {{"CANDOR_LLM_PROVIDER", "local"}});
    BOOST_REQUIRE_MESSAGE(!r.out.empty(), r.err);
    return json::parse(r.out).as_object();
  };
  auto pdf = ask("Which insurers do you bill directly?");
  BOOST_CHECK_EQUAL(pdf.at("status").as_string(), "answered");
  BOOST_CHECK(json::serialize(pdf.at("answer")).find("PawSure")
              != std::string::npos);
  BOOST_REQUIRE(!pdf.at("citations").as_array().empty());
  BOOST_CHECK(json::serialize(pdf.at("citations")).find("(p. 1)")
              != std::string::npos);
  auto html = ask("What are the opening hours on weekdays?");
  BOOST_CHECK_EQUAL(html.at("status").as_string(), "answered");
  BOOST_CHECK(json::serialize(html.at("answer")).find("08:00 to 19:00")
              != std::string::npos);
  auto data = ask("How many appointments were there in 2025?");
  BOOST_CHECK_EQUAL(data.at("route").as_string(), "data");
  BOOST_CHECK_EQUAL(data.at("status").as_string(), "answered");
  auto personal = ask("What is the email address of the owner of Bello?");
  BOOST_CHECK_NE(personal.at("status").as_string(), "answered");
}

BOOST_AUTO_TEST_SUITE_END()
