#pragma once

// The ledger's SQL text: the versioned schema and its migrations, and
// every statement ledger_store prepares.

#include <cstddef>
#include <string>

/// The ledger's SQL: the schema (versioned with PRAGMA user_version) and
/// every statement ledger_store prepares. Kept apart from the code that
/// runs them so the schema can be read in one place.
namespace candor::data::ledger_sql {

// -- schema -------------------------------------------------------------------

// A new database runs every step in order (version 1, then each migration),
// so the steps that upgrade users' databases are the ones every test runs.
// A later version adds a step here and in `create_schema` and bumps
// `ledger_schema_version`.

// Version 1.
inline constexpr const char* schema_v1 = R"sql(
CREATE TABLE requests (
  id          INTEGER PRIMARY KEY,
  request_id  TEXT    NOT NULL,
  ts_us       INTEGER NOT NULL,
  method      TEXT    NOT NULL,
  path        TEXT    NOT NULL,
  route       TEXT    NOT NULL,
  status      TEXT    NOT NULL,
  blocked_by  TEXT    NOT NULL,
  http_status INTEGER NOT NULL,
  error       TEXT    NOT NULL,
  latency_us  INTEGER NOT NULL,
  question    TEXT    NOT NULL,
  llm_calls   INTEGER NOT NULL,
  tokens      INTEGER NOT NULL,
  cost_usd    REAL    NOT NULL,
  warnings    TEXT    NOT NULL -- a JSON array of strings
) STRICT;
CREATE INDEX requests_ts_us ON requests (ts_us);
CREATE INDEX requests_request_id ON requests (request_id);

CREATE TABLE llm_calls (
  id               INTEGER PRIMARY KEY,
  request_id       TEXT    NOT NULL,
  ts_us            INTEGER NOT NULL,
  prompt           TEXT    NOT NULL,
  prompt_version   TEXT    NOT NULL,
  provider         TEXT    NOT NULL,
  model            TEXT    NOT NULL,
  attempts         INTEGER NOT NULL,
  retries          INTEGER NOT NULL,
  fallback_used    INTEGER NOT NULL,
  outcome          TEXT    NOT NULL,
  tokens_in        INTEGER NOT NULL,
  tokens_out       INTEGER NOT NULL,
  tokens_estimated INTEGER NOT NULL,
  cost_usd         REAL    NOT NULL,
  latency_us       INTEGER NOT NULL
) STRICT;
CREATE INDEX llm_calls_ts_us ON llm_calls (ts_us);
CREATE INDEX llm_calls_request_id ON llm_calls (request_id);

CREATE TABLE trace_steps (
  id         INTEGER PRIMARY KEY,
  request_id TEXT    NOT NULL,
  ts_us      INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  node       TEXT    NOT NULL,
  outcome    TEXT    NOT NULL,
  micros     INTEGER NOT NULL
) STRICT;
CREATE INDEX trace_steps_request_id ON trace_steps (request_id);

CREATE TABLE sql_audit (
  id         INTEGER PRIMARY KEY,
  request_id TEXT    NOT NULL,
  ts_us      INTEGER NOT NULL,
  sql        TEXT    NOT NULL,
  verdict    TEXT    NOT NULL,
  layer      TEXT    NOT NULL,
  reason     TEXT    NOT NULL,
  rows       INTEGER NOT NULL,
  latency_us INTEGER NOT NULL
) STRICT;
CREATE INDEX sql_audit_ts_us ON sql_audit (ts_us);
CREATE INDEX sql_audit_request_id ON sql_audit (request_id);

PRAGMA user_version = 1;
)sql";

// Version 2: the ledger writes four or more trace rows per request, and a
// rowid table plus its request_id index cost two B-tree inserts per row.
// Clustered on (request_id, ord) the table is its own index for /runs: one
// insert per row, and fewer pages written to the WAL. `ord` numbers a
// request id's rows from 0 in insertion order; it equals `seq` unless a
// client reused the id (X-Request-Id), in which case the later trace's rows
// follow the earlier ones (the writer looks up the next free `ord`). The
// rows keep their order: row_number() over v1's rowids.
// sql_audit_ts_us goes too: no query reads sql_audit by time (the /stats
// queries read requests and llm_calls), so it only cost an insert per row.
inline constexpr const char* migrate_v1_to_v2 = R"sql(
CREATE TABLE trace_steps_v2 (
  request_id TEXT    NOT NULL,
  ord        INTEGER NOT NULL,
  ts_us      INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  node       TEXT    NOT NULL,
  outcome    TEXT    NOT NULL,
  micros     INTEGER NOT NULL,
  PRIMARY KEY (request_id, ord)
) STRICT, WITHOUT ROWID;
INSERT INTO trace_steps_v2 (request_id, ord, ts_us, seq, node, outcome,
                            micros)
  SELECT request_id,
         row_number() OVER (PARTITION BY request_id ORDER BY id) - 1,
         ts_us, seq, node, outcome, micros
  FROM trace_steps;
