// The PostgreSQL ledger: the schema `candor_ledger` (created once, under an
// advisory lock, by whichever process gets there first), batches written
// in one transaction each, reads in read-only snapshots, and a connection
// lost between two calls opened again by the next.

#include <unistd.h>

#include <charconv>
#include <climits>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "data/ledger/backend.hpp"
#include "data/ledger/pg_sql.hpp"
#include "data/pg/connection.hpp"
#include "domain/conversation.hpp"

namespace candor::data {

namespace {

using namespace ledger_pg_sql;

domain::error ledger_error(std::string message) {
  return domain::make_error(domain::ec::storage_failed,
                            "postgres ledger: " + std::move(message));
}

/// A statement's parameters in PostgreSQL's text forms.
class param_list {
public:
  param_list& operator()(std::string_view x) {
    // A text value cannot hold NUL: such a byte (a question may carry an
    // escaped one) is left out rather than refusing the row.
    std::string s{x};
    if (s.find('\0') != std::string::npos)
      std::erase(s, '\0');
    values_.emplace_back(std::move(s));
    return *this;
  }

  param_list& operator()(const char* x) {
    return (*this)(std::string_view{x});
  }

  param_list& operator()(int64_t x) {
    values_.emplace_back(std::to_string(x));
    return *this;
  }

  param_list& operator()(int32_t x) {
    return (*this)(int64_t{x});
  }

  param_list& operator()(bool x) {
    values_.emplace_back(x ? "t" : "f");
    return *this;
  }

  param_list& operator()(double x) {
    // The shortest text that reads back as the same double.
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, x);
    values_.emplace_back(std::string{buf, res.ptr});
    return *this;
  }

  pg::params& values() noexcept {
    return values_;
  }

private:
  pg::params values_;
};

/// `head` followed by `rows` groups of `columns` parameters numbered from $1.
std::string values_sql(const char* head, size_t columns, size_t rows) {
  std::string sql = head;
  size_t n = 0;
  for (size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ", (";
    for (size_t c = 0; c < columns; ++c)
      sql += (c == 0 ? "$" : ", $") + std::to_string(++n);
    sql += ")";
  }
  return sql;
}

/// A row of a PostgreSQL result (text values).
class pg_row final : public ledger_row {
public:
  explicit pg_row(const pg::row_view& row) : row_(row) {}

  std::string text(int col) const override {
    return std::string{row_.value(col)};
  }

  int64_t int64(int col) const override {
    auto v = row_.value(col);
    if (v == "t")
      return 1;
    if (v == "f")
      return 0;
    int64_t out = 0;
    std::from_chars(v.data(), v.data() + v.size(), out);
    return out;
  }

  double real(int col) const override {
    auto v = row_.value(col);
    double out = 0;
    std::from_chars(v.data(), v.data() + v.size(), out);
    return out;
  }

private:
  const pg::row_view& row_;
};

/// Whether a failure with SQLSTATE `state` is the storage's (the batch is
/// kept and retried) rather than a row's: a lost connection (class 08, or
/// no SQLSTATE at all: libpq failed on its side), insufficient resources
/// (53), operator intervention (57: a shutdown, a cancelled statement),
/// a system error (58), or a rolled-back transaction (40: deadlock,
/// serialization), which succeeds when tried again.
bool storage_state(const std::string& state, bool connected) {
  if (!connected || state.size() != 5)
    return true;
  auto cls = state.substr(0, 2);
  return cls == "08" || cls == "53" || cls == "57" || cls == "58"
         || cls == "40";
}

/// "host:pid", stored with every request row this process writes.
std::string process_id() {
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) != 0)
    std::strcpy(host, "unknown");
  return std::string{host} + ":" + std::to_string(::getpid());
}

class pg_ledger final : public ledger_backend {
public:
  pg_ledger(pg::connection conn, bool writer)
      : conn_(std::move(conn)), writer_(writer), writer_id_(process_id()) {}

  const char* name() const noexcept override {
    return "postgres";
  }

