// The configuration: every key with its type and range, applied from the
// built-in defaults, a file, the environment and flags, then checked whole.

#include "domain/config.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/json.hpp>

#include "domain/build_info.hpp"
#include "domain/config_fields.hpp"
#include "domain/embedded.hpp"
#include "domain/json_text.hpp"

namespace candor::domain {

namespace json = boost::json;

namespace {

using namespace config_detail;

#define CANDOR_MEMBER(path)                                                    \
  [](config & c) -> auto& {                                                    \
    return c.path;                                                             \
  }

const std::vector<field>& fields() {
  static const std::vector<field> table = [] {
    std::vector<field> t;
    t.push_back(make_string("dataDir", CANDOR_MEMBER(data_dir), non_empty));
    t.push_back(make_string("http.bind", CANDOR_MEMBER(http.bind), ip_address));
    t.push_back(make_int("http.port", CANDOR_MEMBER(http.port), 0, 65535));
    t.push_back(make_int("http.threads", CANDOR_MEMBER(http.threads), 1, 64));
    t.push_back(make_int("http.bodyLimitBytes",
                         CANDOR_MEMBER(http.body_limit_bytes), 64,
                         16 * 1024 * 1024));
    t.push_back(make_int("http.chatBodyLimitBytes",
                         CANDOR_MEMBER(http.chat_body_limit_bytes), 64,
                         16 * 1024 * 1024));
    t.push_back(make_int("http.headerTimeoutMs",
                         CANDOR_MEMBER(http.header_timeout_ms), 10, 600000));
    t.push_back(make_int("http.bodyTimeoutMs",
                         CANDOR_MEMBER(http.body_timeout_ms), 10, 600000));
    t.push_back(make_int("http.idleTimeoutMs",
                         CANDOR_MEMBER(http.idle_timeout_ms), 10, 3600000));
    t.push_back(make_int("http.maxInFlight", CANDOR_MEMBER(http.max_in_flight),
                         1, 1000000));
    t.push_back(make_int("http.maxConnections",
                         CANDOR_MEMBER(http.max_connections), 1, 1000000));
    t.push_back(make_int("http.maxConnectionsPerAddress",
                         CANDOR_MEMBER(http.max_connections_per_address), 0,
                         1000000));
    t.push_back(make_int("http.retryAfterSeconds",
                         CANDOR_MEMBER(http.retry_after_seconds), 1, 3600));
    t.push_back(make_bool("http.allowUnauthenticated",
                          CANDOR_MEMBER(http.allow_unauthenticated)));
    t.push_back(make_int("http.keysReloadSeconds",
                         CANDOR_MEMBER(http.keys_reload_seconds), 1, 86400));
    t.push_back(make_int("actors.schedulerThreads",
                         CANDOR_MEMBER(actors.scheduler_threads), 1, 64));
    t.push_back(make_string("actors.schedulerPolicy",
                            CANDOR_MEMBER(actors.scheduler_policy),
                            {"sharing", "stealing"}));
    t.push_back(
      make_int("graph.stepCap", CANDOR_MEMBER(graph.step_cap), 1, 1000));
    t.push_back(make_int("graph.llmCallBudget",
                         CANDOR_MEMBER(graph.llm_call_budget), 0, 100));
    t.push_back(make_int("graph.requestDeadlineMs",
                         CANDOR_MEMBER(graph.request_deadline_ms), 1, 3600000));
    t.push_back(make_string("llm.provider", CANDOR_MEMBER(llm.provider),
                            {"local", "fake", "openai"}));
    t.push_back(
      make_string("llm.fixturesDir", CANDOR_MEMBER(llm.fixtures_dir)));
    t.push_back(make_string("llm.model", CANDOR_MEMBER(llm.model)));
    t.push_back(
      make_string("llm.fallbackModel", CANDOR_MEMBER(llm.fallback_model)));
    t.push_back(make_string("llm.baseUrl", CANDOR_MEMBER(llm.base_url)));
    {
      auto f = make_string("llm.apiKey", CANDOR_MEMBER(llm.api_key));
      f.secret = true;
      t.push_back(std::move(f));
    }
    t.push_back(
      make_int("llm.maxRetries", CANDOR_MEMBER(llm.max_retries), 0, 10));
    t.push_back(make_int("llm.backoffBaseMs",
                         CANDOR_MEMBER(llm.backoff_base_ms), 0, 60000));
    t.push_back(make_int("llm.attemptTimeoutMs",
                         CANDOR_MEMBER(llm.attempt_timeout_ms), 10, 600000));
    t.push_back(make_bool("llm.allowChaos", CANDOR_MEMBER(llm.allow_chaos)));
    t.push_back(make_double("llm.priceInputPerMTokUsd",
                            CANDOR_MEMBER(llm.price_input_per_mtok_usd), 0,
                            1000));
    t.push_back(make_double("llm.priceOutputPerMTokUsd",
                            CANDOR_MEMBER(llm.price_output_per_mtok_usd), 0,
                            1000));
    t.push_back(make_string("llm.responseFormat",
                            CANDOR_MEMBER(llm.response_format),
                            {"json_schema", "json_object"}));
    t.push_back(make_string("llm.caFile", CANDOR_MEMBER(llm.ca_file)));
    t.push_back(make_int("llm.maxResponseBytes",
                         CANDOR_MEMBER(llm.max_response_bytes), 1024,
                         67108864));
    t.push_back(make_int("llm.maxIdleConnections",
                         CANDOR_MEMBER(llm.max_idle_connections), 0, 1024));
    t.push_back(
      make_int("llm.clientThreads", CANDOR_MEMBER(llm.client_threads), 1, 16));
    t.push_back(
      make_bool("llm.localFallback", CANDOR_MEMBER(llm.local_fallback)));
    t.push_back(make_bool("llm.planFirst", CANDOR_MEMBER(llm.plan_first)));
    {
      auto f = make_string("guardrail.model", CANDOR_MEMBER(guardrail.model));
      f.env = "CANDOR_GUARD_MODEL";
      t.push_back(std::move(f));
    }
    t.push_back(make_string("guardrail.mode", CANDOR_MEMBER(guardrail.mode),
                            {"rules", "rules+model", "off"}));
    t.push_back(
      make_string("guardrail.canary", CANDOR_MEMBER(guardrail.canary)));
    t.push_back(make_int("sql.seed", CANDOR_MEMBER(sql.seed), 0,
                         std::numeric_limits<int64_t>::max()));
    t.push_back(make_int("sql.maxCorrections",
                         CANDOR_MEMBER(sql.max_corrections), 0, 10));
    t.push_back(make_int("sql.maxRows", CANDOR_MEMBER(sql.max_rows), 1, 200));
    t.push_back(
      make_int("sql.rowsToModel", CANDOR_MEMBER(sql.rows_to_model), 0, 200));
    t.push_back(
      make_int("sql.executorPool", CANDOR_MEMBER(sql.executor_pool), 1, 64));
    t.push_back(
      make_int("sql.deadlineMs", CANDOR_MEMBER(sql.deadline_ms), 10, 600000));
    t.push_back(make_int("sql.executorMemoryMb",
                         CANDOR_MEMBER(sql.executor_memory_mb), 32, 65536));
    t.push_back(
      make_int("sql.heapLimitMb", CANDOR_MEMBER(sql.heap_limit_mb), 1, 65536));
    t.push_back(make_int("sql.executorCpuSeconds",
                         CANDOR_MEMBER(sql.executor_cpu_seconds), 1, 3600));
    t.push_back(make_string("sql.backend", CANDOR_MEMBER(sql.backend),
                            {"sqlite", "postgres"}));
    t.push_back(make_string("sql.database", CANDOR_MEMBER(sql.database)));
    t.push_back(make_string("sql.catalog", CANDOR_MEMBER(sql.catalog)));
    {
      auto f = make_string("sql.postgresDsn", CANDOR_MEMBER(sql.postgres_dsn));
      f.secret = true;
      t.push_back(std::move(f));
    }
    t.push_back(make_string("retrieval.mode", CANDOR_MEMBER(retrieval.mode),
                            {"tfidf", "bm25", "fusion"}));
    t.push_back(
      make_int("retrieval.topK", CANDOR_MEMBER(retrieval.top_k), 1, 3));
    t.push_back(make_int("retrieval.chunkSize",
                         CANDOR_MEMBER(retrieval.chunk_size), 200, 4000));
    t.push_back(make_int("retrieval.dimensions",
                         CANDOR_MEMBER(retrieval.dimensions), 1024,
                         16 * 1024 * 1024));
    t.push_back(make_double("retrieval.threshold",
                            CANDOR_MEMBER(retrieval.threshold), 0, 1000));
    {
      auto f
        = make_string("http.operatorToken", CANDOR_MEMBER(http.operator_token));
      f.secret = true;
      t.push_back(std::move(f));
    }
    {
      auto f = make_string("retrieval.adminToken",
                           CANDOR_MEMBER(retrieval.admin_token));
      f.secret = true;
      t.push_back(std::move(f));
    }
    t.push_back(make_int("ledger.flushIntervalMs",
                         CANDOR_MEMBER(ledger.flush_interval_ms), 1, 60000));
    t.push_back(
      make_int("ledger.maxBatch", CANDOR_MEMBER(ledger.max_batch), 1, 100000));
    t.push_back(
      make_int("ledger.writerNice", CANDOR_MEMBER(ledger.writer_nice), 0, 19));
    t.push_back(make_int("ledger.maxBacklogRecords",
                         CANDOR_MEMBER(ledger.max_backlog_records), 100,
                         100000000));
    t.push_back(make_string("ledger.backend", CANDOR_MEMBER(ledger.backend),
                            {"sqlite", "postgres"}));
    {
      auto f
        = make_string("ledger.postgresDsn", CANDOR_MEMBER(ledger.postgres_dsn));
      f.secret = true;
      t.push_back(std::move(f));
    }
    t.push_back(make_int("conversations.retentionHours",
                         CANDOR_MEMBER(conversations.retention_hours), 1,
                         24 * 366));
    t.push_back(make_int("conversations.maxTurns",
                         CANDOR_MEMBER(conversations.max_turns), 1, 1000));
    t.push_back(make_int("conversations.maxTurnBytes",
                         CANDOR_MEMBER(conversations.max_turn_bytes), 256,
                         65536));
    t.push_back(make_int("conversations.historyTurns",
                         CANDOR_MEMBER(conversations.history_turns), 0, 50));
    t.push_back(make_string("log.level", CANDOR_MEMBER(log.level),
                            {"debug", "info", "warn", "error"}));
    return t;
  }();
  return table;
}

#undef CANDOR_MEMBER

const field* find_field(std::string_view key) {
  for (auto& f : fields())
    if (f.key == key)
      return &f;
  return nullptr;
}

error invalid(std::string msg) {
  return make_error(ec::config_invalid, std::move(msg));
}

/// Where each key's value came from, for messages: "CANDOR_LLM_BASE_URL",
/// "llm.baseUrl in my.json", "--bind". Keys left at their default are absent.
using sources = std::map<std::string, std::string>;

/// True when `key` is a group of keys ("http" of "http.port").
bool is_group(const std::string& key) {
  for (auto& f : fields())
    if (f.key.size() > key.size() && f.key.compare(0, key.size(), key) == 0
        && f.key[key.size()] == '.')
      return true;
  return false;
}

/// Applies a JSON document (defaults or a --config file) to `cfg`; records
/// the keys it sets in `src` when given.
error apply_json(std::string_view text, std::string_view origin,
                 bool allow_secrets, config& cfg, sources* src = nullptr) {
  boost::system::error_code jec;
  auto doc = json::parse(text, jec);
  if (jec)
    return invalid(std::string{origin} + ": not valid JSON (" + jec.message()
                   + ")");
  if (!doc.is_object())
    return invalid(std::string{origin} + ": the top level must be an object");
  if (auto dup = duplicate_member(text)) // the parser kept the last silently
    return invalid(std::string{origin} + ": key '" + *dup
                   + "' appears more than once");
  std::function<error(const json::object&, const std::string&)> walk;
  walk = [&](const json::object& obj, const std::string& prefix) -> error {
    for (auto& [k, v] : obj) {
      auto key
        = prefix.empty() ? std::string{k} : prefix + "." + std::string{k};
      if (auto* f = find_field(key)) {
        if (f->secret && !allow_secrets)
          return invalid(std::string{origin} + ": key '" + key
                         + "' is a secret and may only come from the "
                           "environment variable "
                         + env_name(key));
        if (auto e = f->from_json(v, cfg); !e.empty())
          return invalid(std::string{origin} + ": key '" + key + "' " + e);
        if (src)
          (*src)[key] = key + " in " + std::string{origin};
      } else if (v.is_object()) {
        if (auto e = walk(v.as_object(), key))
          return e;
      } else if (is_group(key)) {
        return invalid(std::string{origin} + ": key '" + key
                       + "' must be an object");
      } else {
        return invalid(std::string{origin} + ": unknown key '" + key + "'");
      }
    }
    return {};
  };
  return walk(doc.as_object(), "");
}

error apply_text(const std::string& key, const std::string& value,
                 const std::string& origin, config& cfg) {
  auto* f = find_field(key);
  if (!f)
    return invalid(origin + ": unknown key '" + key + "'");
  if (auto e = f->from_text(value, cfg); !e.empty())
    return invalid(origin + " (key '" + key + "') " + e);
  return {};
}

error check_consistency(config& cfg, const sources& src,
                        const path_kinds& paths) {
  // Names a key by where its value came from, or by the key itself.
  auto from = [&src](const std::string& key) {
    auto it = src.find(key);
    return it == src.end() ? key : it->second;
  };
  // Names a key with its environment variable, for "set ..." hints.
  auto hint
    = [](const std::string& key) { return key + " (" + env_name(key) + ")"; };
  // /runs, /stats and /metrics show questions and figures: beyond this
  // machine, only to whoever holds the operator token.
  {
    const auto& b = cfg.http.bind;
    bool loopback = b.rfind("127.", 0) == 0 || b == "::1";
    if (!loopback && cfg.http.operator_token.empty())
      return invalid(from("http.bind") + " '" + b
                     + "' is reachable from other machines, and /runs, "
                       "/stats and /metrics show every question and the "
                       "server's figures: set "
                     + hint("http.operatorToken")
                     + " (they then need 'Authorization: Bearer <token>') "
                       "or bind to 127.0.0.1");
  }
  // A base URL or a key means a real model endpoint.
  if (!cfg.llm.base_url.empty() || !cfg.llm.api_key.empty())
    cfg.llm.provider = "openai";
  if (cfg.llm.provider == "openai" && cfg.llm.base_url.empty())
    return invalid(
      (cfg.llm.api_key.empty() ? from("llm.provider") : from("llm.apiKey"))
      + " selects the 'openai' provider but no endpoint is "
        "set: set "
      + hint("llm.baseUrl"));
  // The local provider has one model, itself, and nothing to fall back to.
  if (cfg.llm.provider == "local") {
    cfg.llm.model = "candor-local";
    cfg.llm.fallback_model.clear();
  }
  // A PostgreSQL backend needs its connection string, and a connection
  // string its backend: "<group>.backend" and "<group>.postgresDsn".
  auto postgres_pair
    = [&](const std::string& group, const std::string& backend,
          const std::string& dsn, const char* dbname) -> error {
    auto backend_key = group + ".backend";
    auto dsn_key = group + ".postgresDsn";
    if (backend == "postgres" && dsn.empty())
      return invalid(from(backend_key)
                     + " is 'postgres' but no connection string is set: set "
                     + hint(dsn_key)
                     + " (a libpq string such as 'host=/var/run/postgresql "
                       "dbname="
                     + dbname + " user=candor')");
    if (!dsn.empty() && backend != "postgres")
      return invalid(from(dsn_key) + " is set but " + from(backend_key)
                     + " is '" + backend + "': set " + hint(backend_key)
                     + " to 'postgres'");
    return {};
  };
  if (auto err = postgres_pair("sql", cfg.sql.backend, cfg.sql.postgres_dsn,
                               "warehouse"))
    return err;
  if (auto err = postgres_pair("ledger", cfg.ledger.backend,
                               cfg.ledger.postgres_dsn, "candor"))
    return err;
  if (cfg.guardrail.mode == "rules+model" && cfg.llm.provider != "openai")
    return invalid(from("guardrail.mode")
                   + " is 'rules+model', which needs a real model "
                     "provider: set "
                   + hint("llm.baseUrl") + " or use guardrail.mode 'rules'");
  if (!cfg.guardrail.model.empty() && cfg.guardrail.mode != "rules+model")
    return invalid(from("guardrail.model") + " is set but "
                   + from("guardrail.mode") + " is '" + cfg.guardrail.mode
                   + "': set guardrail.mode to 'rules+model' (CANDOR_GUARDRAIL_"
                     "MODE=rules+model) or remove "
                   + from("guardrail.model"));
  if (!cfg.llm.fixtures_dir.empty()) {
    if (!paths.is_directory || !paths.is_directory(cfg.llm.fixtures_dir))
      return invalid(from("llm.fixturesDir") + " '" + cfg.llm.fixtures_dir
                     + "' is not a directory");
  }
  if (!cfg.llm.ca_file.empty()) {
    if (!paths.is_file || !paths.is_file(cfg.llm.ca_file))
      return invalid(from("llm.caFile") + " '" + cfg.llm.ca_file
                     + "' is not a file");
  }
  if (cfg.llm.provider == "openai") {
    const auto& url = cfg.llm.base_url;
    auto url_from = from("llm.baseUrl");
    bool https = url.rfind("https://", 0) == 0;
    if (!https && url.rfind("http://", 0) != 0)
      return invalid(url_from + " must start with http:// or https://");
    if (url.find_first_of(" \t\r\n?#") != std::string::npos
        || url.size() > 2048)
      return invalid(url_from
                     + " must be a plain URL without spaces, query "
                       "or fragment");
    if (url.find('@') != std::string::npos)
      return invalid(url_from
                     + " must not carry credentials: use "
                       "CANDOR_LLM_API_KEY");
    // The key goes into a header: visible ASCII only (no CR/LF injection).
    for (char c : cfg.llm.api_key)
      if (c <= ' ' || c > '~')
        return invalid("CANDOR_LLM_API_KEY must be printable ASCII without "
                       "spaces");
    if (cfg.llm.api_key.size() > 1024)
      return invalid("CANDOR_LLM_API_KEY is longer than 1024 characters");
    // A key never travels in clear text to another machine.
    auto host = url.substr(https ? 8 : 7);
    host = host.substr(0, host.find_first_of(":/"));
    bool loopback
      = host == "127.0.0.1" || host == "localhost" || host == "[::1]";
    if (!https && !cfg.llm.api_key.empty() && !loopback)
      return invalid("CANDOR_LLM_API_KEY would be sent in clear text: "
                     + url_from
                     + " must use https:// for a host other than the "
                       "loopback");
    // The scripted model names mean nothing to a real endpoint.
    if (cfg.llm.model.empty() || cfg.llm.model.rfind("scripted-", 0) == 0)
      return invalid("llm.provider is 'openai' (" + url_from + " is set): set "
                     + hint("llm.model") + " to the endpoint's model name");
    if (cfg.llm.fallback_model.rfind("scripted-", 0) == 0)
      cfg.llm.fallback_model.clear(); // no fallback unless one is named
  }
  return {};
}

} // namespace

std::string env_name(std::string_view dotted_key) {
  std::string out = "CANDOR_";
  for (char c : dotted_key) {
    if (c == '.') {
      out += '_';
    } else if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += c;
    } else {
      out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
  }
  return out;
}

std::string_view default_config_json() {
  return embedded::default_config();
}

std::string config::fixtures_path() const {
  if (!llm.fixtures_dir.empty())
    return llm.fixtures_dir;
  return std::string{CANDOR_SOURCE_DIR} + "/fixtures/llm";
}

outcome<config>
parse_config(std::string_view defaults_json, const config_file* file,
             const env_lookup& env,
             const std::map<std::string, std::string>& flags,
             const std::map<std::string, std::string>& flag_names,
             const path_kinds& paths) {
  config cfg;
  sources src;
  if (auto e = apply_json(defaults_json, "built-in defaults", false, cfg))
    return e;
  if (file != nullptr)
    if (auto e = apply_json(file->text, file->name, false, cfg, &src))
      return e;
  // Environment: every CANDOR_* variable must name a known key.
  for (auto& [name, value] : env) {
    const field* match = nullptr;
    for (auto& f : fields())
      if ((f.env.empty() ? env_name(f.key) : f.env) == name)
        match = &f;
    if (!match)
      return invalid("unknown environment variable " + name);
    if (auto e
        = apply_text(match->key, value, "environment variable " + name, cfg))
      return e;
    src[match->key] = name;
  }
  for (auto& [key, value] : flags) {
    auto name = flag_names.find(key);
    auto origin = name == flag_names.end() ? std::string{"command-line flag"}
                                           : "flag " + name->second;
    if (auto e = apply_text(key, value, origin, cfg))
      return e;
    src[key] = name == flag_names.end() ? key : name->second;
  }
  if (auto e = check_consistency(cfg, src, paths))
    return e;
  return cfg;
}

} // namespace candor::domain
