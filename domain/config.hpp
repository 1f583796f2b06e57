#pragma once

// The configuration every part of candor reads, and how it is built from
// defaults, a file, the environment and flags (pure: the caller reads).

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "domain/error.hpp"

namespace candor::domain {

/// The whole configuration. Defaults live in conf/candor.json (embedded into
/// the binary at build time); a --config file, CANDOR_* environment variables
/// and flags override them, in that order. Secrets come only from the
/// environment.
struct config {
  std::string data_dir = "var";

  struct http_t {
    std::string bind = "127.0.0.1";
    uint16_t port = 8080;
    int32_t threads = 2;
    int64_t body_limit_bytes = 16384;
    /// POST /v1/chat/completions: chat clients resend the whole conversation.
    int64_t chat_body_limit_bytes = 262144;
    int64_t header_timeout_ms = 5000;
    int64_t body_timeout_ms = 10000;
    int64_t idle_timeout_ms = 30000;
    int64_t max_in_flight = 256;
    int64_t max_connections = 1024;
    /// Open connections one peer address may hold (0: no limit). Behind a
    /// reverse proxy every connection comes from the proxy: raise it.
    int64_t max_connections_per_address = 256;
    int64_t retry_after_seconds = 1;
    /// Bearer token that GET /runs/{id}, /stats and /metrics require when
    /// set (environment only); required to start when `bind` is not a
    /// loopback address.
    std::string operator_token;
    /// Without any active API key (`candor keys add`), serving on an
    /// address other than loopback is refused unless this is true
    /// (flag --allow-unauthenticated).
    bool allow_unauthenticated = false;
    /// How often a running server re-reads the API keys from the ledger
    /// (also on SIGHUP), so that a key added or revoked takes effect.
    int64_t keys_reload_seconds = 10;
  } http;

  struct actors_t {
    int32_t scheduler_threads = 2;
    /// CAF scheduler: "sharing" (one queue, condition-variable wake-ups) or
    /// "stealing" (per-worker queues that poll and sleep when idle).
    std::string scheduler_policy = "sharing";
  } actors;

  struct graph_t {
    int32_t step_cap = 25;
    int32_t llm_call_budget = 8;
    int64_t request_deadline_ms = 30000;
  } graph;

  struct llm_t {
    std::string provider = "fake";
    std::string fixtures_dir;
    std::string model = "scripted-primary";
    std::string fallback_model = "scripted-fallback";
    std::string base_url;
    std::string api_key; ///< environment only (CANDOR_LLM_API_KEY)
    int32_t max_retries = 2;
    int64_t backoff_base_ms = 20;
    int64_t attempt_timeout_ms = 20000;
    bool allow_chaos = false;
    double price_input_per_mtok_usd = 0.15;
    double price_output_per_mtok_usd = 0.60;
    /// openai provider: structured output as "json_schema" (strict schema
    /// per prompt) or "json_object" (JSON mode, for endpoints without
    /// schema support).
    std::string response_format = "json_schema";
    /// Extra PEM file of trusted CA certificates (besides the system store).
    std::string ca_file;
    int64_t max_response_bytes = 1048576; ///< bigger replies are failures
    int32_t max_idle_connections = 32;    ///< keep-alive pool per host
    int32_t client_threads = 1;           ///< I/O threads of the client
    /// openai provider: a call whose every model failed (timeouts, 5xx,
    /// 429 past the retries) is answered by the local provider instead of
    /// failing with llm_unavailable.
    bool local_fallback = true;
    /// openai provider: a data question the local planner reads whole is
    /// answered by it (router, sql_generate, sql_answer) without a model
    /// call; the rest go to the model.
    bool plan_first = true;
  } llm;

  struct guardrail_t {
    std::string mode = "rules";
    std::string canary = "TAILWIND-7731";
    /// Model of the input classifier (rules+model); empty: llm.model.
    /// Environment: CANDOR_GUARD_MODEL.
    std::string model;
  } guardrail;

