#pragma once

// Declares data::ledger_store, the connection to the ledger database, the
// batches it writes and the results of its /stats and /runs reads.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "domain/error.hpp"
#include "domain/records.hpp"

namespace candor::domain {
struct config;
}

/// The ledger database (`<dataDir>/ledger.db`, or the schema `candor_ledger`
/// of a PostgreSQL database): one row per request, per model call, per graph
/// step and per SQL statement. The ledger actor owns the process's only
/// writer; `/stats` and `/runs/{id}` read through their own connections (WAL
/// lets them read while the writer writes).
namespace candor::data {

class ledger_backend;

/// Where the ledger lives: a SQLite file (`backend` "sqlite", `path`) or a
/// PostgreSQL database (`backend` "postgres", `dsn`, a secret).
struct ledger_location {
  std::string backend = "sqlite";
  std::string path;
  std::string dsn;

  static ledger_location sqlite(std::string path);
  static ledger_location postgres(std::string dsn);
  /// `ledger.backend` of `cfg`: `<dataDir>/ledger.db` or
  /// `ledger.postgresDsn`.
  static ledger_location from(const domain::config& cfg);

  /// For logs and errors: "sqlite <path>" or "postgres" (never the DSN).
  std::string describe() const;
};

/// Records waiting to be written together, in one transaction.
struct ledger_batch {
  std::vector<domain::request_record> requests;
  std::vector<domain::llm_call_record> llm_calls;
  std::vector<domain::trace_record> traces;
  std::vector<domain::sql_audit_record> sql_audits;

  bool empty() const noexcept;
  /// The number of records (a trace counts once, whatever its length).
  size_t size() const noexcept;
  void clear() noexcept;
};

/// The nearest-rank percentile: the value at 1-based rank ceil(p/100 * N) of
/// `sorted` (ascending), with the rank clamped to [1, N]. Returns 0 for an
/// empty vector.
double nearest_rank(const std::vector<double>& sorted, double p);

/// An API key as the ledger stores it (`candor keys`): never the key
/// itself, only its SHA-256 and a short prefix for display.
struct api_key {
  std::string name;   ///< unique, [a-z0-9_-]{1,40}
  std::string prefix; ///< the key's first characters ("cnd_AbCd")
  std::string hash;   ///< SHA-256 of the key, lowercase hex
  double rate = 5;    ///< requests per second (token bucket refill)
  int64_t burst = 10; ///< bucket size
  int64_t daily_tokens = 1000000; ///< model tokens per UTC day; 0: no budget
  int64_t created_us = 0;
  int64_t revoked_us = 0; ///< 0 while active
};

/// A conversation turn as the ledger keeps it: the turn and the name of
/// the API key it came with (the conversation's owner).
struct stored_turn {
  std::string key_name;
  domain::turn t;
};

/// The schema version this build writes (`PRAGMA user_version`).
inline constexpr int64_t ledger_schema_version = 5;

/// One connection to the ledger, on either backend (data/ledger/backend.hpp);
/// both give the same JSON for the same rows. SQLite statements are
/// prepared once: at open, and the multi-row inserts on first use.
/// Move-only and not thread-safe: one owner per instance, or threads that
/// take turns under a lock of their own (the ledger writer's two threads).
class ledger_store {
public:
  /// `writer=true`: creates the parent directory and the schema when missing
  /// and migrates an older one in place, keeping its rows (versioned with
  /// PRAGMA user_version; a newer version is an error), WAL
  /// mode, synchronous=NORMAL. `writer=false`: a read connection with
  /// `query_only` on, for /stats and /runs; the schema must already exist.
  static domain::outcome<ledger_store> open(const std::string& path,
                                            bool writer);

  /// The ledger in the schema `candor_ledger` of the PostgreSQL database at
  /// `dsn`. `writer=true` creates the schema when missing (safe when
  /// several processes start at once: under a transaction-scoped advisory
  /// lock); `writer=false` needs it to exist and reads in read-only
  /// transactions. A connection lost between two calls is re-opened by the
  /// next one.
  static domain::outcome<ledger_store> open_postgres(const std::string& dsn,
                                                     bool writer);

  /// `open` or `open_postgres`, as `where` says.
  static domain::outcome<ledger_store> open(const ledger_location& where,
                                            bool writer);

  ledger_store(ledger_store&&) noexcept;
  ledger_store& operator=(ledger_store&&) noexcept;
  ledger_store(const ledger_store&) = delete;
  ledger_store& operator=(const ledger_store&) = delete;
  ~ledger_store();

  /// Writes the whole batch in ONE transaction: all of it or none of it.
  domain::error write(const ledger_batch& batch);

  /// After a failed write(): true when SQLite's extended result code says
  /// the storage failed (a full disk, an I/O error, a database that is or
  /// became read-only, a file that cannot be opened, a lock held too long)
  /// rather than a row (a constraint, a trigger). On PostgreSQL, decided on
  /// the SQLSTATE's class: a lost connection (08, or none at all),
  /// insufficient resources (53), operator intervention (57), a system
  /// error (58) or a rolled-back transaction (40: deadlock, serialization)
  /// is the storage; any other (23 integrity, 22 data) is a row. The writer keeps a batch
  /// queued through a storage fault and splits it only for a row fault.
  /// Decided on the code, not on the message text.
  bool last_write_storage_fault() const noexcept;

  /// `/stats` JSON for the window [now_us - window_seconds * 1e6, now_us]
  /// (both ends included), read from one snapshot.
  domain::outcome<std::string> stats_json(const std::string& window_label,
                                          int64_t window_seconds,
                                          int64_t now_us,
                                          bool cost_is_fictional);

  /// `/runs/{id}` JSON; `not_found` when neither a request row nor a trace
  /// exists for the id. When a client reused an id, the latest request row is
  /// shown with every trace step, model call and SQL statement of that id.
  domain::outcome<std::string> run_json(const std::string& request_id);

  /// See ledger_backend::bound_conversations (the writer's connection).
  void bound_conversations(int64_t max_turns, int64_t retention_us) noexcept;
  /// The turns of conversation `id` since `from_us`, oldest first, each
  /// with the name of the key it came with; empty when there are none.
  domain::outcome<std::vector<stored_turn>>
  conversation(const std::string& id, int64_t from_us);
  /// Rows in `requests` (tests, /health).
  domain::outcome<int64_t> count_requests();

  /// "sqlite" or "postgres".
  const char* backend_name() const noexcept;

  // -- API keys (data/ledger/keys.cpp); adding and revoking need a writer.

  /// False when a key with that name (revoked or not) or hash exists.
  domain::outcome<bool> add_key(const api_key& key);
  /// False when no active key has that name.
  domain::outcome<bool> revoke_key(const std::string& name, int64_t now_us);
  /// Every key, active and revoked, by name.
  domain::outcome<std::vector<api_key>> list_keys();
  /// The model tokens of each key's requests since `from_us`.
  domain::outcome<std::map<std::string, int64_t>>
  key_tokens_since(int64_t from_us);

private:
  explicit ledger_store(std::unique_ptr<ledger_backend> ptr) noexcept;

  std::unique_ptr<ledger_backend> impl_;
};

} // namespace candor::data
