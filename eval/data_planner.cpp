// `candor-eval data`: the data planner on eval/data_questions.v1.json.

#include "eval/data_planner.hpp"
#include "domain/records.hpp"
#include "eval/gate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <sqlite3.h>

#include <boost/json.hpp>

#include "data/local/planner.hpp"
#include "data/pg/session.hpp"
#include "data/sql/pg_policy.hpp"
#include "data/sales/catalog.hpp"
#include "data/sql/authorizer.hpp"
#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"
#include "domain/build_info.hpp"
#include "domain/sql/policy.hpp"

namespace candor::eval {

namespace {

namespace json = boost::json;

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

using row = std::vector<std::string>;

struct result_set {
  std::vector<std::string> columns;
  std::vector<row> rows;
};


/// Runs `sql` and keeps each cell as text (numbers with full precision).
domain::outcome<result_set> run(data::database& db, std::string_view sql) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return stmt.err();
  result_set out;
  for (int c = 0; c < stmt->column_count(); ++c)
    out.columns.push_back(stmt->column_name(c));
  for (;;) {
    auto r = stmt->step();
    if (!r)
      return r.err();
    if (*r == data::step_result::done)
      break;
    row cells;
    for (int c = 0; c < stmt->column_count(); ++c) {
      switch (stmt->column_type(c)) {
        case SQLITE_INTEGER:
          cells.push_back(std::to_string(stmt->column_int64(c)));
          break;
        case SQLITE_FLOAT: {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.10g", stmt->column_double(c));
          cells.emplace_back(buf);
          break;
        }
        case SQLITE_NULL: cells.emplace_back("NULL"); break;
        default: cells.push_back(stmt->column_text(c));
      }
    }
    out.rows.push_back(std::move(cells));
    if (out.rows.size() > 5000)
      break;
  }
  return out;
}

/// The same through the sandbox's PostgreSQL session (READ ONLY, with a
/// deadline), each cell as `run` writes SQLite's.
domain::outcome<result_set> run(data::pg::session& s, const std::string& sql) {
  domain::sql_exec_request req;
  req.sql = sql;
  req.max_rows = 5001;
  auto res = s.run(req, std::chrono::seconds{30});
  if (!res)
    return res.err();
  result_set out;
  out.columns = res->columns;
  for (auto& cells : res->rows) {
    row r;
    for (auto& c : cells) {
      switch (c.kind) {
        case domain::cell::integer: r.push_back(std::to_string(c.i)); break;
        case domain::cell::real: {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.10g", c.r);
          r.emplace_back(buf);
          break;
        }
        case domain::cell::null: r.emplace_back("NULL"); break;
        default: r.push_back(c.s);
      }
    }
    out.rows.push_back(std::move(r));
  }
  return out;
}

bool number(const std::string& s, double& v) {
  if (s.empty())
    return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

/// Cells equal: the same text (case-insensitive), or numbers within a
/// cent (or a millionth of their size).
bool same_cell(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (number(a, x) && number(b, y))
    return std::fabs(x - y)
           <= 0.006 + 1e-6 * std::max(std::fabs(x), std::fabs(y));
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i]))
        != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool same_row(const row& a, const row& b, const std::vector<size_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (!same_cell(a[perm[i]], b[i]))
      return false;
  return true;
}

