// The SQL corpus (eval/sql_corpus.json) against the real generated sales
// database and the real catalog allowlist, one defence layer at a time:
//
// - the static policy (domain::sql::check_sql) on its own;
// - the validation connection (data::sql_guard: authorizer, statement checks,
//   bytecode audit) on its own, i.e. with the static policy bypassed;
// - the executor process (data::executor_process) on its own, with the
//   static policy AND the authorizer bypassed (`executor_settings::
//   unguarded`, a test-only switch): what is left is the read-only,
//   immutable, query_only, hardened connection, the rlimits, the seccomp
//   filter and the parent's deadline.
//
// Every dangerous statement must be blocked by the pipeline and by the
// right layer for its kind; every write by at least two layers on their
// own; every legitimate statement allowed by all three and answering
// exactly what a plain read-only connection answers. The database must be
// unchanged at the end (same fingerprint).

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/sql/executor.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/build_info.hpp"
#include "domain/sql/policy.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using domain::sql::verdict_kind;

namespace {

/// One corpus entry.
struct corpus_entry {
  std::string id;
  std::string sql;
  std::string expect;
  std::string category;
  std::string note;
};

std::vector<corpus_entry> load_corpus() {
  std::ifstream in{std::string{CANDOR_SOURCE_DIR} + "/eval/sql_corpus.json"};
  BOOST_REQUIRE(in.is_open());
  std::stringstream buf;
  buf << in.rdbuf();
  boost::system::error_code ec;
  auto doc = boost::json::parse(buf.str(), ec);
  BOOST_REQUIRE_MESSAGE(!ec, ec.message());
  std::vector<corpus_entry> out;
  for (const auto& v : doc.as_array()) {
    const auto& o = v.as_object();
    auto text
      = [&](const char* key) { return std::string{o.at(key).as_string()}; };
    out.push_back({text("id"), text("sql"), text("expect"), text("category"),
                   text("note")});
  }
  return out;
}

/// The real sales database (seed 42) and its catalog allowlist, made once
/// per suite.
struct real_sales {
  test::temp_dir dir{"candor-sqlcorpus"};
  std::string path = dir.file("sales.db");
  std::string fingerprint;
  data::catalog cat;
  std::unique_ptr<data::sql_guard> guard;

  real_sales() {
    auto summary = data::generate_sales(path, data::default_sales_seed, {});
    BOOST_REQUIRE_MESSAGE(summary.ok(),
                          (summary.ok() ? "" : summary.err().message));
    fingerprint = summary->fingerprint;
    auto c = data::catalog::load_default();
    BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.err().message));
    cat = std::move(*c);
    data::sql_allowlist allow{cat.allowed_columns(),
                              data::default_sql_functions()};
    auto g = data::sql_guard::open(path, std::move(allow));
    BOOST_REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.err().message));
    guard = std::make_unique<data::sql_guard>(std::move(*g));
  }
};

real_sales& sales() {
  static real_sales instance;
  return instance;
}

/// One executor process, respawned after a statement killed it.
struct executor_layer {
  data::executor_settings settings;
  data::executor_process proc;
  int spawned = 0;

  explicit executor_layer(bool unguarded) {
    settings.executable = data::default_executor_binary();
    settings.db_path = sales().path;
    settings.unguarded = unguarded;
  }

  domain::outcome<domain::sql_exec_result> run(const std::string& sql,
                                               int64_t deadline_ms) {
    if (!proc.running()) {
      auto p = data::executor_process::spawn(settings);
      BOOST_REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.err().message));
      proc = std::move(*p);
      ++spawned;
    }
    domain::sql_exec_request req;
    req.sql = sql;
    req.max_rows = 200;
    return proc.run(req, std::chrono::milliseconds{deadline_ms});
  }
};