  /// The session's settings, on a new connection and after a reconnect:
  /// the reader's transactions are read-only, and no statement waits
  /// forever (a timeout is class 57, so a writer keeps its batch).
  domain::error setup_session() {
    if (auto err = conn_.exec("SET client_encoding = 'UTF8'; "
                              "SET extra_float_digits = 3; "
                              "SET statement_timeout = '30s'; "
                              "SET application_name = 'candor-ledger'"))
      return err;
    if (writer_)
      return {};
    return conn_.exec("SET default_transaction_read_only = on");
  }

  /// Creates the schema when missing, once whatever the number of writers
  /// starting at the same time; refuses a newer version. A schema already
  /// at this version is only read: CREATE SCHEMA checks its privilege even
  /// with IF NOT EXISTS, and a role that only writes rows need not have it.
  domain::error create_schema() {
    if (auto version = read_version(); version && *version == schema_version)
      return {};
    return in_transaction("BEGIN", [this]() -> domain::error {
      if (auto r = conn_.query("SELECT pg_advisory_xact_lock($1::bigint)",
                               {std::string{schema_lock_key}});
          !r)
        return r.err();
      if (auto err = conn_.exec(schema_head))
        return err;
      auto version = read_version();
      if (!version)
        return version.err();
      auto v = *version;
      if (v == 0) {
        if (auto err = conn_.exec(schema_v1))
          return err;
        v = 1;
      }
      if (v == 1) {
        if (auto err = conn_.exec(migrate_v1_to_v2))
          return err;
        v = 2;
      }
      if (v == 2) {
        if (auto err = conn_.exec(migrate_v2_to_v3))
          return err;
        v = 3;
      }
      return check_version(v);
    });
  }

  /// The reader's check: the schema exists at this build's version.
  domain::error check_schema() {
    auto version = read_version();
    if (!version)
      return ledger_error("schema candor_ledger not readable (a writer "
                          "creates it): "
                          + version.err().message);
    return check_version(*version);
  }

  domain::error write(const ledger_batch& batch) override {
    storage_fault_ = false;
    if (batch.empty())
      return {};
    auto err = in_transaction("BEGIN", [&] { return insert_all(batch); });
    if (err)
      storage_fault_ = fault_;
    return err;
  }

  bool last_write_storage_fault() const noexcept override {
    return storage_fault_;
  }

  domain::error snapshot(const std::function<domain::error()>& body) override {
    return in_transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                          body);
  }

  domain::error read(ledger_read what,
                     std::initializer_list<ledger_param> params,
                     const ledger_row_fn& each) override {
    if (auto err = ensure_connected())
      return err;
    pg::params ps;
    for (const auto& p : params) {
      if (const auto* i = std::get_if<int64_t>(&p))
        ps.emplace_back(std::to_string(*i));
      else if (const auto* t = std::get_if<std::string_view>(&p))
        ps.emplace_back(std::string{*t});
      else if (const auto* d = std::get_if<double>(&p)) {
        char buf[32];
        auto res = std::to_chars(buf, buf + sizeof buf, *d);
        ps.emplace_back(std::string{buf, res.ptr});
      }
      else
        ps.emplace_back(std::nullopt);
    }
    bool any = false;
    auto run = [&] {
      return conn_.query_each(read_sql(what), ps, [&](const pg::row_view& r) {
        any = true;
        pg_row row{r};
        each(row);
      });
    };
    auto err = run();
    // Outside a snapshot, a connection that died while idle is opened
    // again once (inside one, BEGIN has just found it alive).
    if (err && !any && !in_tx_ && !conn_.connected() && !ensure_connected())
      err = run();
    return err;
  }

