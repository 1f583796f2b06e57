// data::ledger_store: opening the ledger (schema and migrations) and
// writing batches. Its reads (/stats, /runs) are in data/ledger/queries.cpp,
// the state both share in data/ledger/store_impl.hpp.

#include "data/ledger/store.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <utility>

#include <sqlite3.h>

#include "data/ledger/store_impl.hpp"

namespace candor::data {

// -- ledger_batch -------------------------------------------------------------

bool ledger_batch::empty() const noexcept {
  return requests.empty() && llm_calls.empty() && traces.empty()
         && sql_audits.empty();
}

size_t ledger_batch::size() const noexcept {
  return requests.size() + llm_calls.size() + traces.size() + sql_audits.size();
}

void ledger_batch::clear() noexcept {
  requests.clear();
  llm_calls.clear();
  traces.clear();
  sql_audits.clear();
}

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

ledger_store::ledger_store(std::unique_ptr<impl> ptr) noexcept
    : impl_(std::move(ptr)) {
  // nop
}

ledger_store::ledger_store(ledger_store&&) noexcept = default;

ledger_store& ledger_store::operator=(ledger_store&&) noexcept = default;

ledger_store::~ledger_store() = default;

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
  auto ptr = std::make_unique<impl>();
  ptr->db = std::move(*db);
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
    case SQLITE_PERM:
      return true;
    default:
      return false;
  }
}

} // namespace

bool ledger_store::last_write_storage_fault() const noexcept {
  return impl_->storage_fault;
}

domain::error ledger_store::write(const ledger_batch& batch) {
  auto& m = *impl_;
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
  if (auto err = tx->commit())
    return failed(std::move(err));
  return {};
}

} // namespace candor::data