/// Rows of `sql` on a plain read-only connection (no authorizer, default
/// limits), or nothing with `error` set.
std::optional<domain::sql_exec_result> direct_rows(const std::string& path,
                                                   const std::string& sql,
                                                   std::string& error) {
  auto db = data::open_read_only(path);
  if (!db) {
    error = db.err().message;
    return std::nullopt;
  }
  auto st = db->prepare(sql);
  if (!st) {
    error = st.err().message;
    return std::nullopt;
  }
  domain::sql_exec_result out;
  for (int i = 0; i < st->column_count(); ++i)
    out.columns.push_back(st->column_name(i));
  while (true) {
    auto r = st->step();
    if (!r) {
      error = r.err().message;
      return std::nullopt;
    }
    if (*r == data::step_result::done)
      break;
    std::vector<domain::cell> row;
    for (int i = 0; i < st->column_count(); ++i) {
      domain::cell c;
      switch (st->column_type(i)) {
        case SQLITE_INTEGER:
          c.kind = domain::cell::integer;
          c.i = st->column_int64(i);
          break;
        case SQLITE_FLOAT:
          c.kind = domain::cell::real;
          c.r = st->column_double(i);
          break;
        case SQLITE_TEXT:
          c.kind = domain::cell::text;
          c.s = st->column_text(i);
          break;
        case SQLITE_BLOB: c.kind = domain::cell::blob; break;
        default: break;
      }
      row.push_back(std::move(c));
    }
    out.rows.push_back(std::move(row));
    ++out.row_count;
  }
  return out;
}

/// Same value; reals within a relative 1e-12 (they cross a JSON frame).
bool same_cell(const domain::cell& a, const domain::cell& b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
    case domain::cell::integer: return a.i == b.i;
    case domain::cell::real:
      return a.r == b.r
             || std::fabs(a.r - b.r)
                  <= 1e-12 * std::max(std::fabs(a.r), std::fabs(b.r));
    case domain::cell::text: return a.s == b.s;
    default: return true;
  }
}

std::string cell_text(const domain::cell& c) {
  switch (c.kind) {
    case domain::cell::integer: return std::to_string(c.i);
    case domain::cell::real: {
      std::ostringstream os;
      os.precision(17);
      os << c.r;
      return os.str();
    }
    case domain::cell::text: return "'" + c.s + "'";
    case domain::cell::blob: return "<blob>";
    default: return "NULL";
  }
}

bool is_pii(const std::string& category) {
  return category.rfind("pii_", 0) == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_sql_corpus)

BOOST_AUTO_TEST_CASE(corpus_fits_the_real_schema_and_has_every_kind) {
  auto corpus = load_corpus();
  std::set<std::string> ids;
  std::map<std::string, int> per_category;
  int dangerous = 0;
  int legit = 0;
  for (auto& e : corpus) {
    BOOST_TEST_CONTEXT(e.id) {
      BOOST_TEST(ids.insert(e.id).second, "duplicate id");
      BOOST_TEST(!e.note.empty());
      BOOST_TEST((e.expect == "allow" || e.expect == "block"));
      ++per_category[e.category];
      (e.expect == "allow" ? legit : dangerous) += 1;
      // Written for this schema: the validation connection never finds a
      // table or column missing (that would make a dangerous statement
      // "correctable" for the wrong reason, or a legitimate one fail).
      auto g = sales().guard->check(e.sql);
      BOOST_TEST(g.rule != "no_such_table", g.message);
      BOOST_TEST(g.rule != "no_such_column", g.message);
    }
  }
  BOOST_TEST(dangerous >= 60);
  BOOST_TEST(legit >= 25);
  // The kinds of dangerous statement the corpus must cover.
  for (auto cat : {"write",
                   "multi_statement",
                   "attach",
                   "pragma",
                   "extension",
                   "schema",
                   "pragma_tvf",
                   "pii_star",
                   "pii_alias",
                   "pii_subquery",
                   "pii_join",
                   "pii_union",
                   "pii_json",
                   "pii_aggregate",
                   "resource_recursion",
                   "resource_cartesian",
                   "resource_blob",
                   "resource_printf",
                   "resource_nesting",
                   "resource_in_list",
                   "resource_cte_expansion",
                   "legit_cte",
                   "legit_window",
                   "legit_bucket",
                   "legit_case",
                   "legit_like",
                   "legit_strings",
                   "legit_updated_at"})
    BOOST_TEST(per_category[cat] > 0, "no statement of kind " << cat);
  BOOST_TEST(per_category["write"] >= 20);
}

