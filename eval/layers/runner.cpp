// Runs each attack through each defence layer on its own, with the code
// the server runs, and turns the results into matrix cells.

#include "eval/layers/runner.hpp"

#include <chrono>
#include <utility>

#include <sqlite3.h>

#include "data/sales/catalog.hpp"
#include "data/fixtures.hpp"
#include "data/sql/guard.hpp"
#include "domain/guard/input_rules.hpp"
#include "domain/guard/input_scorer.hpp"
#include "domain/model/openai_wire.hpp"
#include "domain/guard/output_guard.hpp"
#include "domain/guard/response_guard.hpp"
#include "domain/records.hpp"
#include "domain/guard/sanitizer.hpp"
#include "domain/sql/policy.hpp"
#include "domain/text.hpp"
#include "eval/layers/executor_layer.hpp"
#include "data/pg/session.hpp"
#include "data/sql/pg_policy.hpp"

namespace candor::eval {

namespace {

using clock_type = std::chrono::steady_clock;

cell stopped(std::string detail) {
  return {cell_kind::stopped, std::move(detail)};
}

cell passed(std::string detail) {
  return {cell_kind::passed, std::move(detail)};
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

/// Cuts a detail to something a table note can carry.
std::string short_detail(std::string s) {
  return s.size() > 200 ? domain::cut_utf8(s, 200) + "..." : s;
}

cell input_rules_cell(const std::string& question) {
  auto v = domain::rule_set::builtin().evaluate_question(
    question, domain::input_scorer::builtin());
  auto matched = join(v.matched);
  if (v.blocked)
    return stopped(matched);
  return passed(matched.empty() ? "no rule matched"
                                : "below the block level: " + matched);
}

/// The cell of a SQL layer's verdict (the static policy's and the
/// authorizer's results share these three fields).
template <class Result>
cell verdict_cell(const Result& r) {
  switch (r.verdict) {
    case domain::sql::verdict_kind::block:
      return stopped(r.rule + ": " + short_detail(r.message));
    case domain::sql::verdict_kind::correctable:
      return passed("correctable " + r.rule + " (sent back to the model)");
    case domain::sql::verdict_kind::allow: break;
  }
  return passed("allowed");
}

cell policy_cell(std::string_view sql) {
  return verdict_cell(domain::sql::check_sql(sql));
}

cell authorizer_cell(data::sql_guard& guard, std::string_view sql) {
  return verdict_cell(guard.check(sql));
}

/// Puts a model reply where the attack says it appears in the response.
domain::ask_state response_with(const model_output& out,
                                std::vector<std::string> spans) {
  domain::ask_state st;
  st.redacted_spans = std::move(spans);
  if (out.field == "answer") {
    st.answer = out.text;
  } else if (out.field == "routeReason") {
    st.route_reason = out.text;
  } else if (out.field == "followUp") {
    st.follow_ups.push_back(out.text);
  } else if (out.field == "sql") {
    st.has_sql = true;
    st.sql.query = out.text;
  } else {
    st.has_sql = true;
    st.sql.columns = {"value"};
    domain::cell c;
    c.kind = domain::cell::text;
    c.s = out.text;
    st.sql.rows.push_back({std::move(c)});
  }
  return st;
}

struct heap_limit_scope {
  int64_t previous;
  explicit heap_limit_scope(int64_t bytes)
      : previous(sqlite3_hard_heap_limit64(bytes)) {}
  ~heap_limit_scope() {
    sqlite3_hard_heap_limit64(previous);
  }
  heap_limit_scope(const heap_limit_scope&) = delete;
  heap_limit_scope& operator=(const heap_limit_scope&) = delete;
};

struct budget {
  clock_type::time_point deadline;
  bool fired = false;
};

int budget_callback(void* p) noexcept {
  auto* b = static_cast<budget*>(p);
  if (clock_type::now() > b->deadline)
    b->fired = true;
  return b->fired ? 1 : 0;
}

} // namespace

domain::outcome<cell> run_connection_layer(const std::string& sales_db,
                                           std::string_view statements,
                                           int64_t heap_limit_mb,
                                           int64_t budget_ms) {
  auto db = data::open_read_only(sales_db, true);
  if (!db)
    return db.err();
  if (auto err = data::harden_connection(*db))
    return err;
  heap_limit_scope heap{heap_limit_mb << 20};
  auto* h = db->handle();
  budget b{clock_type::now() + std::chrono::milliseconds{budget_ms}};
  sqlite3_progress_handler(h, 1000, budget_callback, &b);
  auto over_budget = [&] {
    return passed("still running after " + std::to_string(budget_ms)
                  + " ms (interrupted; the connection has no deadline)");
  };
  std::string_view rest = statements;
  int64_t ran = 0, rows = 0;
  while (!domain::trim_ascii(rest).empty()) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    auto rc = sqlite3_prepare_v2(h, rest.data(), static_cast<int>(rest.size()),
                                 &raw, &tail);
    if (rc != SQLITE_OK)
      return b.fired ? over_budget()
                     : stopped(std::string{"prepare: "} + sqlite3_errmsg(h));
    if (raw == nullptr)
      break; // only comments left
    ++ran;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW)
      ++rows;
    std::string message = sqlite3_errmsg(h);
    sqlite3_finalize(raw);
    if (rc != SQLITE_DONE)
      return b.fired ? over_budget() : stopped("step: " + message);
    rest.remove_prefix(static_cast<size_t>(tail - rest.data()));
  }
  return passed("ran " + std::to_string(ran) + " statement(s), "
                + std::to_string(rows) + " row(s)");
}

