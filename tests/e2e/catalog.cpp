// End-to-end tests of `candor catalog draft|check` on a database shaped
// unlike the sales one: from the database alone to an answer from the local
// provider, line-precise errors, and clear usage errors.

#include <filesystem>
#include <fstream>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/library_db.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor::test;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream{path, std::ios::binary} << text;
}

boost::json::object ask(const std::string& q, const std::string& dir) {
  auto r = run_candor({"ask", q, "--json", "--data-dir", dir + "/var", "--db",
                       dir + "/library.db", "--catalog", dir + "/catalog.json"},
                      {{"CANDOR_LLM_PROVIDER", "local"}});
  BOOST_REQUIRE_MESSAGE(!r.out.empty(), r.err);
  return boost::json::parse(r.out).as_object();
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_catalog)

BOOST_AUTO_TEST_CASE(from_a_database_alone_to_a_first_answer) {
  temp_dir dir{"candor-catalog"};
  auto in_2025 = make_library_db(dir.file("library.db"));
  auto draft = run_candor({"catalog", "draft", "--db", dir.file("library.db")});
  BOOST_REQUIRE_MESSAGE(draft.exit_code == 0, draft.err);
  BOOST_CHECK(has(draft.err, "restricted members.email: personal data: "
                             "e-mail addresses"));
  BOOST_CHECK(has(draft.err, "restricted table member_addresses"));
  BOOST_CHECK(boost::json::parse(draft.out).is_object());
  write_file(dir.file("catalog.json"), draft.out);
  auto check = run_candor({"catalog", "check", "--db", dir.file("library.db"),
                           "--catalog", dir.file("catalog.json")});
  BOOST_CHECK_MESSAGE(check.exit_code == 0, check.out << check.err);
  BOOST_CHECK(has(check.out, ": 0 errors, "));
  BOOST_CHECK(has(check.out, "warning: metrics["));
  // The local provider plans from the drafted layer: the exact count.
  auto o = ask("How many loans were there in 2025?", dir.path.string());
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  auto answer = std::string{o.at("answer").as_string()};
  BOOST_CHECK_MESSAGE(has(answer, std::to_string(in_2025)), answer);
  // Grouped by a value list it drafted.
  o = ask("How many loans per genre in 2024?", dir.path.string());
  BOOST_CHECK_EQUAL(o.at("status").as_string(), "answered");
  BOOST_CHECK(has(std::string{o.at("answer").as_string()}, "fantasy"));
  // What it restricted is never answered.
  o = ask("List the email of each member", dir.path.string());
  BOOST_CHECK_NE(o.at("status").as_string(), "answered");
  BOOST_CHECK(!has(boost::json::serialize(o), "@example.org"));
}

BOOST_AUTO_TEST_CASE(check_prints_each_problem_with_its_line_and_fails) {
  temp_dir dir{"candor-catalog"};
  make_library_db(dir.file("library.db"));
  auto draft = run_candor({"catalog", "draft", "--db", dir.file("library.db")});
  BOOST_REQUIRE(draft.exit_code == 0);
  auto text = draft.out;
  auto at = text.find("\"name\": \"genre\"");
  BOOST_REQUIRE(at != std::string::npos);
  text.replace(at, 15, "\"name\": \"genus\"");
  auto line
    = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
  write_file(dir.file("catalog.json"), text);
  auto r = run_candor({"catalog", "check", "--db", dir.file("library.db"),
                       "--catalog", dir.file("catalog.json")});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(has(r.out, dir.file("catalog.json") + ":"
                                   + std::to_string(line) + ": error: "),
                      r.out);
  BOOST_CHECK(has(r.out, "books.genus"));
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_named) {
  temp_dir dir{"candor-catalog"};
  auto r = run_candor({"catalog", "draft"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "needs --db FILE"));
  r = run_candor({"catalog", "frob", "--db", "x"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "needs draft or check"));
  r = run_candor({"catalog", "draft", "--db", dir.file("none.db")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "none.db: no such file"));
  write_file(dir.file("notes.db"), "these are notes, not a database\n");
  r = run_candor({"catalog", "draft", "--db", dir.file("notes.db")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "not a SQLite database"));
  make_library_db(dir.file("library.db"));
  r = run_candor({"catalog", "check", "--db", dir.file("library.db")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "needs --catalog FILE"));
  r = run_candor({"catalog", "check", "--db", dir.file("library.db"),
                  "--catalog", dir.file("missing.json")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "missing.json: cannot read it"));
  r = run_candor(
    {"catalog", "draft", "--db", dir.file("library.db"), "--max-values", "0"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "--max-values must be a number from 1 to 200"));
}

BOOST_AUTO_TEST_SUITE_END()