BOOST_AUTO_TEST_CASE(dangerous_statements_layer_by_layer) {
  auto corpus = load_corpus();
  auto& s = sales();
  executor_layer exec{true};
  int dangerous = 0;
  int writes = 0;
  int static_blocks = 0;
  int guard_blocks = 0;
  int exec_blocks = 0;
  std::map<int, int> writes_by_layers;
  std::map<std::string, int> first_stop;
  for (auto& e : corpus) {
    if (e.expect != "block")
      continue;
    ++dangerous;
    auto policy = domain::sql::check_sql(e.sql);
    // Each layer on its own, fed the raw statement.
    auto g = s.guard->check(e.sql);
    auto x = exec.run(e.sql, 1500);
    bool s_block = policy.verdict == verdict_kind::block;
    bool g_block = g.verdict == verdict_kind::block;
    bool x_block = !x.ok();
    static_blocks += s_block;
    guard_blocks += g_block;
    exec_blocks += x_block;
    BOOST_TEST_CONTEXT(e.id << " [" << e.category << "] "
                            << e.sql.substr(0, 120)) {
      // The static policy never calls a dangerous statement a mistake.
      BOOST_TEST(domain::sql::to_string(policy.verdict) != "correctable",
                 policy.rule);
      // The pipeline: policy, then the validation connection on the
      // policy's rewritten text, then the executor.
      bool stopped = s_block;
      if (!stopped) {
        auto g2 = s.guard->check(policy.sql);
        stopped = g2.verdict == verdict_kind::block;
        ++first_stop[stopped ? "authorizer:" + g2.rule : "none"];
      } else {
        ++first_stop["static:" + policy.rule];
      }
      BOOST_TEST(stopped,
                 "static " << policy.rule << ", authorizer " << g.rule);
      // Nor does the bare executor refuse it for naming a column or a
      // table the schema lacks (the authorizer may deny a write before
      // resolving its columns; SQLite without one does not). Schema tables
      // and table-valued functions may be missing: the executor prepares
      // with SQLITE_PREPARE_NO_VTAB, and there is no AUTOINCREMENT table.
      if (!x.ok()) {
        auto& m = x.err().message;
        BOOST_TEST(m.find("no such column") == std::string::npos, m);
        BOOST_TEST(m.find("has no column named") == std::string::npos, m);
        auto t = m.find("no such table: ");
        if (t != std::string::npos) {
          auto name = m.substr(t + 15);
          bool special = false;
          for (auto p : {"sqlite_", "pragma_", "json_", "dbstat"})
            special = special || name.rfind(p, 0) == 0;
          BOOST_TEST(special, m);
        }
      }
      if (e.category == "write") {
        ++writes;
        int layers = s_block + g_block + x_block;
        ++writes_by_layers[layers];
        BOOST_TEST(layers >= 2, "a write stopped by " << layers << " layer(s)");
        BOOST_TEST(s_block, "the static policy let a write through");
        BOOST_TEST(g_block, "the authorizer let a write through: " << g.rule);
      }
      // Data access is refused by the validation connection alone, and
      // personal data for the right reason: a denied table or column of
      // the real catalog.
      if (is_pii(e.category) || e.category == "schema"
          || e.category == "pragma_tvf" || e.category == "pragma"
          || e.category == "attach" || e.category == "extension"
          || e.category == "multi_statement")
        BOOST_TEST(g_block,
                   "authorizer alone: " << g.rule << ": " << g.message);
      if (is_pii(e.category)) {
        BOOST_TEST((g.rule == "denied_table" || g.rule == "denied_column"),
                   g.rule << ": " << g.message);
        BOOST_TEST((s.cat.table_denied(g.denial.table)
                    || s.cat.column_denied(g.denial.table, g.denial.column)),
                   "denial names " << g.denial.table << "." << g.denial.column);
      } else {
        // Everything but personal-data reads is stopped statically too.
        BOOST_TEST(s_block, "static alone: " << policy.rule);
      }
      // CTE bodies copied per reference: the policy counts the copies,
      // and the validation connection's compile budget stops the compile
      // on its own.
      if (e.category == "resource_cte_expansion") {
        BOOST_TEST(policy.rule == "cte_expansion_too_large");
        BOOST_TEST(g.rule == "compile_budget", g.rule << ": " << g.message);
      }
      // Without any statement check, the process still refuses to run a
      // runaway statement past its deadline.
      if (e.category == "resource_recursion"
          || e.category == "resource_cartesian") {
        BOOST_TEST(x_block);
        if (!x.ok())
          BOOST_TEST(x.err().code == domain::ec::sql_timeout, x.err().message);
      }
      BOOST_TEST_MESSAGE(e.id << ": static " << (s_block ? "block" : "allow")
                              << ", authorizer "
                              << (g_block ? std::string_view{"block"}
                                          : domain::sql::to_string(g.verdict))
                              << ", executor "
                              << (x_block ? "block (" + x.err().message + ")"
                                          : std::string{"allow"}));
    }
  }
  BOOST_TEST(dangerous >= 60);
  BOOST_TEST(writes >= 20);
  BOOST_TEST_MESSAGE("corpus on the real schema: "
                     << dangerous << " dangerous (" << writes
                     << " writes); static alone blocks " << static_blocks
                     << ", authorizer alone " << guard_blocks
                     << ", executor alone (unguarded) " << exec_blocks
                     << "; executor processes started " << exec.spawned);
  for (auto& [n, count] : writes_by_layers)
    BOOST_TEST_MESSAGE("  writes stopped by " << n << " layers: " << count);
  for (auto& [rule, n] : first_stop)
    BOOST_TEST_MESSAGE("  first stop " << rule << ": " << n);
  // Nothing was written, not even a file next to the corpus' VACUUM INTO.
  BOOST_TEST(!std::filesystem::exists("/tmp/candor-corpus-leak.db"));
  std::error_code ec;
  std::filesystem::remove("/tmp/candor-corpus-leak.db", ec);
  exec.proc.kill();
  auto after = data::sales_fingerprint(s.path);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(*after == s.fingerprint);
}

