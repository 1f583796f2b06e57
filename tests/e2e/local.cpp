// End-to-end: the real `candor` with the local provider (the default with
// no endpoint) answers questions nobody scripted, with no fixture and no
// network, and says how it answered.

#include <filesystem>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "domain/demo_questions.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/openapi.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

const std::map<std::string, std::string> local_env{
  {"CANDOR_LLM_PROVIDER", "local"}};

json::object ask_cli(const std::string& dir, const std::string& question) {
  if (!std::filesystem::exists(dir + "/sales.db"))
    provide_sales_db(dir);
  auto r
    = run_candor({"ask", question, "--json", "--data-dir", dir}, local_env);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  boost::system::error_code ec;
  auto v = json::parse(r.out, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), r.out);
  return v.as_object();
}

std::string str(const json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : std::string{};
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_local)

BOOST_AUTO_TEST_CASE(an_unscripted_documents_question_is_answered_offline) {
  temp_dir dir{"candor-local"};
  auto data = dir.file("var");
  // Not a golden question and without a fixture: the scripted provider
  // would answer 422 fixture_missing.
  auto o = ask_cli(data, "How much does a basic service cost in the workshop?");
  BOOST_CHECK_EQUAL(str(o.at("status")), "answered");
  BOOST_CHECK_EQUAL(str(o.at("route")), "docs");
  BOOST_CHECK(str(o.at("routeReason")).find("documents") != std::string::npos);
  auto answer = str(o.at("answer"));
  BOOST_CHECK(answer.find("\xE2\x82\xAC"
                          "79")
              != std::string::npos); // €79
  BOOST_CHECK(answer.find("no language model") != std::string::npos);
  // The quoted passage is cited, and the citation is a retrieved chunk.
  auto& cites = o.at("citations").as_array();
  BOOST_REQUIRE_GE(cites.size(), 1u);
  BOOST_CHECK(str(cites[0].at("chunkId")).find("workshop-services")
              != std::string::npos);
  auto& meta = o.at("meta").as_object();
  BOOST_CHECK_EQUAL(str(meta.at("provider")), "local");
  BOOST_CHECK_EQUAL(meta.at("llmCalls").as_int64(), 2);
  BOOST_CHECK_EQUAL(meta.at("tokens").at("input").as_int64(), 0);
  BOOST_CHECK_EQUAL(meta.at("tokens").at("output").as_int64(), 0);
  BOOST_CHECK_EQUAL(meta.at("costUsd").to_number<double>(), 0.0);
}

