// End-to-end: the `candor` and `candor-eval` command lines refuses what it cannot honour, with
// the promised exit codes (0 ok, 1 runtime failure, 2 usage or
// configuration error) and messages that name the flag, key or file.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <sqlite3.h>

#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/sales_db.hpp"

using namespace candor::test;

namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream{path, std::ios::binary} << text;
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_cli)

BOOST_AUTO_TEST_CASE(extra_positional_arguments_are_usage_errors) {
  temp_dir dir{"candor-cli"};
  auto data = dir.file("data");
  for (std::string cmd : {"serve", "seed", "ingest", "ask", "sql-guard",
                          "calibrate", "ablation", "layers", "eval"}) {
    bool measuring
      = cmd != "serve" && cmd != "seed" && cmd != "ingest" && cmd != "ask";
    auto args = std::vector<std::string>{cmd, "extra", "--data-dir", data};
    if (cmd == "ask")
      args.insert(args.begin() + 1, "a question");
    auto r = measuring ? run_candor_eval(args) : run_candor(args);
    BOOST_TEST_CONTEXT(cmd) {
      BOOST_CHECK_EQUAL(r.exit_code, 2);
      BOOST_CHECK(has(r.err, "too many positional options"));
    }
  }
  // Nothing ran: seed would have created the database.
  BOOST_CHECK(!std::ifstream{data + "/sales.db"});
}

BOOST_AUTO_TEST_CASE(the_server_binary_has_no_measuring_commands) {
  // The measuring commands live in candor-eval; candor names them as
  // unknown and lists its own.
  for (auto cmd : {"eval", "layers", "calibrate", "ablation", "sql-guard"}) {
    auto r = run_candor({cmd});
    BOOST_TEST_CONTEXT(cmd) {
      BOOST_CHECK_EQUAL(r.exit_code, 2);
      BOOST_CHECK(has(r.err, std::string{"unknown command '"} + cmd + "'"));
      BOOST_CHECK(has(r.err, "candor-eval"));
    }
  }
  auto r = run_candor_eval({"serve"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "unknown command 'serve'"));
}

BOOST_AUTO_TEST_CASE(version_names_the_commit_and_the_linked_libraries) {
  for (bool eval : {false, true}) {
    auto r = eval ? run_candor_eval({"--version"}) : run_candor({"--version"});
    BOOST_TEST_CONTEXT(eval) {
      BOOST_CHECK_EQUAL(r.exit_code, 0);
      auto first = r.out.substr(0, r.out.find('\n'));
      BOOST_CHECK(has(first, eval ? "candor-eval 0." : "candor 0."));
      BOOST_CHECK(has(first, "(commit "));
      // Read from the running libraries, not the headers.
      BOOST_CHECK(has(r.out, std::string{"SQLite "} + sqlite3_libversion()));
      for (auto lib :
           {"CAF 0.17.6", "Boost 1.81.", "OpenSSL ", "ICU ", "libseccomp ",
            "tcmalloc ", "RE2 ", "libstemmer ", "prometheus-cpp "})
        BOOST_CHECK_MESSAGE(has(r.out, lib), lib);
    }
  }
}

BOOST_AUTO_TEST_CASE(seed_flag_has_the_range_of_sql_seed) {
  temp_dir dir{"candor-cli"};
  auto data = dir.file("data");
  for (auto seed : {"-1", "-9223372036854775809", "9223372036854775808"}) {
    auto r = run_candor({"seed", "--seed", seed, "--data-dir", data});
    BOOST_TEST_CONTEXT(seed) {
      BOOST_CHECK_EQUAL(r.exit_code, 2);
      BOOST_CHECK(has(r.err, "--seed"));
      BOOST_CHECK(has(r.err, "must be between 0 and 9223372036854775807"));
    }
  }
  BOOST_CHECK(!std::ifstream{data + "/sales.db"});
}

BOOST_AUTO_TEST_CASE(eval_limit_must_be_positive) {
  temp_dir dir{"candor-cli"};
  for (auto limit : {"-1", "0"}) {
    auto r = run_candor_eval({"eval", "--limit", limit, "--data-dir",
                              dir.file("data"), "--report-dir",
                              dir.file("reports")});
    BOOST_TEST_CONTEXT(limit) {
      BOOST_CHECK_EQUAL(r.exit_code, 2);
      BOOST_CHECK(has(r.err, "--limit must be at least 1"));
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_bind_and_empty_data_dir_stop_before_any_work) {
  temp_dir dir{"candor-cli"};
  auto data = dir.file("data");
  for (auto bind : {"999.1.1.1", "notanaddress", ""}) {
    auto r = run_candor(
      {"serve", "--port", "0", "--bind", bind, "--data-dir", data});
    BOOST_TEST_CONTEXT(bind) {
      BOOST_CHECK_EQUAL(r.exit_code, 2);
      BOOST_CHECK(has(r.err, "--bind"));
      BOOST_CHECK(has(r.err, "http.bind"));
    }
  }
  auto r = run_candor({"serve", "--port", "0", "--data-dir", data},
                      {{"CANDOR_HTTP_BIND", "bad"}});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "CANDOR_HTTP_BIND"));
  // Refused before the data directory (and sales.db) was touched.
  BOOST_CHECK(!std::ifstream{data + "/sales.db"});
  r = run_candor({"seed", "--data-dir", ""});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "--data-dir"));
  BOOST_CHECK(has(r.err, "dataDir"));
}