DROP TABLE trace_steps;
ALTER TABLE trace_steps_v2 RENAME TO trace_steps;
DROP INDEX sql_audit_ts_us;

PRAGMA user_version = 2;
)sql";

// Version 3: a model call whose every model failed may be answered by the
// local provider instead (llm.localFallback); such a row says so, and
// /stats counts them. Rows written before it were not fallbacks.
inline constexpr const char* migrate_v2_to_v3 = R"sql(
ALTER TABLE llm_calls ADD COLUMN local_fallback INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 3;
)sql";

// Version 4: API keys (`candor keys`). A key is stored as its SHA-256
// (hex) and a short prefix for display, never itself; `revoked_us` is 0
// while the key is active. Each request row names the key it came with
// (empty without keys); the per-key reads go by requests_ts_us (a
// window, or since midnight), so no index is added to the writer's work.
inline constexpr const char* migrate_v3_to_v4 = R"sql(
ALTER TABLE requests ADD COLUMN key_name TEXT NOT NULL DEFAULT '';
CREATE TABLE api_keys (
  name         TEXT    PRIMARY KEY,
  prefix       TEXT    NOT NULL,
  hash         TEXT    NOT NULL UNIQUE,
  rate         REAL    NOT NULL, -- requests per second
  burst        INTEGER NOT NULL,
  daily_tokens INTEGER NOT NULL, -- 0: no budget
  created_us   INTEGER NOT NULL,
  revoked_us   INTEGER NOT NULL DEFAULT 0
) STRICT;

PRAGMA user_version = 4;
)sql";

// Version 5: conversations (`conversationId` on /ask). A turn is a
// request's question, its standalone reading, route, status, answer and
// SQL, each cut to conversations.maxTurnBytes; `key_name` is the key that
// owns the conversation. The writer keeps at most conversations.maxTurns
// turns of each and drops turns older than the retention.
inline constexpr const char* migrate_v4_to_v5 = R"sql(
CREATE TABLE conversation_turns (
  id              INTEGER PRIMARY KEY,
  conversation_id TEXT    NOT NULL,
  request_id      TEXT    NOT NULL,
  key_name        TEXT    NOT NULL,
  created_us      INTEGER NOT NULL,
  question        TEXT    NOT NULL,
  standalone      TEXT    NOT NULL,
  route           TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  answer          TEXT    NOT NULL,
  sql             TEXT    NOT NULL
) STRICT;
CREATE INDEX conversation_turns_conversation
  ON conversation_turns (conversation_id, id);
CREATE INDEX conversation_turns_created ON conversation_turns (created_us);

PRAGMA user_version = 5;
)sql";

/// `INSERT INTO conversation_turns ... VALUES` with `rows` rows, each taking
/// 10 parameters in this order: conversation_id, request_id, key_name,
/// created_us, question, standalone, route, status, answer, sql.
std::string insert_turns_sql(size_t rows);

/// (conversation_id, kept): drops all but the newest `kept` turns.
inline constexpr const char* trim_turns_sql
  = "DELETE FROM conversation_turns WHERE conversation_id = ?1 AND id <= "
    "(SELECT id FROM conversation_turns WHERE conversation_id = ?1 "
    "ORDER BY id DESC LIMIT 1 OFFSET ?2)";

/// (cutoff_us): drops the turns older than the retention.
inline constexpr const char* purge_turns_sql
  = "DELETE FROM conversation_turns WHERE created_us < ?1";

/// (conversation_id, from_us): request_id, key_name, created_us, question,
/// standalone, route, status, answer, sql of its turns, oldest first.
inline constexpr const char* conversation_turns_sql
  = "SELECT request_id, key_name, created_us, question, standalone, route, "
    "status, answer, sql FROM conversation_turns "
    "WHERE conversation_id = ?1 AND created_us >= ?2 ORDER BY id";

/// Requests and model calls are inserted up to this many rows per
/// statement: one execution per chunk of a batch instead of one per row
/// (each execution costs about as much again as the row it inserts).
inline constexpr size_t rows_per_insert = 8;

/// `INSERT OR FAIL INTO requests ... VALUES` with `rows` rows, each taking
/// 16 parameters in this order: request_id, ts_us, method, path, route,
/// status, blocked_by, http_status, error, latency_us, question, llm_calls,
/// tokens, cost_usd, warnings, key_name.
std::string insert_requests_sql(size_t rows);

/// `INSERT OR FAIL INTO llm_calls ... VALUES` with `rows` rows, each taking
/// 16 parameters in this order: request_id, ts_us, prompt, prompt_version,
/// provider, model, attempts, retries, fallback_used, local_fallback,
/// outcome, tokens_in, tokens_out, tokens_estimated, cost_usd, latency_us.
std::string insert_llm_calls_sql(size_t rows);

/// Trace steps are inserted up to this many rows per statement: one
/// execution instead of one per step (a trace has 2 to about 10 steps).
inline constexpr size_t trace_rows_per_insert = 8;

