#pragma once

// Declares actors::app, the CAF-free facade that owns the actor system and
// implements domain::service for net/ and the CLI.

#include <memory>

#include "data/retrieval/ingest.hpp"
#include "domain/config.hpp"
#include "domain/model/http_transport.hpp"
#include "domain/service.hpp"

/// The actor-free facade of candor (Broker's `endpoint`): owns the actor
/// system and the guardian, and implements domain::service for net/ and the
/// CLI. Its header includes no CAF so that main and tests compile fast.
namespace candor::actors {

class app : public domain::service {
public:
  /// Loads fixtures and prompts, creates the data directory and the ledger
  /// schema, starts the actor system. Startup problems are `config_invalid`
  /// or `storage_failed` errors with a message for the operator.
  /// With provider "openai", `transport` performs the model's HTTP calls
  /// (net::make_llm_client); without one, startup fails.
  static domain::outcome<std::unique_ptr<app>>
  start(const domain::config& cfg,
        std::shared_ptr<domain::http_transport> transport = nullptr);

  ~app() override;

  /// Flushes the ledger and stops every actor (idempotent).
  void shutdown();

  /// Blocking helpers for the CLI and tests (never on an Asio thread).
  domain::outcome<domain::ask_state> ask_sync(domain::ask_request req);
  domain::outcome<int64_t> flush_sync();
  domain::outcome<int64_t> request_rows_sync();
  domain::outcome<int64_t> restarts_sync();
  /// Kills the LLM actor (restart tests).
  void kill_llm_sync();
  /// Kills the index actor (restart tests).
  void kill_index_sync();

  const domain::service_info& info() const;

  // -- domain::service ---------------------------------------------------------

  void ask(domain::ask_request req, ask_callback cb) override;
  void ask_controlled(domain::ask_request req, ask_callback cb,
                      domain::request_control_ptr control) override;
  void stats(std::string window, text_callback cb) override;
  void run(std::string request_id, text_callback cb) override;
  void conversation(std::string id, std::string key_name,
                    text_callback cb) override;
  void health(text_callback cb) override;
  void demo_questions(text_callback cb) override;
  std::string metrics() override;
  void record_error(domain::request_record rec) override;
  void in_flight(int64_t value) override;
  void connection_dropped(std::string_view reason) override;
  void reindex(text_callback cb) override;
  void search(std::string query, int32_t k, passages_callback cb) override;
  void catalog(text_callback cb) override;
  void documents(text_callback cb) override;

private:
  struct impl;
  explicit app(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Seconds of a /stats window label ("15m", "1h", "24h", "7d"), or 0.
int64_t window_seconds(std::string_view label);

} // namespace candor::actors
