#pragma once

// The SQLite ledger: the backend behind data::ledger_store::open
// (data/ledger/store.cpp opens it, writes and reads). Not for other users.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/ledger/backend.hpp"
#include "data/ledger/sql.hpp"
#include "data/ledger/store.hpp"
#include "data/sqlite.hpp"

namespace candor::data {

// The schema and the statement texts, in both files.
using namespace ledger_sql;

/// Binds in order from parameter 1; stops at the first error.
///
/// Text is bound by reference (no copy inside SQLite): every caller holds a
/// `reset_on_exit()` guard on the statement, declared after the values it
/// binds, so the bindings are cleared before any of them dies.
class binder {
public:
  explicit binder(statement& stmt) : stmt_(stmt) {}

  binder& operator()(std::string_view x) {
    if (!err_)
      err_ = stmt_.bind_text_ref(next_++, x);
    return *this;
  }

  binder& operator()(int64_t x) {
    if (!err_)
      err_ = stmt_.bind_int64(next_++, x);
    return *this;
  }

  binder& operator()(int32_t x) {
    return (*this)(int64_t{x});
  }

  binder& operator()(bool x) {
    return (*this)(int64_t{x ? 1 : 0});
  }

  binder& operator()(double x) {
    if (!err_)
      err_ = stmt_.bind_double(next_++, x);
    return *this;
  }

  /// Runs the statement once all parameters are bound.
  domain::error run() {
    if (err_)
      return err_;
    return stmt_.run();
  }

private:
  statement& stmt_;
  int next_ = 1;
  domain::error err_;
};

// -- sqlite_ledger -------------------------------------------------------------

struct sqlite_ledger final : ledger_backend {
  const char* name() const noexcept override {
    return "sqlite";
  }
  domain::error write(const ledger_batch& batch) override;
  bool last_write_storage_fault() const noexcept override {
    return storage_fault;
  }
  domain::error
  snapshot(const std::function<domain::error()>& body) override;
  domain::error read(ledger_read what,
                     std::initializer_list<ledger_param> params,
                     const ledger_row_fn& each) override;

  database db;
  /// Whether the last failed write() failed in the storage (see
  /// ledger_store::last_write_storage_fault).
  bool storage_fault = false;
  /// The writer's BEGIN IMMEDIATE / COMMIT / ROLLBACK, prepared once.
  tx_statements write_tx;
  /// insert_requests[k - 1] inserts k requests (and so on); prepared on
  /// first use.
  std::array<statement, rows_per_insert> insert_requests;
  std::array<statement, rows_per_insert> insert_llm_calls;
  /// insert_trace_steps[k - 1] inserts k steps; prepared on first use.
  std::array<statement, trace_rows_per_insert> insert_trace_steps;
  statement insert_sql_audit;
  statement next_trace_ord;
  statement stats_requests;
  statement stats_llm;
  statement run_request;
  statement run_request_count;
  statement run_trace;
  statement run_llm_calls;
  statement run_sql_audit;
  statement count_requests;
  statement stats_keys;
  statement keys_list;
  /// The key commands' statements: prepared on a writer only (a read
  /// connection is query_only).
  statement key_add;
  statement key_revoke;
  statement key_tokens_since;
  statement conversation_turns;
  /// The conversations' writes (a writer only): insert_turns as the
  /// other multi-row inserts.
  std::array<statement, rows_per_insert> insert_turns;
  statement trim_turns;
  statement purge_turns;
  bool writer = false;

  domain::error prepare_all() {
    std::pair<statement*, const char*> all[] = {
      {&insert_sql_audit, insert_sql_audit_sql},
      {&next_trace_ord, next_trace_ord_sql},
      {&stats_requests, stats_requests_sql},
      {&stats_llm, stats_llm_sql},
      {&run_request, run_request_sql},
      {&run_request_count, run_request_count_sql},
      {&run_trace, run_trace_sql},
      {&run_llm_calls, run_llm_calls_sql},
      {&run_sql_audit, run_sql_audit_sql},
      {&count_requests, count_requests_sql},
      {&stats_keys, stats_keys_sql},
      {&keys_list, keys_list_sql},
      {&key_tokens_since, key_tokens_since_sql},
      {&conversation_turns, conversation_turns_sql},
    };
    for (auto& [stmt, sql] : all) {
      auto res = db.prepare(sql);
      if (!res)
        return res.err();
      *stmt = std::move(*res);
    }
    if (!writer)
      return {};
    for (auto [stmt, sql] : {std::pair{&key_add, key_add_sql},
                             std::pair{&key_revoke, key_revoke_sql},
                             std::pair{&trim_turns, trim_turns_sql},
                             std::pair{&purge_turns, purge_turns_sql}}) {
      auto res = db.prepare(sql);
      if (!res)
        return res.err();
      *stmt = std::move(*res);
    }
    return {};
  }