// Data questions with no key: planned from the catalog, run through the
// same validation and sandbox, worded from the rows; a period outside the
// data is refused naming the period the data cover.
BOOST_AUTO_TEST_CASE(data_questions_are_planned_from_the_catalog) {
  temp_dir dir{"candor-local"};
  auto data = dir.file("var");
  auto o = ask_cli(data,
                   "How many e-bikes did we sell in Belgium per quarter in "
                   "2024?");
  BOOST_CHECK_EQUAL(str(o.at("route")), "data");
  BOOST_REQUIRE_EQUAL(str(o.at("status")), "answered");
  auto& sql = o.at("sql").as_object();
  BOOST_CHECK(!str(sql.at("plan")).empty());
  auto query = str(sql.at("query"));
  BOOST_CHECK(query.find("'BE'") != std::string::npos);
  BOOST_CHECK(query.find("'volt_city', 'volt_trek'") != std::string::npos);
  auto& rows = sql.at("rows").as_array();
  BOOST_REQUIRE_EQUAL(rows.size(), 4u); // four quarters
  BOOST_CHECK_EQUAL(str(rows[0].as_array()[0]), "2024-Q1");
  // The answer quotes the rows' numbers.
  auto answer = str(o.at("answer"));
  auto q1 = rows[0].as_array()[1].as_int64();
  BOOST_CHECK(answer.find("2024-Q1 " + std::to_string(q1)) != std::string::npos);
  BOOST_CHECK(answer.find("no language model") != std::string::npos);
  auto& meta = o.at("meta").as_object();
  BOOST_CHECK_EQUAL(str(meta.at("provider")), "local");
  BOOST_CHECK_EQUAL(meta.at("tokens").at("input").as_int64(), 0);

  o = ask_cli(data, "What was our revenue in 2023?");
  BOOST_CHECK_EQUAL(str(o.at("route")), "data");
  BOOST_CHECK_EQUAL(str(o.at("status")), "refused");
  BOOST_CHECK(str(o.at("answer")).find("2024-01-01 to 2025-12-31")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(off_topic_questions_are_refused_with_reasons) {
  temp_dir dir{"candor-local"};
  auto data = dir.file("var");
  auto o = ask_cli(data, "What is the capital of Australia?");
  BOOST_CHECK_EQUAL(str(o.at("route")), "out_of_scope");
  BOOST_CHECK_EQUAL(str(o.at("status")), "refused");
}

BOOST_AUTO_TEST_CASE(a_sanitized_passage_is_quoted_without_what_was_removed) {
  // The partner bulletin's promotions note carries an embedded instruction
  // with a canary code; the sanitizer removed that sentence at ingestion.
  temp_dir dir{"candor-local"};
  auto o = ask_cli(dir.file("var"),
                   "Pricing and promotions note for partner dealers");
  auto text = json::serialize(o);
  BOOST_CHECK(text.find("TAILWIND") == std::string::npos);
  // The marker may show in a citation's snippet, never in the quote.
  BOOST_CHECK(str(o.at("answer")).find("passage removed") == std::string::npos);
  BOOST_CHECK_EQUAL(str(o.at("status")), "answered");
  BOOST_CHECK(str(o.at("answer")).find("official spring offers")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_server_reports_the_local_provider) {
  server_process s{local_env};
  BOOST_REQUIRE_MESSAGE(s.start(std::chrono::seconds{60}), s.log());
  http_client c{s.port()};
  auto r = c.request("GET", "/health");
  BOOST_REQUIRE(r);
  boost::system::error_code ec;
  auto h = json::parse(r->body, ec).as_object();
  BOOST_CHECK_EQUAL(str(h.at("provider")), "local");
  BOOST_CHECK_EQUAL(str(h.at("models").as_array().at(0)), "candor-local");
  BOOST_CHECK(!h.at("costIsFictional").as_bool());
  r = c.ask(json::serialize(json::object{
    {"question", "How long do I have to send back a bike I bought online?"}}));
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200); // not 422 fixture_missing
}

BOOST_AUTO_TEST_CASE(the_demo_samples_are_answered_as_labelled) {
  server_process s{local_env};
  BOOST_REQUIRE_MESSAGE(s.start(std::chrono::seconds{60}), s.log());
  http_client c{s.port()};
  auto r = c.request("GET", "/demo/questions");
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(r->status, 200);
  openapi_spec spec{
    load_yaml_as_json(std::string{CANDOR_SOURCE_DIR} + "/docs/openapi.yaml")};
  BOOST_CHECK(spec.check("GET", "/demo/questions", *r).empty());
  boost::system::error_code ec;
  auto d = json::parse(r->body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && d.is_object(), r->body);
  BOOST_CHECK_EQUAL(str(d.at("provider")), "local");
  int docs = 0, refusals = 0, out_of_scope = 0;
  for (auto& item : d.at("questions").as_array()) {
    auto q = str(item.at("question"));
    auto kind = str(item.at("kind"));
    BOOST_TEST_CONTEXT(q) {
      auto a = c.ask(json::serialize(json::object{{"question", q}}));
      BOOST_REQUIRE(a);
      BOOST_CHECK_EQUAL(a->status, 200);
      auto o = json::parse(a->body, ec);
      BOOST_REQUIRE_MESSAGE(!ec && o.is_object(), a->body);
      BOOST_CHECK_EQUAL(str(o.at("meta").at("provider")), "local");
      if (kind == "docs") {
        ++docs;
        BOOST_CHECK_EQUAL(str(o.at("status")), "answered");
        BOOST_CHECK_EQUAL(str(o.at("route")), "docs");
        auto answer = str(o.at("answer"));
        BOOST_CHECK(answer.find("no language model") != std::string::npos);
        BOOST_CHECK_GE(o.at("citations").as_array().size(), 1u);
        // The quoted sentence is the one that answers (conf/ says which).
        for (auto& sample : domain::builtin_demo_questions().local)
          if (sample.question == q)
            BOOST_CHECK_MESSAGE(answer.find(sample.answer_has)
                                  != std::string::npos,
                                answer << " lacks " << sample.answer_has);
      } else if (kind == "refusal") {
        ++refusals;
        BOOST_CHECK_EQUAL(str(o.at("status")), "refused");
        BOOST_CHECK_EQUAL(str(o.at("route")), "docs");
        BOOST_CHECK(o.at("citations").as_array().empty());
      } else {
        ++out_of_scope;
        BOOST_CHECK_EQUAL(kind, "out_of_scope");
        BOOST_CHECK_EQUAL(str(o.at("status")), "refused");
        BOOST_CHECK_EQUAL(str(o.at("route")), "out_of_scope");
      }
    }
  }
  BOOST_CHECK_GE(docs, 8);
  BOOST_CHECK_GE(refusals, 1);
  BOOST_CHECK_GE(out_of_scope, 1);
}

BOOST_AUTO_TEST_SUITE_END()