/// `INSERT INTO trace_steps ... VALUES` (a plain INSERT, see
/// ledger_sql.cpp) with `rows` rows sharing ?1 (request id), ?2 (timestamp)
/// and ?3 (the `ord` of step 0), each row then taking four parameters (seq,
/// node, outcome, micros; ord is ?3 + seq).
std::string insert_trace_steps_sql(size_t rows);

/// The first free `ord` of a request id (0 when it has no trace rows).
inline constexpr const char* next_trace_ord_sql
  = "SELECT COALESCE(MAX(ord) + 1, 0) FROM trace_steps WHERE request_id = ?1";

inline constexpr const char* insert_sql_audit_sql
  = "INSERT OR FAIL INTO sql_audit (request_id, ts_us, sql, verdict, layer, "
    "reason, rows, latency_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

inline constexpr const char* stats_requests_sql
  = "SELECT route, status, http_status, latency_us, error FROM requests "
    "WHERE ts_us BETWEEN ?1 AND ?2";

inline constexpr const char* stats_llm_sql
  = "SELECT COUNT(*), TOTAL(outcome <> 'ok'), TOTAL(retries), "
    "TOTAL(fallback_used <> 0), TOTAL(tokens_in), TOTAL(tokens_out), "
    "TOTAL(cost_usd), TOTAL(local_fallback <> 0), "
    "TOTAL(prompt = 'sql_generate' AND outcome = 'ok' AND provider = 'local'), "
    "TOTAL(prompt = 'sql_generate' AND outcome = 'ok' AND provider <> 'local') "
    "FROM llm_calls WHERE ts_us BETWEEN ?1 AND ?2";

inline constexpr const char* run_request_sql
  = "SELECT request_id, ts_us, method, path, route, status, blocked_by, "
    "http_status, error, latency_us, question, llm_calls, tokens, cost_usd, "
    "warnings FROM requests WHERE request_id = ?1 "
    "ORDER BY ts_us DESC, id DESC LIMIT 1";

// A client may reuse a request id (X-Request-Id): /runs shows the latest
// request with that id, and of the trace, model-call and SQL rows only
// that request's: trace rows carry the request's arrival time, model calls
// and statements fall between its arrival and its end. ?2 and ?3 are that
// window; both NULL (every row of the id) when the id was used once.

/// How many request rows carry the id.
inline constexpr const char* run_request_count_sql
  = "SELECT COUNT(*) FROM requests WHERE request_id = ?1";

inline constexpr const char* run_trace_sql
  = "SELECT seq, node, outcome, micros FROM trace_steps "
    "WHERE request_id = ?1 AND (?2 IS NULL OR ts_us = ?2) ORDER BY ord";

inline constexpr const char* run_llm_calls_sql
  = "SELECT ts_us, prompt, prompt_version, provider, model, attempts, "
    "retries, fallback_used, outcome, tokens_in, tokens_out, "
    "tokens_estimated, cost_usd, latency_us, local_fallback FROM llm_calls "
    "WHERE request_id = ?1 AND (?2 IS NULL OR ts_us BETWEEN ?2 AND ?3) "
    "ORDER BY id";

inline constexpr const char* run_sql_audit_sql
  = "SELECT ts_us, sql, verdict, layer, reason, rows, latency_us "
    "FROM sql_audit "
    "WHERE request_id = ?1 AND (?2 IS NULL OR ts_us BETWEEN ?2 AND ?3) "
    "ORDER BY id";

inline constexpr const char* count_requests_sql
  = "SELECT COUNT(*) FROM requests";

// -- API keys (the key commands run these on a writer connection) -------------

/// Per key over (from_us, to_us): key_name, requests, tokens, 429s.
inline constexpr const char* stats_keys_sql
  = "SELECT key_name, COUNT(*), TOTAL(tokens), TOTAL(http_status = 429) "
    "FROM requests WHERE ts_us BETWEEN ?1 AND ?2 AND key_name <> '' "
    "GROUP BY key_name ORDER BY key_name";

/// Every key: name, prefix, hash, rate, burst, daily_tokens, created_us,
/// revoked_us.
inline constexpr const char* keys_list_sql
  = "SELECT name, prefix, hash, rate, burst, daily_tokens, created_us, "
    "revoked_us FROM api_keys ORDER BY name";

/// (name, prefix, hash, rate, burst, daily_tokens, created_us): one row
/// (the name) when added, none when the name or the hash exists.
inline constexpr const char* key_add_sql
  = "INSERT INTO api_keys (name, prefix, hash, rate, burst, daily_tokens, "
    "created_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING "
    "RETURNING name";

/// (name, revoked_us): one row when an active key was revoked.
inline constexpr const char* key_revoke_sql
  = "UPDATE api_keys SET revoked_us = ?2 WHERE name = ?1 AND revoked_us = 0 "
    "RETURNING name";

/// (from_us): per key name, the tokens of its requests since then.
inline constexpr const char* key_tokens_since_sql
  = "SELECT key_name, TOTAL(tokens) FROM requests "
    "WHERE key_name <> '' AND ts_us >= ?1 GROUP BY key_name";

} // namespace candor::data::ledger_sql