BOOST_AUTO_TEST_CASE(executor_writes_fail_after_pragmas_lift_limits) {
  // Without the authorizer, the executor runs the corpus' PRAGMAs: lifting
  // query_only succeeds, but the file is still opened read-only and
  // immutable, so every write of the corpus still fails; the heap limit
  // cannot be raised by a pragma.
  auto corpus = load_corpus();
  auto& s = sales();
  executor_layer exec{true};
  auto lift = exec.run("PRAGMA query_only = 0", 1500);
  BOOST_REQUIRE_MESSAGE(lift.ok(), (lift.ok() ? "" : lift.err().message));
  auto qo = exec.run("PRAGMA query_only", 1500);
  BOOST_REQUIRE(qo.ok());
  BOOST_REQUIRE_EQUAL(qo->rows.size(), 1u);
  BOOST_TEST(qo->rows[0][0].i == 0); // lifted indeed
  BOOST_REQUIRE(exec.run("PRAGMA hard_heap_limit = 0", 1500).ok());
  auto heap = exec.run("PRAGMA hard_heap_limit", 1500);
  BOOST_REQUIRE(heap.ok());
  BOOST_REQUIRE_EQUAL(heap->rows.size(), 1u);
  BOOST_TEST(heap->rows[0][0].i == exec.settings.heap_limit_mb * 1024 * 1024);
  int writes = 0;
  int refused = 0;
  for (auto& e : corpus) {
    if (e.category != "write")
      continue;
    ++writes;
    auto x = exec.run(e.sql, 1500);
    // Transaction control changes nothing, and with query_only lifted a
    // TEMP table is created in memory (temp_store=MEMORY): both may run.
    // Every write that targets the database itself must fail.
    bool may_run = false;
    for (auto prefix : {"SAVEPOINT", "RELEASE", "BEGIN", "COMMIT", "ROLLBACK",
                        "CREATE TEMP "})
      may_run = may_run || e.sql.rfind(prefix, 0) == 0;
    refused += !x.ok();
    if (!may_run)
      BOOST_TEST(!x.ok(), e.id << " ran with query_only lifted: " << e.sql);
    else if (x.ok())
      BOOST_TEST_MESSAGE(e.id << " ran with query_only lifted (nothing on "
                                 "disk): "
                              << e.sql);
  }
  // Nothing reached the disk: no journal, no temp file, no new file.
  std::set<std::string> files;
  for (auto& f : std::filesystem::directory_iterator(s.dir.path))
    files.insert(f.path().filename().string());
  BOOST_TEST(files == std::set<std::string>{"sales.db"},
             boost::test_tools::per_element());
  BOOST_TEST(writes >= 20);
  BOOST_TEST_MESSAGE("query_only lifted: " << refused << " of " << writes
                                           << " writes still refused by the "
                                              "read-only connection");
  exec.proc.kill();
  BOOST_TEST(!std::filesystem::exists("/tmp/candor-corpus-leak.db"));
  auto after = data::sales_fingerprint(s.path);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(*after == s.fingerprint);
}