private:
  static const char* read_sql(ledger_read what) {
    switch (what) {
      case ledger_read::stats_requests: return stats_requests_sql;
      case ledger_read::stats_llm: return stats_llm_sql;
      case ledger_read::run_request_count: return run_request_count_sql;
      case ledger_read::run_request: return run_request_sql;
      case ledger_read::run_trace: return run_trace_sql;
      case ledger_read::run_llm_calls: return run_llm_calls_sql;
      case ledger_read::run_sql_audit: return run_sql_audit_sql;
      case ledger_read::count_requests: return count_requests_sql;
      case ledger_read::stats_keys: return stats_keys_sql;
      case ledger_read::keys_list: return keys_list_sql;
      case ledger_read::key_add: return key_add_sql;
      case ledger_read::key_revoke: return key_revoke_sql;
      case ledger_read::key_tokens_since: return key_tokens_since_sql;
      case ledger_read::conversation_turns: return conversation_turns_sql;
    }
    return "SELECT 1 WHERE false";
  }

  domain::outcome<int64_t> read_version() {
    auto r = conn_.query(read_version_sql);
    if (!r)
      return r.err();
    if (r->values.empty() || r->values[0].empty() || !r->values[0][0])
      return int64_t{0};
    int64_t v = 0;
    const auto& text = *r->values[0][0];
    std::from_chars(text.data(), text.data() + text.size(), v);
    return v;
  }

  static domain::error check_version(int64_t v) {
    if (v != schema_version)
      return ledger_error("schema candor_ledger is at version "
                          + std::to_string(v) + ", this build uses "
                          + std::to_string(schema_version));
    return {};
  }

  /// Re-opens a connection the server dropped (a restart, a failover, an
  /// idle timeout), with the session's settings.
  domain::error ensure_connected() {
    if (conn_.connected())
      return {};
    if (auto err = conn_.reset())
      return err;
    return setup_session();
  }

  /// Runs `body` between `begin` and COMMIT, or rolls back. A connection
  /// found lost at `begin` (it died while idle) is opened again once
  /// before giving up. Sets fault_ (see storage_state) on failure.
  template <class Body>
  domain::error in_transaction(const char* begin, Body&& body) {
    auto failed = [this](domain::error err) {
      fault_ = storage_state(conn_.last_sqlstate(), conn_.connected());
      if (conn_.connected())
        (void)conn_.exec("ROLLBACK");
      return err;
    };
    auto err = ensure_connected();
    if (!err) {
      err = conn_.exec(begin);
      if (err && !conn_.connected() && !ensure_connected())
        err = conn_.exec(begin);
    }
    if (err)
      return failed(std::move(err));
    in_tx_ = true;
    auto e = body();
    in_tx_ = false;
    if (e)
      return failed(std::move(e));
    if (auto e2 = conn_.exec("COMMIT"))
      return failed(std::move(e2));
    return {};
  }

  /// Inserts `count` rows in statements of at most `rows_per_insert` rows;
  /// `add(params, i)` appends row i's parameters.
  template <class Add>
  domain::error insert_rows(const char* head, size_t columns, size_t count,
                            Add&& add) {
    for (size_t first = 0; first < count; first += rows_per_insert) {
      auto rows = std::min(rows_per_insert, count - first);
      param_list ps;
      for (size_t i = first; i < first + rows; ++i)
        add(ps, i);
      auto r = conn_.query(values_sql(head, columns, rows), ps.values());
      if (!r)
        return r.err();
    }
    return {};
  }

  domain::error insert_all(const ledger_batch& batch) {
    const auto& reqs = batch.requests;
    if (auto err
        = insert_rows(insert_requests_head, insert_requests_columns,
                      reqs.size(), [&](param_list& b, size_t i) {
                        const auto& x = reqs[i];
                        b(x.request_id)(x.ts_us)(x.method)(x.path)(x.route)(
                          x.status)(x.blocked_by)(x.http_status)(x.error)(
                          x.latency_us)(x.question)(x.llm_calls)(x.tokens)(
                          x.cost_usd)(warnings_to_json(x.warnings))(writer_id_)(
                          x.key_name);
                      }))
      return err;
    const auto& calls = batch.llm_calls;
    if (auto err = insert_rows(
          insert_llm_calls_head, insert_llm_calls_columns, calls.size(),
          [&](param_list& b, size_t i) {
            const auto& x = calls[i];
            b(x.request_id)(x.ts_us)(x.prompt)(x.prompt_version)(x.provider)(
              x.model)(x.attempts)(x.retries)(x.fallback_used)(
              x.local_fallback)(x.outcome)(x.tokens_in)(x.tokens_out)(
              x.tokens_estimated)(x.cost_usd)(x.latency_us);
          }))
      return err;
    // Every step of every trace, in order: (trace, step) pairs.
    std::vector<std::pair<const domain::trace_record*, size_t>> steps;
    for (const auto& t : batch.traces)
      for (size_t seq = 0; seq < t.steps.size(); ++seq)
        steps.emplace_back(&t, seq);
    if (auto err = insert_rows(
          insert_trace_steps_head, insert_trace_steps_columns, steps.size(),
          [&](param_list& b, size_t i) {
            const auto& [t, seq] = steps[i];
            const auto& step = t->steps[seq];
            b(t->request_id)(t->ts_us)(static_cast<int64_t>(seq))(
              domain::to_string(step.step))(step.outcome)(step.micros);
          }))
      return err;
    const auto& audits = batch.sql_audits;
    if (auto err
        = insert_rows(insert_sql_audit_head, insert_sql_audit_columns,
                      audits.size(), [&](param_list& b, size_t i) {
                        const auto& x = audits[i];
                        b(x.request_id)(x.ts_us)(x.sql)(x.verdict)(x.layer)(
                          x.reason)(x.rows)(x.latency_us);
                      }))
      return err;
    return insert_turns(reqs);
  }

  /// The conversation turns of the batch's requests in multi-row inserts,
  /// then each of those conversations trimmed to its newest max_turns_ and
  /// the turns past the retention dropped: at most three statements per
  /// batch (none without a turn), whatever its size.
  domain::error insert_turns(const std::vector<domain::request_record>& xs) {
    std::vector<const domain::request_record*> turns;
    std::set<std::string_view> conversations;
    for (const auto& x : xs)
      if (domain::valid_conversation_id(x.conversation_id)
          && !x.status.empty()) {
        turns.push_back(&x);
        if (x.conversation_continues) // a first turn: nothing to trim
          conversations.insert(x.conversation_id);
      }
    if (turns.empty())
      return {};
    if (auto err = insert_rows(insert_turns_head, insert_turns_columns,
                               turns.size(), [&](param_list& b, size_t i) {
                                 const auto& x = *turns[i];
                                 const auto& t = x.said;
                                 b(x.conversation_id)(t.request_id)(
                                   x.key_name)(t.at_us)(t.question)(
                                   t.standalone)(t.route)(t.status)(t.answer)(
                                   t.sql);
                               }))
      return err;
    if (conversations.empty()) // first turns only
      return purge_turns();
    // A text[] literal: the ids are "c_" and hex digits (checked above),
    // so nothing in them needs quoting.
    std::string ids = "{";
    for (auto id : conversations) {
      if (ids.size() > 1)
        ids += ',';
      ids += id;
    }
    ids += '}';
    param_list trim;
    trim(ids)(max_turns_);
    if (auto r = conn_.query(trim_turns_sql, trim.values()); !r)
      return r.err();
    return purge_turns();
  }

  /// Drops the turns past the retention, at most once a purge interval
  /// (see ledger_backend::purge_due).
  domain::error purge_turns() {
    if (!purge_due())
      return {};
    param_list cutoff;
    cutoff(turn_cutoff_us());
    auto r = conn_.query(purge_turns_sql, cutoff.values());
    return r ? domain::error{} : r.err();
  }

  pg::connection conn_;
  bool writer_;
  std::string writer_id_;
  /// Inside in_transaction's body.
  bool in_tx_ = false;
  /// Whether the last failed transaction failed in the storage.
  bool fault_ = false;
  /// The same, for the last write() only (ledger_store's contract).
  bool storage_fault_ = false;
};

} // namespace

domain::outcome<std::unique_ptr<ledger_backend>>
open_pg_ledger(const std::string& dsn, bool writer) {
  auto conn = pg::connection::open(dsn);
  if (!conn)
    return conn.err();
  auto ledger = std::make_unique<pg_ledger>(std::move(*conn), writer);
  if (auto err = ledger->setup_session())
    return err;
  if (auto err = writer ? ledger->create_schema() : ledger->check_schema())
    return err;
  return std::unique_ptr<ledger_backend>{std::move(ledger)};
}

} // namespace candor::data