  domain::error create_schema() {
    auto tx = transaction::begin(db, tx_mode::immediate);
    if (!tx)
      return tx.err();
    // Re-read under the write lock: another writer may have won the race.
    auto version = db.query_int64("PRAGMA user_version");
    if (!version)
      return version.err();
    auto v = *version;
    if (v > ledger_schema_version)
      return storage_error("ledger schema version " + std::to_string(v)
                           + ", expected "
                           + std::to_string(ledger_schema_version));
    // Every step in order, all in this transaction: a failed migration
    // leaves the database as it was.
    if (v == 0) {
      if (auto err = db.exec(schema_v1))
        return err;
      v = 1;
    }
    if (v == 1) {
      if (auto err = db.exec(migrate_v1_to_v2))
        return err;
      v = 2;
    }
    if (v == 2) {
      if (auto err = db.exec(migrate_v2_to_v3))
        return err;
      v = 3;
    }
    if (v == 3) {
      if (auto err = db.exec(migrate_v3_to_v4))
        return err;
      v = 4;
    }
    if (v == 4) {
      if (auto err = db.exec(migrate_v4_to_v5))
        return err;
      v = 5;
    }
    if (v != ledger_schema_version) // e.g. a negative user_version
      return storage_error("ledger schema version " + std::to_string(*version)
                           + ", expected "
                           + std::to_string(ledger_schema_version));
    return tx->commit();
  }

  /// The statement of `stmts` that inserts `rows` rows, prepared from
  /// `make_sql(rows)` on first use.
  template <size_t N>
  domain::outcome<statement*> multi_row(std::array<statement, N>& stmts,
                                        size_t rows,
                                        std::string (*make_sql)(size_t)) {
    auto& stmt = stmts[rows - 1];
    if (!stmt.is_valid()) {
      auto prepared = db.prepare(make_sql(rows));
      if (!prepared)
        return prepared.err();
      stmt = std::move(*prepared);
    }
    return &stmt;
  }

  /// The requests' warnings as JSON for one statement: bound without a
  /// copy, so they must live until the statement has run.
  std::vector<std::string> warnings_json;

  /// Inserts requests [first, first + rows) of `xs` in one statement.
  domain::error write_requests(const std::vector<domain::request_record>& xs,
                               size_t first, size_t rows) {
    auto stmt = multi_row(insert_requests, rows, insert_requests_sql);
    if (!stmt)
      return stmt.err();
    // Before the guard: the statement refers to them until the reset.
    warnings_json.resize(rows);
    for (size_t i = 0; i < rows; ++i)
      warnings_json[i] = warnings_to_json(xs[first + i].warnings);
    auto guard = (*stmt)->reset_on_exit();
    binder b{**stmt};
    for (size_t i = 0; i < rows; ++i) {
      auto& x = xs[first + i];
      b(x.request_id)(x.ts_us)(x.method)(x.path)(x.route)(x.status)(
        x.blocked_by)(x.http_status)(x.error)(x.latency_us)(x.question)(
        x.llm_calls)(x.tokens)(x.cost_usd)(warnings_json[i])(x.key_name);
    }
    return b.run();
  }

  /// Inserts model calls [first, first + rows) of `xs` in one statement.
  domain::error write_llm_calls(const std::vector<domain::llm_call_record>& xs,
                                size_t first, size_t rows) {
    auto stmt = multi_row(insert_llm_calls, rows, insert_llm_calls_sql);
    if (!stmt)
      return stmt.err();
    auto guard = (*stmt)->reset_on_exit();
    binder b{**stmt};
    for (size_t i = 0; i < rows; ++i) {
      auto& x = xs[first + i];
      b(x.request_id)(x.ts_us)(x.prompt)(x.prompt_version)(x.provider)(x.model)(
        x.attempts)(x.retries)(x.fallback_used)(x.local_fallback)(x.outcome)(
        x.tokens_in)(x.tokens_out)(x.tokens_estimated)(x.cost_usd)(
        x.latency_us);
    }
    return b.run();
  }

