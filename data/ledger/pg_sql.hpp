#pragma once

// The PostgreSQL ledger's SQL text: the schema `candor_ledger` (versioned in
// its own table) and the reads, which take the same parameters and return
// the same columns as the SQLite reads in data/ledger/sql.hpp.

#include <cstddef>
#include <cstdint>

namespace candor::data::ledger_pg_sql {

/// The schema version this build writes (candor_ledger.schema_version).
inline constexpr int64_t schema_version = 3;

/// Taken with pg_advisory_xact_lock around the schema's creation, so that
/// processes starting at once create it once; released by COMMIT or
/// ROLLBACK. ("candor_l" in ASCII.)
inline constexpr const char* schema_lock_key = "7161126260141350764";

/// Run first, under the lock: the schema and the version table.
inline constexpr const char* schema_head = R"sql(
CREATE SCHEMA IF NOT EXISTS candor_ledger;
CREATE TABLE IF NOT EXISTS candor_ledger.schema_version (
  version integer NOT NULL
);
)sql";

inline constexpr const char* read_version_sql
  = "SELECT max(version) FROM candor_ledger.schema_version";

// Version 1: the SQLite schema's columns (version 3 there), with ids from
// identity columns, which several writers share without colliding, and
// booleans as booleans. `requests.writer` says which process wrote a row
// ("host:pid"); /runs does not show it. Trace rows keep their insertion
// order by id (a reused request id's rows follow the earlier ones).
inline constexpr const char* schema_v1 = R"sql(
CREATE TABLE IF NOT EXISTS candor_ledger.requests (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id  text             NOT NULL,
  ts_us       bigint           NOT NULL,
  method      text             NOT NULL,
  path        text             NOT NULL,
  route       text             NOT NULL,
  status      text             NOT NULL,
  blocked_by  text             NOT NULL,
  http_status integer          NOT NULL,
  error       text             NOT NULL,
  latency_us  bigint           NOT NULL,
  question    text             NOT NULL,
  llm_calls   integer          NOT NULL,
  tokens      bigint           NOT NULL,
  cost_usd    double precision NOT NULL,
  warnings    text             NOT NULL, -- a JSON array of strings
  writer      text             NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_ts_us
  ON candor_ledger.requests (ts_us);
CREATE INDEX IF NOT EXISTS requests_request_id
  ON candor_ledger.requests (request_id);

CREATE TABLE IF NOT EXISTS candor_ledger.llm_calls (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id       text             NOT NULL,
  ts_us            bigint           NOT NULL,
  prompt           text             NOT NULL,
  prompt_version   text             NOT NULL,
  provider         text             NOT NULL,
  model            text             NOT NULL,
  attempts         integer          NOT NULL,
  retries          integer          NOT NULL,
  fallback_used    boolean          NOT NULL,
  local_fallback   boolean          NOT NULL,
  outcome          text             NOT NULL,
  tokens_in        bigint           NOT NULL,
  tokens_out       bigint           NOT NULL,
  tokens_estimated boolean          NOT NULL,
  cost_usd         double precision NOT NULL,
  latency_us       bigint           NOT NULL
);
CREATE INDEX IF NOT EXISTS llm_calls_ts_us
  ON candor_ledger.llm_calls (ts_us);
CREATE INDEX IF NOT EXISTS llm_calls_request_id
  ON candor_ledger.llm_calls (request_id);

CREATE TABLE IF NOT EXISTS candor_ledger.trace_steps (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id text   NOT NULL,
  ts_us      bigint NOT NULL,
  seq        bigint NOT NULL,
  node       text   NOT NULL,
  outcome    text   NOT NULL,
  micros     bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS trace_steps_request_id
  ON candor_ledger.trace_steps (request_id);

CREATE TABLE IF NOT EXISTS candor_ledger.sql_audit (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id text   NOT NULL,
  ts_us      bigint NOT NULL,
  sql        text   NOT NULL,
  verdict    text   NOT NULL,
  layer      text   NOT NULL,
  reason     text   NOT NULL,
  rows       bigint NOT NULL,
  latency_us bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS sql_audit_request_id
  ON candor_ledger.sql_audit (request_id);

INSERT INTO candor_ledger.schema_version (version) VALUES (1);
)sql";

// Version 2: API keys (`candor keys`; see data/ledger/sql.hpp, version 4
// there) and the key name of each request row.
inline constexpr const char* migrate_v1_to_v2 = R"sql(
ALTER TABLE candor_ledger.requests
  ADD COLUMN IF NOT EXISTS key_name text NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS candor_ledger.api_keys (
  name         text             PRIMARY KEY,
  prefix       text             NOT NULL,
  hash         text             NOT NULL UNIQUE,
  rate         double precision NOT NULL,
  burst        bigint           NOT NULL,
  daily_tokens bigint           NOT NULL,
  created_us   bigint           NOT NULL,
  revoked_us   bigint           NOT NULL DEFAULT 0
);
INSERT INTO candor_ledger.schema_version (version) VALUES (2);
)sql";

// Version 3: conversations (see data/ledger/sql.hpp, version 5 there).
inline constexpr const char* migrate_v2_to_v3 = R"sql(
CREATE TABLE IF NOT EXISTS candor_ledger.conversation_turns (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  conversation_id text      NOT NULL,
  request_id      text      NOT NULL,
  key_name        text      NOT NULL,
  created_us      bigint    NOT NULL,
  question        text      NOT NULL,
  standalone      text      NOT NULL,
  route           text      NOT NULL,
  status          text      NOT NULL,
  answer          text      NOT NULL,
  sql             text      NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_turns_conversation
  ON candor_ledger.conversation_turns (conversation_id, id);
CREATE INDEX IF NOT EXISTS conversation_turns_created
  ON candor_ledger.conversation_turns (created_us);
INSERT INTO candor_ledger.schema_version (version) VALUES (3);
)sql";

inline constexpr const char* insert_turns_head
  = "INSERT INTO candor_ledger.conversation_turns (conversation_id, "
    "request_id, key_name, created_us, question, standalone, route, status, "
    "answer, sql) VALUES ";
inline constexpr size_t insert_turns_columns = 10;

/// (conversation ids as a text[], kept): every turn of those conversations
/// but the newest `kept` of each goes, in one statement per batch.
inline constexpr const char* trim_turns_sql
  = "DELETE FROM candor_ledger.conversation_turns WHERE id IN ("
    "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY "
    "conversation_id ORDER BY id DESC) AS newer FROM "
    "candor_ledger.conversation_turns WHERE conversation_id = ANY($1::text[])"
    ") AS t WHERE newer > $2)";

inline constexpr const char* purge_turns_sql
  = "DELETE FROM candor_ledger.conversation_turns WHERE created_us < $1";

inline constexpr const char* conversation_turns_sql
  = "SELECT request_id, key_name, created_us, question, standalone, route, "
    "status, answer, sql FROM candor_ledger.conversation_turns "
    "WHERE conversation_id = $1 AND created_us >= $2 ORDER BY id";

// -- inserts: a head and its columns' count; the rows are `($1, ..., $n)`
//    groups numbered on (pg_store.cpp) ---------------------------------------

inline constexpr const char* insert_requests_head
  = "INSERT INTO candor_ledger.requests (request_id, ts_us, method, path, "
    "route, status, blocked_by, http_status, error, latency_us, question, "
    "llm_calls, tokens, cost_usd, warnings, writer, key_name) VALUES ";
inline constexpr size_t insert_requests_columns = 17;

inline constexpr const char* insert_llm_calls_head
  = "INSERT INTO candor_ledger.llm_calls (request_id, ts_us, prompt, "
    "prompt_version, provider, model, attempts, retries, fallback_used, "
    "local_fallback, outcome, tokens_in, tokens_out, tokens_estimated, "
    "cost_usd, latency_us) VALUES ";
inline constexpr size_t insert_llm_calls_columns = 16;

inline constexpr const char* insert_trace_steps_head
  = "INSERT INTO candor_ledger.trace_steps (request_id, ts_us, seq, node, "
    "outcome, micros) VALUES ";
inline constexpr size_t insert_trace_steps_columns = 6;

inline constexpr const char* insert_sql_audit_head
  = "INSERT INTO candor_ledger.sql_audit (request_id, ts_us, sql, verdict, "
    "layer, reason, rows, latency_us) VALUES ";
inline constexpr size_t insert_sql_audit_columns = 8;

/// Rows per INSERT statement: one round trip per chunk (at most 1,600
/// parameters of PostgreSQL's 65,535).
inline constexpr size_t rows_per_insert = 100;

// -- reads (see data/ledger/sql.hpp for what each returns) --------------------

inline constexpr const char* stats_requests_sql
  = "SELECT route, status, http_status, latency_us, error "
    "FROM candor_ledger.requests WHERE ts_us BETWEEN $1 AND $2";

inline constexpr const char* stats_llm_sql
  = "SELECT count(*), count(*) FILTER (WHERE outcome <> 'ok'), "
    "COALESCE(sum(retries), 0), count(*) FILTER (WHERE fallback_used), "
    "COALESCE(sum(tokens_in), 0), COALESCE(sum(tokens_out), 0), "
    "COALESCE(sum(cost_usd), 0), count(*) FILTER (WHERE local_fallback), "
    "count(*) FILTER (WHERE prompt = 'sql_generate' AND outcome = 'ok' "
    "AND provider = 'local'), "
    "count(*) FILTER (WHERE prompt = 'sql_generate' AND outcome = 'ok' "
    "AND provider <> 'local') "
    "FROM candor_ledger.llm_calls WHERE ts_us BETWEEN $1 AND $2";

inline constexpr const char* run_request_sql
  = "SELECT request_id, ts_us, method, path, route, status, blocked_by, "
    "http_status, error, latency_us, question, llm_calls, tokens, cost_usd, "
    "warnings FROM candor_ledger.requests WHERE request_id = $1 "
    "ORDER BY ts_us DESC, id DESC LIMIT 1";

inline constexpr const char* run_request_count_sql
  = "SELECT count(*) FROM candor_ledger.requests WHERE request_id = $1";

inline constexpr const char* run_trace_sql
  = "SELECT seq, node, outcome, micros FROM candor_ledger.trace_steps "
    "WHERE request_id = $1 AND ($2::bigint IS NULL OR ts_us = $2::bigint) "
    "ORDER BY id";

inline constexpr const char* run_llm_calls_sql
  = "SELECT ts_us, prompt, prompt_version, provider, model, attempts, "
    "retries, fallback_used, outcome, tokens_in, tokens_out, "
    "tokens_estimated, cost_usd, latency_us, local_fallback "
    "FROM candor_ledger.llm_calls WHERE request_id = $1 AND "
    "($2::bigint IS NULL OR ts_us BETWEEN $2::bigint AND $3::bigint) "
    "ORDER BY id";

inline constexpr const char* run_sql_audit_sql
  = "SELECT ts_us, sql, verdict, layer, reason, rows, latency_us "
    "FROM candor_ledger.sql_audit WHERE request_id = $1 AND "
    "($2::bigint IS NULL OR ts_us BETWEEN $2::bigint AND $3::bigint) "
    "ORDER BY id";

inline constexpr const char* count_requests_sql
  = "SELECT count(*) FROM candor_ledger.requests";

inline constexpr const char* stats_keys_sql
  = "SELECT key_name, count(*), COALESCE(sum(tokens), 0), "
    "count(*) FILTER (WHERE http_status = 429) "
    "FROM candor_ledger.requests WHERE ts_us BETWEEN $1 AND $2 "
    "AND key_name <> '' GROUP BY key_name ORDER BY key_name";

inline constexpr const char* keys_list_sql
  = "SELECT name, prefix, hash, rate, burst, daily_tokens, created_us, "
    "revoked_us FROM candor_ledger.api_keys ORDER BY name";

inline constexpr const char* key_add_sql
  = "INSERT INTO candor_ledger.api_keys (name, prefix, hash, rate, burst, "
    "daily_tokens, created_us) VALUES ($1, $2, $3, $4, $5, $6, $7) "
    "ON CONFLICT DO NOTHING RETURNING name";

inline constexpr const char* key_revoke_sql
  = "UPDATE candor_ledger.api_keys SET revoked_us = $2 "
    "WHERE name = $1 AND revoked_us = 0 RETURNING name";

inline constexpr const char* key_tokens_since_sql
  = "SELECT key_name, COALESCE(sum(tokens), 0) FROM candor_ledger.requests "
    "WHERE key_name <> '' AND ts_us >= $1 GROUP BY key_name";

} // namespace candor::data::ledger_pg_sql