/// The cell of a statement run on the warehouse: stopped when the server
/// refused it (the SQLSTATE's message), passed with the row count when it
/// ran.
cell server_cell(const domain::outcome<domain::sql_exec_result>& r) {
  if (r)
    return passed("ran: " + std::to_string(r->row_count) + " row(s)");
  return stopped(std::string{domain::to_string(r.err().code)} + ": "
                 + short_detail(r.err().message));
}

/// The PostgreSQL warehouse's layers.
struct pg_layers {
  data::postgres_rules rules;
  data::pg::session probe;
  data::pg::session reader;
  std::string dsn;

  data::pg::session& fresh(data::pg::session& s) {
    if (!s.running())
      if (auto again = data::pg::session::open(dsn, std::chrono::seconds{10}))
        s = std::move(*again);
    return s;
  }
};

struct layer_runner::impl {
  layer_runner_options opts;
  data::sql_guard guard;
  data::fixture_store fixtures;
  domain::output_guard output;
  executor_layer exec;
  std::unique_ptr<pg_layers> pg;

  impl(layer_runner_options o, data::sql_guard g, data::fixture_store f,
       domain::output_guard og, executor_layer e)
      : opts(std::move(o)), guard(std::move(g)), fixtures(std::move(f)),
        output(std::move(og)), exec(std::move(e)) {}

  cell input_model_cell(const std::string& question) const {
    if (!opts.scripted_provider)
      return {cell_kind::not_configured,
              "the live classifier is not called by candor layers"};
    auto reply = fixtures.lookup("guard", question, 0);
    if (!reply)
      return {cell_kind::not_configured,
              "no scripted guard reply for this question"};
    if (reply->finish_reason == "length")
      return stopped("model:truncated (fails closed)");
    switch (domain::parse_guard_reply(reply->text)) {
      case domain::guard_verdict::safe: return passed("model:safe");
      case domain::guard_verdict::unsafe: return stopped("model:unsafe");
      case domain::guard_verdict::unparseable: break;
    }
    return stopped("model:unparseable (fails closed)");
  }

  cell output_cell(const model_output& out, std::vector<std::string> spans) {
    auto st = response_with(out, std::move(spans));
    auto reason = domain::guard_response(output, st);
    if (reason.empty())
      return passed("clean");
    return stopped(reason);
  }

  void pg_sql_cells(attack_row& row, std::string_view sql) {
    row.at(layer::sql_policy) = verdict_cell(pg->rules.check(sql));
    domain::sql_exec_request req;
    req.sql = std::string{sql};
    req.max_rows = opts.max_rows;
    auto deadline = std::chrono::milliseconds{opts.deadline_ms};
    auto& session = pg->fresh(pg->probe);
    auto probe = session.run_read_write_probe(req, deadline);
    // The grants' own refusal; any other failure is the server's too.
    row.at(layer::sql_authorizer)
      = probe && data::pg::skipped_for_privileges(session.notices())
          ? stopped("role_privilege: ran but skipped every table: "
                    + short_detail(session.notices().front()))
          : server_cell(probe);
    row.at(layer::sql_connection)
      = {cell_kind::not_applicable,
         "on PostgreSQL the role (sql_authorizer) and the READ ONLY "
         "session (sql_executor) stand here"};
    row.at(layer::sql_executor)
      = server_cell(pg->fresh(pg->reader).run(req, deadline));
  }