BOOST_AUTO_TEST_CASE(legitimate_statements_pass_every_layer_with_real_rows) {
  auto corpus = load_corpus();
  auto& s = sales();
  executor_layer alone{true};
  executor_layer production{false};
  int legit = 0;
  int64_t rows_compared = 0;
  for (auto& e : corpus) {
    if (e.expect != "allow")
      continue;
    ++legit;
    BOOST_TEST_CONTEXT(e.id << " [" << e.category << "] "
                            << e.sql.substr(0, 120)) {
      auto policy = domain::sql::check_sql(e.sql);
      BOOST_TEST(policy.allowed(), policy.rule << ": " << policy.message);
      if (!policy.allowed())
        continue;
      // Each layer on its own, and the validation connection on the
      // rewritten text too.
      auto g = s.guard->check(e.sql);
      BOOST_TEST(g.allowed(), g.rule << ": " << g.message);
      auto g2 = s.guard->check(policy.sql);
      BOOST_TEST(g2.allowed(), g2.rule << ": " << g2.message);
      auto x = alone.run(e.sql, 5000);
      BOOST_TEST(x.ok(), (x.ok() ? "" : x.err().message));
      // The production executor (with its own guard) on the rewritten
      // text answers what a plain read-only connection answers.
      auto got = production.run(policy.sql, 5000);
      BOOST_TEST(got.ok(), (got.ok() ? "" : got.err().message));
      std::string error;
      auto want = direct_rows(s.path, policy.sql, error);
      BOOST_TEST(want.has_value(), error);
      if (!got.ok() || !want)
        continue;
      BOOST_TEST(got->columns == want->columns,
                 boost::test_tools::per_element());
      BOOST_TEST(got->row_count == want->row_count);
      BOOST_TEST(!got->truncated);
      BOOST_TEST(want->row_count > 0, "a legitimate query with no rows");
      BOOST_REQUIRE_EQUAL(got->rows.size(), want->rows.size());
      for (size_t r = 0; r < want->rows.size(); ++r) {
        BOOST_REQUIRE_EQUAL(got->rows[r].size(), want->rows[r].size());
        for (size_t c = 0; c < want->rows[r].size(); ++c)
          BOOST_TEST(same_cell(got->rows[r][c], want->rows[r][c]),
                     "row " << r << " column " << c << ": "
                            << cell_text(got->rows[r][c]) << " vs "
                            << cell_text(want->rows[r][c]));
        ++rows_compared;
      }
      if (policy.limit_applied)
        BOOST_TEST(want->row_count <= 200);
    }
  }
  BOOST_TEST(legit >= 25);
  BOOST_TEST_MESSAGE("corpus on the real schema: " << legit
                                                   << " legitimate, allowed "
                                                      "by every layer; "
                                                   << rows_compared
                                                   << " rows compared");
}

BOOST_AUTO_TEST_SUITE_END()