  /// The data branch.
  struct sql_t {
    uint64_t seed = 42; ///< sales generator seed
    int32_t max_corrections = 3;
    int32_t max_rows = 200;     ///< rows kept from an execution
    int32_t rows_to_model = 50; ///< rows shown to sql_answer's model
    int32_t executor_pool = 2;  ///< pre-started executor processes
    int64_t deadline_ms = 5000; ///< SIGKILL after this long
    /// What an executor may allocate beyond its own mapped image (its
    /// RLIMIT_AS is that image plus this).
    int64_t executor_memory_mb = 256;
    int64_t heap_limit_mb = 64;        ///< sqlite3_hard_heap_limit64
    int32_t executor_cpu_seconds = 10; ///< RLIMIT_CPU of an executor
    /// Where the sales warehouse lives: "sqlite" (the generated file in the
    /// data directory) or "postgres" (schema `sales` at `postgres_dsn`).
    std::string backend = "sqlite";
    /// libpq connection string of the PostgreSQL warehouse; a secret (it
    /// may hold a password), so from the environment only.
    std::string postgres_dsn;
    /// A SQLite database of one's own to answer from (`--db`), read as it
    /// is, never generated; empty: `<data-dir>/sales.db`, generated from
    /// `seed` on first use.
    std::string database;
    /// The catalog that describes the database (`--catalog`); empty: the
    /// built-in conf/catalog.json. The PostgreSQL warehouse takes it too.
    std::string catalog;
  } sql;

  /// The documents branch.
  struct retrieval_t {
    std::string mode = "fusion"; ///< "tfidf", "bm25" or "fusion"
    int32_t top_k = 3;
    int32_t chunk_size = 600;    ///< target characters per chunk
    int32_t dimensions = 262144; ///< hashed TF-IDF features
    /// Refusal threshold on the top passage's score (set by calibrate).
    double threshold = 0.1;
    std::string admin_token; ///< environment only (re-index)
  } retrieval;

  struct ledger_t {
    int64_t flush_interval_ms = 50;
    int64_t max_batch = 512;
    /// Nice levels the writer thread runs below the server (0..19):
    /// bookkeeping yields to serving.
    int64_t writer_nice = 10;
    /// Records waiting to be written (a failing disk) beyond which new
    /// questions are answered 503 until the writer catches up: the queue
    /// of rows kept for a failed disk is bounded, and no row is dropped.
    int64_t max_backlog_records = 1000000;
    /// Where the ledger lives: "sqlite" (`<dataDir>/ledger.db`) or
    /// "postgres" (schema `candor_ledger` at `postgres_dsn`, which several
    /// candor processes may share).
    std::string backend = "sqlite";
    /// libpq connection string of the ledger's PostgreSQL database; a
    /// secret (it may hold a password), so from the environment only
    /// (CANDOR_LEDGER_POSTGRES_DSN).
    std::string postgres_dsn;
  } ledger;

  /// Conversations (`conversationId` on /ask): how long and how much of
  /// them the ledger keeps, and how much of one the graph reads.
  struct conversations_t {
    /// A conversation whose turns are all older than this is gone (404).
    int64_t retention_hours = 168;
    /// Turns kept per conversation; older ones are dropped.
    int64_t max_turns = 20;
    /// Each text of a turn (question, answer, SQL) is cut to this.
    int64_t max_turn_bytes = 4096;
    /// The earlier turns a follow-up's router and generators read.
    int64_t history_turns = 6;
  } conversations;

  struct log_t {
    std::string level = "info";
  } log;

  /// Directory of the scripted model fixtures (resolved default).
  std::string fixtures_path() const;
};

/// Environment lookup, injectable for tests.
using env_lookup = std::map<std::string, std::string>;

/// A configuration file as the caller read it (domain/ reads no files).
struct config_file {
  std::string name; ///< the path, for messages
  std::string text;
};

/// What the configuration's paths are on the caller's file system: the
/// check that llm.fixturesDir is a directory and llm.caFile a file asks
/// these instead of looking itself.
struct path_kinds {
  std::function<bool(const std::string&)> is_directory;
  std::function<bool(const std::string&)> is_file;
};

/// Builds the configuration: embedded defaults, then `file` (if any), then
/// `env`, then `flags` (dotted keys such as "http.port"). Unknown keys,
/// wrong types and out-of-range values are errors that name the key
/// (`config_invalid`) and where the value came from; `flag_names` maps a
/// key of `flags` to the flag that set it ("http.port" -> "--port").
/// data::load_config reads the file and the environment for it.
outcome<config>
parse_config(std::string_view defaults_json, const config_file* file,
             const env_lookup& env,
             const std::map<std::string, std::string>& flags,
             const std::map<std::string, std::string>& flag_names,
             const path_kinds& paths);

/// The embedded conf/candor.json.
std::string_view default_config_json();

/// The environment variable name of a dotted key: "llm.apiKey" ->
/// "CANDOR_LLM_API_KEY".
std::string env_name(std::string_view dotted_key);

} // namespace candor::domain