/// The reference's rows equal the planned rows under one ordering of the
/// planned columns; as multisets unless `ordered`.
bool same_result(const result_set& got, const result_set& want, bool ordered) {
  if (got.columns.size() != want.columns.size()
      || got.rows.size() != want.rows.size())
    return false;
  std::vector<size_t> perm(got.columns.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = i;
  do {
    bool ok = true;
    if (ordered) {
      for (size_t r = 0; r < want.rows.size() && ok; ++r)
        ok = same_row(got.rows[r], want.rows[r], perm);
    } else {
      std::vector<bool> used(got.rows.size(), false);
      for (size_t r = 0; r < want.rows.size() && ok; ++r) {
        bool found = false;
        for (size_t g = 0; g < got.rows.size() && !found; ++g)
          if (!used[g] && same_row(got.rows[g], want.rows[r], perm))
            used[g] = found = true;
        ok = found;
      }
    }
    if (ok)
      return true;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return false;
}

std::string preview(const result_set& rs) {
  std::string out;
  for (size_t r = 0; r < std::min<size_t>(rs.rows.size(), 3); ++r) {
    out += r > 0 ? " | " : "";
    for (size_t c = 0; c < rs.rows[r].size(); ++c)
      out += (c > 0 ? ", " : "") + rs.rows[r][c];
  }
  if (rs.rows.size() > 3)
    out += " | ... (" + std::to_string(rs.rows.size()) + " rows)";
  return out;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return buf;
}

} // namespace

int run_data_command(const data_command& cmd, std::ostream& out,
                     std::ostream& err) {
  auto cat = cmd.catalog_path.empty() ? data::catalog::load_default()
                                      : data::catalog::load(cmd.catalog_path);
  if (!cat) {
    err << "candor: data: " << cat.err().message << "\n";
    return exit_usage;
  }
  // The values read from the database (product names), as the server
  // loads them at startup; a --question without a seeded database plans
  // without them.
  data::dimension_values values;
  if (auto loaded = data::load_dimension_values(*cat, cmd.sales_db))
    values = std::move(*loaded);
  else if (cmd.question.empty()) {
    err << "candor: data: " << loaded.err().message << "\n";
    return exit_usage;
  }
  bool on_pg = cmd.backend == "postgres";
  auto planner = data::planner::make(
    *cat, values, on_pg ? data::sql_dialect::postgres : data::sql_dialect::sqlite);
  if (!planner) {
    err << "candor: data: " << planner.err().message << "\n";
    return exit_usage;
  }
  if (!cmd.question.empty()) {
    auto r = planner->plan(cmd.question);
    out << "summary: " << r.p.summary() << "\n";
    for (auto& u : r.p.understood)
      out << "understood: " << u << "\n";
    for (auto& n : r.p.notes)
      out << "note: " << n << "\n";
    if (!r.planned()) {
      out << "refused (" << data::to_string(r.refusal) << "): " << r.message
          << "\n";
      return 0;
    }
    out << "sql: " << r.p.sql << "\n";
    return 0;
  }
  auto dir = std::string{domain::source_dir()} + "/eval/";
  auto set
    = read_json_object(cmd.questions_path.empty() ? dir + "data_questions.v1.json"
                                             : cmd.questions_path);
  auto bounds
    = read_json_object(cmd.thresholds_path.empty() ? dir + "local_thresholds.json"
                                              : cmd.thresholds_path);
  if (!set || !bounds) {
    err << "candor: data: " << (!set ? set.err() : bounds.err()).message
        << "\n";
    return exit_usage;
  }
  if (auto e = data::install_allocation_budget(); e) {
    err << "candor: data: " << e.message << "\n";
    return exit_failure;
  }
  auto db = data::database::open(cmd.sales_db, SQLITE_OPEN_READONLY);
  data::sql_allowlist allow{cat->allowed_columns(),
                            data::default_sql_functions()};
  auto guard = data::sql_guard::open(cmd.sales_db, std::move(allow), {}, true);
  if (!db || !guard) {
    err << "candor: data: cannot open " << cmd.sales_db << ": "
        << (!db ? db.err() : guard.err()).message << "\n";
    return exit_failure;
  }
  std::optional<data::pg::session> pg;
  std::optional<data::postgres_rules> pg_rules;
  if (on_pg) {
    auto opened = data::pg::session::open(cmd.postgres_dsn,
                                          std::chrono::seconds{10});
    if (!opened) {
      err << "candor: data: PostgreSQL warehouse: " << opened.err().message
          << "\n";
      return exit_failure;
    }
    pg.emplace(std::move(*opened));
    pg_rules = data::postgres_rules::from(*cat);
  }
  auto* qs = set->if_contains("questions");
  if (qs == nullptr || !qs->is_array()) {
    err << "candor: data: the set has no 'questions' array\n";
    return exit_usage;
  }
  size_t answered = 0, answerable = 0, refused = 0, refusable = 0;
  std::vector<std::string> misses;
  std::vector<double> plan_us;
  for (auto& v : qs->as_array()) {
    if (!v.is_object())
      continue;
    auto& q = v.as_object();
    auto split = std::string(q.at("split").as_string());
    if (cmd.split != "all" && split != cmd.split)
      continue;
    auto id = std::string(q.at("id").as_string());
    auto text = std::string(q.at("question").as_string());
    bool expect_answer = q.at("expect").as_string() == "answer";
    for (int i = 0; i < cmd.bench_rounds; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = planner->plan(text);
      auto t1 = std::chrono::steady_clock::now();
      plan_us.push_back(
        std::chrono::duration<double, std::micro>(t1 - t0).count());
      (void)r;
    }
    auto r = planner->plan(text);
    std::string line = id + " \"" + text + "\": ";
    if (!expect_answer) {
      ++refusable;
      if (!r.planned()) {
        ++refused;
        if (cmd.list_hits)
          out << "  ok   " << line << "refused (" << data::to_string(r.refusal)
              << ")\n";
      } else {
        misses.push_back("refusal expected ("
                         + std::string(q.at("kind").as_string())
                         + "), planned: " + r.p.sql);
        misses.back().insert(0, line);
      }
      continue;
    }
    ++answerable;
    if (!r.planned()) {
      misses.push_back(line + "refused ("
                       + std::string(data::to_string(r.refusal))
                       + "): " + domain::cut_utf8(r.message, 240));
      continue;
    }
    // What runs is what the policy lets through (it may add a LIMIT).
    auto policy = on_pg ? pg_rules->check(r.p.sql)
                        : domain::sql::check_sql(r.p.sql);
    if (!policy.allowed()) {
      misses.push_back(line + "the policy did not allow the planned SQL ("
                       + policy.rule + ": " + policy.message + "): " + r.p.sql);
      continue;
    }
    auto verdict = on_pg ? data::guard_result{} : guard->check(policy.sql);
    if (!verdict.allowed()) {
      misses.push_back(line + "the validation connection did not allow it ("
                       + verdict.rule + ": " + verdict.message
                       + "): " + r.p.sql);
      continue;
    }
    auto got = on_pg ? run(*pg, policy.sql) : run(*db, policy.sql);
    auto want = run(*db, std::string(q.at("sql").as_string()));
    if (!want) {
      misses.push_back(line + "the reference SQL fails: " + want.err().message);
      continue;
    }
    if (!got) {
      misses.push_back(line + "the planned SQL fails: " + got.err().message
                       + ": " + r.p.sql);
      continue;
    }
    bool ordered = q.if_contains("ordered") && q.at("ordered").is_bool()
                   && q.at("ordered").as_bool();
    if (same_result(*got, *want, ordered)) {
      ++answered;
      if (cmd.list_hits)
        out << "  ok   " << line << r.p.summary() << "\n";
    } else {
      misses.push_back(line + "different result (" + r.p.summary()
                       + ")\n      planned: " + r.p.sql + "\n      got:  "
                       + preview(*got) + "\n      want: " + preview(*want));
    }
  }
  auto ratio = [](size_t a, size_t b) {
    return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  double exec = ratio(answered, answerable);
  double refusal = ratio(refused, refusable);
  auto bound = [&](const char* key) {
    auto* b = bounds->if_contains(key);
    return b && b->is_object() && b->as_object().if_contains("min")
             ? b->as_object().at("min").to_number<double>()
             : 1.0;
  };
  auto gated = [&](const std::string& key) {
    return cmd.gated.empty()
           || std::find(cmd.gated.begin(), cmd.gated.end(), key)
                != cmd.gated.end();
  };
  for (auto& m : misses)
    out << "  MISS " << m << "\n";
  bool pass = true;
  for (auto [key, value, hits, total] :
       {std::tuple{"dataExecAccuracy", exec, answered, answerable},
        std::tuple{"dataRefusalRate", refusal, refused, refusable}}) {
    bool ok = value >= bound(key);
    out << key << " " << fmt(value) << " (" << hits << "/" << total
        << ", bound " << fmt(bound(key)) << ", split " << cmd.split << ")"
        << (gated(key) ? (ok ? " ok" : " BELOW") : " not gated") << "\n";
    if (gated(key) && !ok)
      pass = false;
  }
  if (!plan_us.empty()) {
    std::sort(plan_us.begin(), plan_us.end());
    auto at = [&](double q) {
      return plan_us[static_cast<size_t>(
        q * static_cast<double>(plan_us.size() - 1))];
    };
    out << "planning: " << plan_us.size() << " plans, P50 " << fmt(at(0.5))
        << " us, P99 " << fmt(at(0.99)) << " us\n";
  }
  return pass ? 0 : exit_failure;
}

int run_follow_up_command(const data_command& cmd, std::ostream& out,
                          std::ostream& err) {
  auto cat = data::catalog::load_default();
  if (!cat) {
    err << "candor: follow-ups: " << cat.err().message << "\n";
    return exit_usage;
  }
  data::dimension_values values;
  if (auto loaded = data::load_dimension_values(*cat, cmd.sales_db))
    values = std::move(*loaded);
  auto planner = data::planner::make(*cat, values);
  auto db = data::database::open(cmd.sales_db, SQLITE_OPEN_READONLY);
  if (!planner || !db) {
    err << "candor: follow-ups: "
        << (!planner ? planner.err() : db.err()).message << "\n";
    return exit_usage;
  }
  auto dir = std::string{domain::source_dir()} + "/eval/";
  auto set = read_json_object(cmd.questions_path.empty()
                                ? dir + "followups.v1.json"
                                : cmd.questions_path);
  auto bounds = read_json_object(cmd.thresholds_path.empty()
                                   ? dir + "local_thresholds.json"
                                   : cmd.thresholds_path);
  if (!set || !bounds) {
    err << "candor: follow-ups: " << (!set ? set.err() : bounds.err()).message
        << "\n";
    return exit_usage;
  }
  auto* xs = set->if_contains("exchanges");
  if (xs == nullptr || !xs->is_array()) {
    err << "candor: follow-ups: the set has no 'exchanges' array\n";
    return exit_usage;
  }
  // The result of a planned question, or nothing when it is refused.
  auto result_of = [&](const std::string& q)
    -> std::optional<domain::outcome<result_set>> {
    auto r = planner->plan(q);
    if (!r.planned())
      return std::nullopt;
    auto policy = domain::sql::check_sql(r.p.sql);
    if (!policy.allowed())
      return std::nullopt;
    return run(*db, policy.sql);
  };
  std::map<std::string, std::pair<size_t, size_t>> by_kind;
  size_t hits = 0, total = 0;
  std::vector<std::string> misses;
  for (auto& x : xs->as_array()) {
    auto& ex = x.as_object();
    if (cmd.split != "all" && ex.at("split").as_string() != cmd.split)
      continue;
    auto& turns = ex.at("turns").as_array();
    for (size_t t = 1; t < turns.size(); ++t) {
      auto& turn = turns[t].as_object();
      auto& before = turns[t - 1].as_object();
      auto previous = std::string(
        (t == 1 ? before.at("question") : before.at("standalone")).as_string());
      auto said = std::string(turn.at("question").as_string());
      auto want = std::string(turn.at("standalone").as_string());
      auto kind = std::string(turn.at("kind").as_string());
      bool refuse = turn.if_contains("expect")
                    && turn.at("expect").as_string() == "refuse";
      auto got = planner->resolve_follow_up(previous, said);
      bool ok = false;
      std::string why;
      auto mine = result_of(got.standalone);
      if (refuse) {
        ok = !mine.has_value();
        why = "planned, refusal expected";
      } else if (!mine) {
        why = "refused";
      } else {
        auto theirs = result_of(want);
        ok = theirs.has_value() && theirs->ok() && mine->ok()
             && same_result(**mine, **theirs, false);
        why = "a different result";
      }
      ++total;
      auto& k = by_kind[kind];
      ++k.second;
      if (ok) {
        ++hits;
        ++k.first;
      } else {
        misses.push_back(std::string(ex.at("id").as_string()) + " turn "
                         + std::to_string(t + 1) + " (" + kind + "): \""
                         + said + "\" after \"" + previous + "\" -> \""
                         + got.standalone + "\" (" + why + "; wanted \""
                         + want + "\")");
      }
      if (cmd.list_hits && ok)
        out << "  ok   \"" << said << "\" -> \"" << got.standalone << "\"\n";
    }
  }
  for (auto& m : misses)
    out << "  MISS " << m << "\n";
  for (auto& [kind, hk] : by_kind)
    out << "  " << kind << ": " << hk.first << "/" << hk.second << "\n";
  double acc = total ? static_cast<double>(hits) / static_cast<double>(total)
                     : 0.0;
  double bound = 1.0;
  if (auto* b = bounds->if_contains("followUpAccuracy");
      b && b->is_object() && b->as_object().if_contains("min"))
    bound = b->as_object().at("min").to_number<double>();
  bool ok = acc >= bound;
  out << "followUpAccuracy " << fmt(acc) << " (" << hits << "/" << total
      << ", bound " << fmt(bound) << ", split " << cmd.split << ")"
      << (ok ? " ok" : " BELOW") << "\n";
  return ok ? 0 : exit_failure;
}

} // namespace candor::eval