BOOST_AUTO_TEST_CASE(an_empty_sales_db_is_generated_again) {
  temp_dir dir{"candor-cli"};
  auto fp = [](const std::string& out) {
    auto at = out.find("fingerprint: ");
    return at == std::string::npos ? std::string{} : out.substr(at + 13, 64);
  };
  // seed over a 0-byte file generates it, as over an absent one.
  std::filesystem::create_directories(dir.file("a"));
  write_file(dir.file("a/sales.db"), "");
  auto r = run_candor({"seed", "--data-dir", dir.file("a")});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(has(r.err, "holds no tables; generating it"));
  BOOST_CHECK(!has(r.out, "total: 0 rows"));
  BOOST_CHECK(has(fp(r.out), "8c7f5838")); // seed 42
  // ask (like serve) too, instead of stopping on a catalog mismatch.
  std::filesystem::create_directories(dir.file("b"));
  write_file(dir.file("b/sales.db"), "");
  r = run_candor({"ask", "What is the weather in Lisbon tomorrow?",
                  "--data-dir", dir.file("b")});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK(has(r.err, "\"created\":true"));
  BOOST_CHECK_GT(std::filesystem::file_size(dir.file("b/sales.db")), 0u);
}

BOOST_AUTO_TEST_CASE(a_broken_sales_db_is_named_and_a_runtime_failure) {
  temp_dir dir{"candor-cli"};
  auto good = run_candor({"seed", "--data-dir", dir.file("good")});
  BOOST_REQUIRE_EQUAL(good.exit_code, 0);
  std::string bytes;
  {
    std::ifstream in{dir.file("good/sales.db"), std::ios::binary};
    bytes.assign(std::istreambuf_iterator<char>{in}, {});
  }
  BOOST_REQUIRE_GT(bytes.size(), 50000u);
  std::filesystem::create_directories(dir.file("cut"));
  write_file(dir.file("cut/sales.db"), bytes.substr(0, 50000));
  std::filesystem::create_directories(dir.file("text"));
  write_file(dir.file("text/sales.db"), std::string(4096, 'x'));
  for (auto sub : {"cut", "text"}) {
    auto db = dir.file(std::string{sub} + "/sales.db");
    BOOST_TEST_CONTEXT(sub) {
      auto r = run_candor({"ask", "What is the weather in Lisbon tomorrow?",
                           "--data-dir", dir.file(sub)});
      BOOST_CHECK_EQUAL(r.exit_code, 1);
      BOOST_CHECK_MESSAGE(has(r.err, "'" + db + "'"), r.err);
      r = run_candor({"seed", "--data-dir", dir.file(sub)});
      BOOST_CHECK_EQUAL(r.exit_code, 1);
      BOOST_CHECK_MESSAGE(
        has(r.err, "seed failed: sales database '" + db + "'"), r.err);
    }
  }
}

BOOST_AUTO_TEST_CASE(one_exit_code_rule_for_files) {
  // Rule: a path that is missing or of the wrong kind is usage (2); a file
  // that exists but cannot be read as what it should be is a runtime
  // failure (1); both name the path.
  temp_dir dir{"candor-cli"};
  auto text = dir.file("text.db");
  write_file(text, std::string(4096, 'x'));
  std::filesystem::create_directories(dir.file("data"));
  write_file(dir.file("data/sales.db"), std::string(4096, 'x'));
  auto r = run_candor_eval(
    {"sql-guard", "--no-executor", "--data-dir", dir.file("data")});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(has(r.err, dir.file("data/sales.db")), r.err);
  r = run_candor_eval({"sql-guard", "--no-executor", "--db", text});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(has(r.err, text), r.err);
  r = run_candor_eval({"layers", "--db", text, "--data-dir", dir.file("data")});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(has(r.err, text), r.err);
  r = run_candor_eval(
    {"sql-guard", "--no-executor", "--db", dir.file("none.db")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  r = run_candor_eval({"layers", "--db", dir.file("none.db")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  // A directory where a file belongs is the wrong kind: usage.
  r = run_candor_eval(
    {"sql-guard", "--no-executor", "--db", dir.path.string()});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "is not a file"));
  r = run_candor_eval({"layers", "--db", dir.path.string()});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "is not a file"));
  r = run_candor_eval({"calibrate", "--set", dir.file("none.json")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, dir.file("none.json")));
  for (std::string cmd : {"calibrate", "ablation", "ingest"}) {
    std::vector<std::string> args{cmd, "--kb", dir.file("none"), "--data-dir",
                                  dir.file("data2")};
    r = cmd == "ingest" ? run_candor(args) : run_candor_eval(args);
    BOOST_TEST_CONTEXT(cmd) {
      BOOST_CHECK_EQUAL(r.exit_code, 2);
      BOOST_CHECK(has(r.err, dir.file("none")));
    }
  }
}