  /// Inserts steps [first, first + rows) of `x` with ord = ord0 + seq.
  /// `clash` tells a primary key conflict (the id already has rows with
  /// those ords) from other failures; either way the statement changed
  /// nothing and the transaction stays open.
  domain::error insert_steps(statement& stmt, const domain::trace_record& x,
                             int64_t ord0, size_t first, size_t rows,
                             bool& clash) {
    auto guard = stmt.reset_on_exit();
    binder b{stmt};
    b(x.request_id)(x.ts_us)(ord0);
    for (size_t seq = first; seq < first + rows; ++seq) {
      const auto& step = x.steps[seq];
      b(static_cast<int64_t>(seq))(domain::to_string(step.step))(step.outcome)(
        step.micros);
    }
    auto err = b.run();
    // Read before the guard's reset.
    clash = err && db.last_error_code() == SQLITE_CONSTRAINT_PRIMARYKEY;
    return err;
  }

  domain::outcome<int64_t> next_ord(const std::string& request_id) {
    auto guard = next_trace_ord.reset_on_exit();
    next_trace_ord.bind_text(1, request_id);
    auto res = next_trace_ord.step();
    if (!res)
      return res.err();
    if (*res != step_result::row)
      return storage_error("next ord query returned no row");
    return next_trace_ord.column_int64(0);
  }

  domain::error write_trace(const domain::trace_record& x) {
    // A request id is nearly always new, so its rows take ord = seq without
    // a lookup. When a client reused the id, the insert clashes with the
    // earlier rows and is redone after them.
    int64_t ord0 = 0;
    bool looked_up = false;
    size_t seq = 0;
    while (seq < x.steps.size()) {
      auto rows = std::min(trace_rows_per_insert, x.steps.size() - seq);
      auto prepared
        = multi_row(insert_trace_steps, rows, insert_trace_steps_sql);
      if (!prepared)
        return prepared.err();
      auto& stmt = **prepared;
      bool clash = false;
      auto err = insert_steps(stmt, x, ord0, seq, rows, clash);
      if (err && clash && !looked_up) {
        looked_up = true;
        auto next = next_ord(x.request_id);
        if (!next)
          return next.err();
        ord0 = *next - static_cast<int64_t>(seq);
        err = insert_steps(stmt, x, ord0, seq, rows, clash);
      }
      if (err)
        return err;
      seq += rows;
    }
    return {};
  }

  /// Turns of the batch's requests to write: those of a conversation
  /// whose request has an outcome (bound without a copy, like
  /// warnings_json).
  std::vector<const domain::request_record*> turns;

  /// Inserts turns [first, first + rows) of `xs` in one statement.
  domain::error write_turns(const std::vector<const domain::request_record*>& xs,
                            size_t first, size_t rows) {
    auto stmt = multi_row(insert_turns, rows, insert_turns_sql);
    if (!stmt)
      return stmt.err();
    auto guard = (*stmt)->reset_on_exit();
    binder b{**stmt};
    for (size_t i = 0; i < rows; ++i) {
      const auto& x = *xs[first + i];
      const auto& t = x.said;
      b(x.conversation_id)(t.request_id)(x.key_name)(t.at_us)(t.question)(
        t.standalone)(t.route)(t.status)(t.answer)(t.sql);
    }
    return b.run();
  }

  /// After write_turns: each continued conversation trimmed to its newest
  /// max_turns_ (a first turn has nothing to trim), then, at most once a
  /// purge interval, the turns past the retention dropped (reads never
  /// see those anyway: they ask for turns since the retention's start).
  domain::error bound_turns() {
    for (const auto* x : turns) {
      if (!x->conversation_continues)
        continue;
      auto guard = trim_turns.reset_on_exit();
      if (auto err = binder{trim_turns}(x->conversation_id)(max_turns_).run())
        return err;
    }
    if (!purge_due())
      return {};
    auto guard = purge_turns.reset_on_exit();
    return binder{purge_turns}(turn_cutoff_us()).run();
  }

  domain::error write_sql_audit(const domain::sql_audit_record& x) {
    auto guard = insert_sql_audit.reset_on_exit();
    return binder{insert_sql_audit}(x.request_id)(x.ts_us)(x.sql)(x.verdict)(
             x.layer)(x.reason)(x.rows)(x.latency_us)
      .run();
  }
};

} // namespace candor::data
