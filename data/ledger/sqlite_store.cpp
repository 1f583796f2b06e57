// The SQLite ledger: opening it (schema and migrations), writing batches
// and running the reads /stats and /runs are built from
// (data/ledger/queries.cpp builds them).

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <utility>

#include <sqlite3.h>

#include "data/ledger/sqlite_store.hpp"

namespace candor::data {

namespace {

/// True when `path` names a plain file (not `:memory:` or a `file:` URI).
bool plain_file(const std::string& path) {
  return !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
}

/// Calls `write(xs, first, rows)` for consecutive chunks of at most
/// `rows_per_insert` rows; stops at the first error.
template <class T, class Write>
domain::error in_chunks(const std::vector<T>& xs, Write write) {
  for (size_t i = 0; i < xs.size(); i += rows_per_insert)
    if (auto err = write(xs, i, std::min(rows_per_insert, xs.size() - i)))
      return err;
  return {};
}

} // namespace

domain::outcome<ledger_store> ledger_store::open(const std::string& path,
                                                 bool writer) {
  // NOMUTEX: a ledger_store is used by one thread at a time (see the
  // header), so the connection's own mutex only costs a lock per API call.
  auto flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
  if (writer) {
    flags |= SQLITE_OPEN_CREATE;
    if (plain_file(path)) {
      auto parent = std::filesystem::path{path}.parent_path();
      std::error_code ec;
      if (!parent.empty())
        std::filesystem::create_directories(parent, ec);
      if (ec)
        return storage_error(parent.string() + ": " + ec.message());
    }
  }
  auto db = database::open(path, flags);
  if (!db)
    return db.err();
  auto ptr = std::make_unique<sqlite_ledger>();
  ptr->db = std::move(*db);
  ptr->writer = writer;
  auto& conn = ptr->db;
  if (auto err = conn.busy_timeout(std::chrono::seconds{5}))
    return err;
  if (writer) {
    auto mode = conn.query_text("PRAGMA journal_mode = WAL");
    if (!mode)
      return mode.err();
    if (*mode != "wal" && *mode != "memory")
      return storage_error(path + ": cannot use WAL (journal mode " + *mode
                           + ")");
    if (auto err = conn.exec("PRAGMA synchronous = NORMAL"))
      return err;
    // The ledger takes many small appends: a larger page cache saves
    // re-reading index pages, and a larger WAL means fewer checkpoints
    // (each one writes back and fsyncs the database file).
    if (auto err = conn.exec("PRAGMA cache_size = -32768"))
      return err;
    if (auto err = conn.exec("PRAGMA wal_autocheckpoint = 8192"))
      return err;
    auto version = conn.query_int64("PRAGMA user_version");
    if (!version)
      return version.err();
    if (*version != ledger_schema_version)
      if (auto err = ptr->create_schema())
        return err;
  } else {
    if (auto err = conn.exec("PRAGMA query_only = ON"))
      return err;
    auto version = conn.query_int64("PRAGMA user_version");
    if (!version)
      return version.err();
    if (*version != ledger_schema_version)
      return storage_error(path + ": ledger schema version "
                           + std::to_string(*version) + ", expected "
                           + std::to_string(ledger_schema_version));
  }
  if (auto err = ptr->prepare_all())
    return err;
  if (writer) {
    auto stmts = tx_statements::prepare(conn, tx_mode::immediate);
    if (!stmts)
      return stmts.err();
    ptr->write_tx = std::move(*stmts);
  }
  return ledger_store{std::move(ptr)};
}

namespace {

/// True for an extended result code that names the storage, not a row.
bool storage_code(int code) noexcept {
  switch (code & 0xFF) {
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOLFS:
    case SQLITE_PERM: return true;
    default: return false;
  }
}

} // namespace

domain::error sqlite_ledger::write(const ledger_batch& batch) {
  auto& m = *this;
  m.storage_fault = false;
  if (batch.empty())
    return {};
  // Read the code before the transaction's rollback resets it.
  auto failed = [&m](domain::error err) {
    m.storage_fault = storage_code(m.db.last_error_code());
    return err;
  };
  auto tx = m.write_tx.is_valid() ? transaction::begin(m.db, m.write_tx)
                                  : transaction::begin(m.db);
  if (!tx)
    return failed(tx.err());
  if (auto err = in_chunks(batch.requests, [&m](auto& xs, size_t i, size_t n) {
        return m.write_requests(xs, i, n);
      }))
    return failed(std::move(err));
  if (auto err = in_chunks(batch.llm_calls, [&m](auto& xs, size_t i, size_t n) {
        return m.write_llm_calls(xs, i, n);
      }))
    return failed(std::move(err));
  for (auto& x : batch.traces)
    if (auto err = m.write_trace(x))
      return failed(std::move(err));
  for (auto& x : batch.sql_audits)
    if (auto err = m.write_sql_audit(x))
      return failed(std::move(err));
  if (m.trim_turns.is_valid()) {
    m.turns.clear();
    for (const auto& x : batch.requests)
      if (!x.conversation_id.empty() && !x.status.empty())
        m.turns.push_back(&x);
    if (auto err = in_chunks(m.turns, [&m](auto& xs, size_t i, size_t n) {
          return m.write_turns(xs, i, n);
        }))
      return failed(std::move(err));
    if (!m.turns.empty())
      if (auto err = m.bound_turns())
        return failed(std::move(err));
  }
  if (auto err = tx->commit())
    return failed(std::move(err));
  return {};
}

namespace {

/// The current row of a stepped statement.
class sqlite_row final : public ledger_row {
public:
  explicit sqlite_row(const statement& stmt) : stmt_(stmt) {}
  std::string text(int col) const override {
    return stmt_.column_text(col);
  }
  int64_t int64(int col) const override {
    return stmt_.column_int64(col);
  }
  double real(int col) const override {
    return stmt_.column_double(col);
  }

private:
  const statement& stmt_;
};

} // namespace

domain::error
sqlite_ledger::snapshot(const std::function<domain::error()>& body) {
  auto tx = transaction::begin(db, tx_mode::deferred);
  if (!tx)
    return tx.err();
  if (auto err = body())
    return err;
  return tx->commit();
}

domain::error sqlite_ledger::read(ledger_read what,
                                  std::initializer_list<ledger_param> params,
                                  const ledger_row_fn& each) {
  statement* q = nullptr;
  switch (what) {
    case ledger_read::stats_requests: q = &stats_requests; break;
    case ledger_read::stats_llm: q = &stats_llm; break;
    case ledger_read::run_request_count: q = &run_request_count; break;
    case ledger_read::run_request: q = &run_request; break;
    case ledger_read::run_trace: q = &run_trace; break;
    case ledger_read::run_llm_calls: q = &run_llm_calls; break;
    case ledger_read::run_sql_audit: q = &run_sql_audit; break;
    case ledger_read::count_requests: q = &count_requests; break;
    case ledger_read::stats_keys: q = &stats_keys; break;
    case ledger_read::keys_list: q = &keys_list; break;
    case ledger_read::key_add: q = &key_add; break;
    case ledger_read::key_revoke: q = &key_revoke; break;
    case ledger_read::key_tokens_since: q = &key_tokens_since; break;
    case ledger_read::conversation_turns: q = &conversation_turns; break;
  }
  if (q != nullptr && !q->is_valid())
    return storage_error("the key commands need a writer connection");
  if (q == nullptr)
    return storage_error("unknown ledger read");
  // The parameters outlive the statement's run: bound by reference.
  auto guard = q->reset_on_exit();
  int index = 1;
  for (const auto& p : params) {
    if (const auto* i = std::get_if<int64_t>(&p))
      (void)q->bind_int64(index, *i);
    else if (const auto* t = std::get_if<std::string_view>(&p))
      (void)q->bind_text_ref(index, *t);
    else if (const auto* d = std::get_if<double>(&p))
      (void)q->bind_double(index, *d);
    else
      (void)q->bind_null(index);
    ++index; // a bind error is reported by the first step
  }
  sqlite_row row{*q};
  return for_each_row(*q, [&](statement&) { each(row); });
}

} // namespace candor::data
