// The data route's verdicts and answers on the PostgreSQL warehouse against
// SQLite's: every statement of eval/sql_corpus.json (with the documented
// dialect rewrites) gets the verdict it gets on SQLite, a write is stopped
// by several layers with the role's grants among them, and the planner's
// questions get the same answers.

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/build_info.hpp"
#include "eval/data_planner.hpp"
#include "eval/sql_guard_tool.hpp"
#include "tests/support/pg_warehouse.hpp"
#include "tests/support/process.hpp"

using namespace candor;
namespace json = boost::json;

namespace {

json::value read_json(const std::string& name) {
  std::ifstream in{std::string{domain::source_dir()} + "/eval/" + name};
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

/// The lines of `out` by id.
std::map<std::string, json::object> by_id(const std::string& out) {
  std::map<std::string, json::object> m;
  std::istringstream in{out};
  std::string line;
  while (std::getline(in, line)) {
    auto obj = json::parse(line).as_object();
    m[std::string(obj.at("id").as_string())] = obj;
  }
  return m;
}

/// The ids `candor-eval data` lists as misses, and its accuracy line.
std::pair<std::set<std::string>, std::string>
misses(const std::string& out) {
  std::set<std::string> ids;
  std::string figure;
  std::regex miss{R"(MISS (dq[0-9]+))"};
  for (auto it = std::sregex_iterator(out.begin(), out.end(), miss);
       it != std::sregex_iterator(); ++it)
    ids.insert((*it)[1]);
  auto at = out.find("dataExecAccuracy ");
  if (at != std::string::npos)
    figure = out.substr(at, out.find(" (", at) - at);
  return {ids, figure};
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_postgres_route)

BOOST_AUTO_TEST_CASE(the_sql_corpus_gets_the_same_verdicts_on_postgres) {
  const auto& w = test::shared_pg_warehouse();
  std::map<std::string, std::string> rewrites;
  auto doc = read_json("sql_corpus.postgres.json");
  for (auto& r : doc.as_object().at("rewrites").as_array()) {
    auto& o = r.as_object();
    BOOST_TEST(!o.at("why").as_string().empty());
    rewrites[std::string(o.at("id").as_string())]
      = std::string(o.at("sql").as_string());
  }
  auto corpus = read_json("sql_corpus.json").as_array();
  std::ostringstream lines;
  for (auto& v : corpus) {
    auto& o = v.as_object();
    auto id = std::string(o.at("id").as_string());
    auto sql = rewrites.count(id) ? rewrites[id]
                                  : std::string(o.at("sql").as_string());
    lines << json::serialize(json::object{{"id", id}, {"sql", sql}}) << "\n";
  }
  std::istringstream in{lines.str()};
  std::ostringstream out;
  eval::guard_tool_options opts;
  opts.postgres_dsn = w.reader_dsn;
  opts.deadline_ms = 1000; // the resource attacks end sooner
  auto summary = eval::run_sql_guard_tool_postgres(in, out, opts);
  BOOST_REQUIRE_MESSAGE(summary.ok(),
                        (summary.ok() ? "" : summary.err().message));
  auto got = by_id(out.str());
  BOOST_REQUIRE_EQUAL(got.size(), corpus.size());
  // The SQLite verdict of every statement is its `expect` (the
  // data_sql_corpus suite and eval/sql_guard_corpus.sh hold SQLite to it).
  size_t writes = 0;
  for (auto& v : corpus) {
    auto& o = v.as_object();
    auto id = std::string(o.at("id").as_string());
    auto& line = got.at(id);
    BOOST_TEST(line.at("verdict").as_string() == o.at("expect").as_string(),
               id << ": " << json::serialize(line));
    if (o.at("category").as_string() != "write")
      continue;
    // A write: the statement policy stops it; on the server, the role's
    // grants and the READ ONLY transaction each stop it again. What
    // PostgreSQL cannot run (SQLite's REPLACE INTO, VACUUM in a
    // transaction, ...) fails there anyway; only transaction control,
    // which changes nothing, runs read-write.
    auto& layers = line.at("layers").as_object();
    auto sql = std::string(o.at("sql").as_string());
    auto role = json::serialize(layers.at("role_privileges"));
    auto executor = json::serialize(layers.at("executor"));
    BOOST_TEST(layers.at("static_policy").at("verdict").as_string() == "block",
               id);
    if (role.find("\"role_privilege\"") != std::string::npos) {
      ++writes;
      // Refused outright by the grants: the READ ONLY transaction refuses
      // it too. (ANALYZE runs, but the grants make it skip every table.)
      if (role.find("postgres 42501") != std::string::npos)
        BOOST_TEST(executor.find("\"read_only_transaction\"")
                     != std::string::npos,
                   id << ": " << executor);
    } else if (layers.at("role_privileges").at("verdict").as_string()
               == "allow") {
      bool control = false;
      for (auto* word : {"ANALYZE", "COMMIT", "ROLLBACK", "SAVEPOINT"})
        control = control || sql.rfind(word, 0) == 0;
      BOOST_TEST(control, id << ": the role's grants let it run: " << role);
    }
  }
  // Every INSERT, UPDATE, DELETE and DDL statement of the corpus.
  BOOST_TEST(writes >= 25u);
  BOOST_TEST(summary->errors == 0);
}

BOOST_AUTO_TEST_CASE(the_planner_answers_the_same_on_postgres) {
  const auto& w = test::shared_pg_warehouse();
  eval::data_command cmd;
  cmd.split = "all";
  cmd.sales_db = w.sqlite_path;
  std::ostringstream sqlite_out, pg_out, err;
  eval::run_data_command(cmd, sqlite_out, err);
  cmd.backend = "postgres";
  cmd.postgres_dsn = w.reader_dsn;
  eval::run_data_command(cmd, pg_out, err);
  auto [sqlite_misses, sqlite_figure] = misses(sqlite_out.str());
  auto [pg_misses, pg_figure] = misses(pg_out.str());
  BOOST_REQUIRE_MESSAGE(!pg_figure.empty(), pg_out.str() << err.str());
  BOOST_TEST(pg_figure == sqlite_figure, pg_out.str());
  BOOST_TEST(pg_misses == sqlite_misses, pg_out.str());
}

BOOST_AUTO_TEST_CASE(the_attack_matrix_gate_passes_on_postgres) {
  const auto& w = test::shared_pg_warehouse();
  auto r = test::run_candor_eval(
    {"layers", "--backend", "postgres", "--db", w.sqlite_path},
    {{"CANDOR_SQL_POSTGRES_DSN", w.reader_dsn},
     {"CANDOR_SQL_DEADLINE_MS", "1000"}},
    std::chrono::seconds{300});
  BOOST_TEST(r.exit_code == 0, r.out << r.err);
  BOOST_TEST(r.out.find("gate: pass") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_SUITE_END()