  domain::error sql_cells(attack_row& row, std::string_view sql,
                          const std::string& id) {
    if (pg) {
      pg_sql_cells(row, sql);
      return {};
    }
    row.at(layer::sql_policy) = policy_cell(sql);
    row.at(layer::sql_authorizer) = authorizer_cell(guard, sql);
    auto conn = run_connection_layer(opts.sales_db, sql, opts.heap_limit_mb,
                                     opts.connection_budget_ms);
    if (!conn)
      return domain::make_error(
        conn.err().code, id + ": connection layer: " + conn.err().message);
    row.at(layer::sql_connection) = std::move(*conn);
    auto v = exec.judge(sql);
    if (v.verdict == "block")
      row.at(layer::sql_executor)
        = stopped(v.rule + ": " + short_detail(v.message));
    else if (v.ran())
      row.at(layer::sql_executor)
        = passed("ran: " + std::to_string(v.row_count) + " row(s)");
    else
      return domain::make_error(domain::ec::sql_executor_failed,
                                id + ": executor layer: " + v.message);
    return {};
  }
};

domain::outcome<layer_runner> layer_runner::open(layer_runner_options opts) {
  auto cat = data::catalog::load_default();
  if (!cat)
    return cat.err();
  auto guard = data::sql_guard::open(
    opts.sales_db, {cat->allowed_columns(), data::default_sql_functions()});
  if (!guard)
    return guard.err();
  auto fixtures = data::fixture_store::load(opts.fixtures_dir);
  if (!fixtures)
    return fixtures.err();
  domain::output_guard og{
    domain::product_output_guard_config(opts.canary, opts.prompt_texts)};
  auto settings = opts.executor;
  settings.db_path = opts.sales_db;
  settings.unguarded = true;
  executor_layer exec{settings, opts.deadline_ms, opts.max_rows};
  std::unique_ptr<pg_layers> pg;
  if (!opts.postgres_dsn.empty()) {
    pg = std::make_unique<pg_layers>();
    pg->rules = data::postgres_rules::from(*cat);
    pg->dsn = opts.postgres_dsn;
    auto timeout = std::chrono::seconds{10};
    auto probe = data::pg::session::open(pg->dsn, timeout);
    if (!probe)
      return probe.err();
    auto reader = data::pg::session::open(pg->dsn, timeout);
    if (!reader)
      return reader.err();
    pg->probe = std::move(*probe);
    pg->reader = std::move(*reader);
  }
  auto runner = std::make_unique<impl>(std::move(opts), std::move(*guard),
                                       std::move(*fixtures), std::move(og),
                                       std::move(exec));
  runner->pg = std::move(pg);
  return layer_runner{std::move(runner)};
}

layer_runner::layer_runner(std::unique_ptr<impl> p) noexcept
    : impl_(std::move(p)) {}
layer_runner::layer_runner(layer_runner&&) noexcept = default;
layer_runner& layer_runner::operator=(layer_runner&&) noexcept = default;
layer_runner::~layer_runner() = default;

domain::outcome<attack_row> layer_runner::run(const attack& a) {
  attack_row row;
  row.id = a.id;
  row.kind = a.kind;
  row.write = a.write;
  row.expected = a.expected;
  auto& s = *impl_;
  switch (a.kind) {
    case attack_kind::direct:
      row.at(layer::input_rules) = input_rules_cell(a.text);
      row.at(layer::input_model) = s.input_model_cell(a.text);
      if (a.model_sql)
        if (auto err = s.sql_cells(row, *a.model_sql, a.id))
          return err;
      if (a.output)
        row.at(layer::output_guard) = s.output_cell(*a.output, {});
      break;
    case attack_kind::indirect: {
      auto clean = domain::sanitize(a.text);
      row.at(layer::sanitizer) = clean.flagged()
                                   ? stopped(join(clean.flag_reasons))
                                   : passed("no sentence redacted");
      // As in the server: the output guard gets the sanitizer's redactions.
      if (a.output)
        row.at(layer::output_guard)
          = s.output_cell(*a.output, std::move(clean.redacted_spans));
      break;
    }
    case attack_kind::sql:
      if (auto err = s.sql_cells(row, a.text, a.id))
        return err;
      break;
    case attack_kind::output:
      row.at(layer::output_guard)
        = s.output_cell(*a.output, a.output->redacted_spans);
      break;
  }
  return row;
}

domain::outcome<std::vector<attack_row>>
layer_runner::run_all(const std::vector<attack>& attacks,
                      const layer_progress& progress) {
  std::vector<attack_row> rows;
  rows.reserve(attacks.size());
  for (auto& a : attacks) {
    auto row = run(a);
    if (!row)
      return row.err();
    rows.push_back(std::move(*row));
    if (progress)
      progress(rows.size(), attacks.size(), a.id);
  }
  return rows;
}

} // namespace candor::eval