BOOST_AUTO_TEST_CASE(sql_guard_creates_the_sales_db_like_serve) {
  // Without --db, sql-guard prepares <data-dir>/sales.db as serve and ask
  // do (it stopped with "no sales database"); an explicit --db that does
  // not exist is still usage, and says how to get one.
  temp_dir dir{"candor-cli"};
  auto r = run_candor_eval(
    {"sql-guard", "--no-executor", "--data-dir", dir.file("fresh")});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK_MESSAGE(
    has(r.err, "creating " + dir.file("fresh") + "/sales.db from sql.seed 42"),
    r.err);
  BOOST_CHECK_GT(std::filesystem::file_size(dir.file("fresh/sales.db")),
                 50000u);
  // The second run finds it and says nothing about creating it.
  r = run_candor_eval(
    {"sql-guard", "--no-executor", "--data-dir", dir.file("fresh")});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK_MESSAGE(!has(r.err, "creating"), r.err);
  r = run_candor_eval(
    {"sql-guard", "--no-executor", "--db", dir.file("none.db")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK_MESSAGE(has(r.err, "leave out --db"), r.err);
}

BOOST_AUTO_TEST_CASE(an_empty_kb_is_refused_not_indexed_or_calibrated) {
  temp_dir dir{"candor-cli"};
  std::filesystem::create_directories(dir.file("empty"));
  auto data = dir.file("data");
  auto first = run_candor({"ingest", "--data-dir", data});
  BOOST_REQUIRE_EQUAL(first.exit_code, 0);
  auto r
    = run_candor({"ingest", "--kb", dir.file("empty"), "--data-dir", data});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "no documents"));
  BOOST_CHECK(has(r.err, "refusing to empty the index"));
  // The index still holds every document.
  auto again = run_candor({"ingest", "--data-dir", data});
  BOOST_CHECK_EQUAL(again.exit_code, 0);
  BOOST_CHECK(has(again.out, "0 removed"));
  BOOST_CHECK(has(again.out, "30 unchanged"));
  r = run_candor_eval({"calibrate", "--kb", dir.file("empty")});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "no documents"));
  BOOST_CHECK(!has(r.out, "threshold"));
}

BOOST_AUTO_TEST_CASE(ask_json_prints_the_error_object_and_names_the_flag) {
  temp_dir dir{"candor-cli"};
  auto data = dir.file("data");
  auto parse = [](const std::string& out) {
    boost::system::error_code ec;
    auto v = boost::json::parse(out, ec);
    BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << out);
    return v.as_object();
  };
  provide_sales_db(data);
  auto r = run_candor({"ask", "Which bikes have the best reviews this spring?",
                       "--json", "--data-dir", data});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  auto o = parse(r.out);
  BOOST_CHECK_EQUAL(o.at("error").as_string(), "fixture_missing");
  BOOST_CHECK(o.at("message").is_string());
  BOOST_CHECK(!o.at("requestId").as_string().empty());
  // Usage errors speak of the argument and the flag, not of a body.
  r = run_candor({"ask", "hi", "--data-dir", data});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "the question must be at least 3 characters"));
  BOOST_CHECK(!has(r.err, "request body"));
  r = run_candor({"ask", "What is the warranty?", "--route", "foo", "--json",
                  "--data-dir", data});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "--route must be"));
  BOOST_CHECK(!has(r.err, "forceRoute"));
  o = parse(r.out);
  BOOST_CHECK_EQUAL(o.at("error").as_string(), "invalid_request");
  BOOST_CHECK(has(std::string{o.at("message").as_string()}, "--route"));
}

BOOST_AUTO_TEST_CASE(progress_off_a_terminal_is_full_lines) {
  temp_dir dir{"candor-cli"};
  // run_candor sends stderr to a file: no terminal.
  auto seed = run_candor({"seed", "--data-dir", dir.file("data")});
  BOOST_REQUIRE_EQUAL(seed.exit_code, 0);
  BOOST_CHECK(has(seed.err, "seed: 100% done\n"));
  BOOST_CHECK(!has(seed.err, "\r"));
  auto ingest = run_candor({"ingest", "--data-dir", dir.file("data")});
  BOOST_REQUIRE_EQUAL(ingest.exit_code, 0);
  BOOST_CHECK(has(ingest.err, "ingest: indexing"));
  BOOST_CHECK(!has(ingest.err, "\r"));
}

BOOST_AUTO_TEST_CASE(ablation_refuses_a_chunk_size_given_twice) {
  auto r = run_candor_eval({"ablation", "--chunk-sizes", "600", "600", "400"});
  BOOST_CHECK_EQUAL(r.exit_code, 2);
  BOOST_CHECK(has(r.err, "600 is given twice"));
  BOOST_CHECK(r.out.empty());
}

BOOST_AUTO_TEST_SUITE_END()
