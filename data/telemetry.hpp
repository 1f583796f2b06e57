#pragma once

// Declares the Prometheus metrics candor exports, updated from Asio and
// CAF threads alike.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

/// Prometheus metrics (prometheus-cpp core registry, no HTTP server of its
/// own). Thread-safe: updated from Asio and CAF threads alike.
namespace candor::actors {

class telemetry {
public:
  telemetry();
  ~telemetry();
  telemetry(const telemetry&) = delete;
  telemetry& operator=(const telemetry&) = delete;

  /// A finished HTTP request: counter by route/status/code and latency;
  /// a server-side failure (`domain::server_failure`) is also counted by
  /// `reason` (the error code, or "answer_error").
  void request_done(const std::string& route, const std::string& status,
                    int http_status, double seconds,
                    const std::string& error = {});
  void set_in_flight(int64_t n);
  /// A connection the listener refused or closed before a whole request
  /// (see domain::service::connection_dropped); other reasons are ignored.
  void connection_dropped(std::string_view reason);
  /// One logical model call and its outcome ("ok", "fixture_missing", ...);
  /// `fallback`: the fallback model answered; `local_fallback`: every model
  /// failed and the local provider answered.
  void model_call(const std::string& prompt, const std::string& outcome,
                  int64_t tokens, bool fallback, int32_t retries,
                  bool local_fallback = false);
  /// A service actor was restarted by the guardian.
  void actor_restart(const std::string& name);
  /// Rows the ledger committed.
  void ledger_rows(int64_t n);
  /// A ledger commit failed (it will be retried): counted, and the ledger
  /// reported failing with `message` until `ledger_write_ok`.
  void ledger_write_failed(const std::string& message);
  /// A ledger commit succeeded; true when the ledger was failing before.
  bool ledger_write_ok();
  /// The last failure while the ledger's writes fail; empty when they work.
  std::string ledger_failure() const;
  /// Records waiting for the ledger writer (a gauge).
  void ledger_backlog(int64_t records);
  /// The last value given to `ledger_backlog` (thread-safe).
  int64_t ledger_backlog_records() const noexcept;
  /// An SQL sandbox executor event: "kill" (deadline), "respawn",
  /// "crash" or "retry".
  void sandbox_event(const std::string& event);
  /// The SQL sandbox pool: processes, idle ready ones, busy ones, queued
  /// statements.
  void sandbox_pool(int64_t size, int64_t ready, int64_t busy, int64_t queued);

  /// Text exposition format 0.0.4.
  std::string render() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace candor::actors
