#pragma once

// The ledger's storage behind data::ledger_store: writing a batch and
// running the named reads that /stats and /runs are built from. One
// implementation per database (SQLite: data/ledger/store.cpp, PostgreSQL:
// data/ledger/pg_store.cpp); the JSON is built once, from their rows, in
// data/ledger/queries.cpp. Not for other users.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "data/ledger/store.hpp"
#include "domain/error.hpp"

namespace candor::data {

/// One row of a read, its columns by index in the order the read names
/// them (data/ledger/sql.hpp). Valid only during the call it is given to.
class ledger_row {
public:
  virtual std::string text(int col) const = 0;
  /// An integer column; a boolean is 0 or 1.
  virtual int64_t int64(int col) const = 0;
  virtual double real(int col) const = 0;

protected:
  ~ledger_row() = default;
};

/// The reads, each with its parameters and columns as documented beside its
/// SQLite text in data/ledger/sql.hpp (the PostgreSQL texts in
/// data/ledger/pg_sql.hpp take and return the same).
enum class ledger_read {
  stats_requests,    ///< (from_us, to_us)
  stats_llm,         ///< (from_us, to_us): one row
  run_request_count, ///< (id): one row
  run_request,       ///< (id)
  run_trace,         ///< (id, ts_us or NULL)
  run_llm_calls,     ///< (id, from_us or NULL, to_us or NULL)
  run_sql_audit,     ///< (id, from_us or NULL, to_us or NULL)
  count_requests,    ///< (): one row
  stats_keys,        ///< (from_us, to_us): one row per key name
  keys_list,         ///< (): every API key
  key_add,           ///< writer only; (name, ..., created_us) RETURNING
  key_revoke,        ///< writer only; (name, revoked_us) RETURNING
  key_tokens_since,  ///< (from_us): tokens per key name
  conversation_turns, ///< (conversation_id, from_us): its turns
};

/// A read's parameter: NULL, an integer, a text (borrowed for the call) or
/// a real.
using ledger_param
  = std::variant<std::monostate, int64_t, std::string_view, double>;

using ledger_row_fn = std::function<void(const ledger_row&)>;

class ledger_backend {
public:
  virtual ~ledger_backend() = default;

  /// "sqlite" or "postgres".
  virtual const char* name() const noexcept = 0;

  /// See ledger_store::write and ledger_store::last_write_storage_fault.
  virtual domain::error write(const ledger_batch& batch) = 0;
  virtual bool last_write_storage_fault() const noexcept = 0;

  /// Runs `body` (reads) in one read-only snapshot of the database.
  virtual domain::error snapshot(const std::function<domain::error()>& body)
    = 0;

  /// The writer's bounds on conversations: the turns kept per
  /// conversation, and how old a kept turn may be (microseconds).
  void bound_conversations(int64_t max_turns, int64_t retention_us) noexcept {
    max_turns_ = max_turns;
    retention_us_ = retention_us;
  }
  /// Runs `what` with `params` and calls `each` for every row.
  virtual domain::error read(ledger_read what,
                             std::initializer_list<ledger_param> params,
                             const ledger_row_fn& each)
    = 0;

protected:
  int64_t max_turns_ = 20;
  int64_t retention_us_ = int64_t{168} * 3600 * 1000000;
  /// The turns older than this go (wall clock, microseconds).
  int64_t turn_cutoff_us() const noexcept {
    return now_us() - retention_us_;
  }
  /// Whether a batch that wrote turns should also drop the expired ones:
  /// the first time, then at most once a minute (a retention is hours;
  /// purging with every batch cost a statement per batch for nothing).
  bool purge_due() noexcept {
    auto now = now_us();
    if (last_purge_us_ != 0 && now - last_purge_us_ < purge_interval_us)
      return false;
    last_purge_us_ = now;
    return true;
  }

private:
  static constexpr int64_t purge_interval_us = int64_t{60} * 1000000;
  int64_t last_purge_us_ = 0;
  static int64_t now_us() noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
  }
};

/// A request's warnings as stored: a JSON array of strings.
std::string warnings_to_json(const std::vector<std::string>& warnings);

/// The PostgreSQL ledger (see ledger_store::open_postgres).
domain::outcome<std::unique_ptr<ledger_backend>>
open_pg_ledger(const std::string& dsn, bool writer);

} // namespace candor::data
