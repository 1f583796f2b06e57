#pragma once

// Declares the LLM actor and its settings.

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "data/telemetry.hpp"
#include "data/fixtures.hpp"
#include "data/local/provider.hpp"
#include "domain/config.hpp"
#include "domain/model/http_transport.hpp"
#include "domain/model/openai_wire.hpp"

namespace candor::actors {

/// Settings of the LLM actor, taken from the configuration at startup.
struct llm_settings {
  std::string provider = "fake";
  std::string primary_model;
  std::string fallback_model;
  int32_t max_retries = 2;
  std::chrono::milliseconds backoff_base{20};
  double price_in_per_mtok = 0;
  double price_out_per_mtok = 0;
  // openai provider
  std::string base_url; ///< without the trailing slash
  std::string api_key;  ///< secret: only ever sent as a header
  std::string response_format = "json_schema";
  std::chrono::milliseconds attempt_timeout{20000};
  /// Longest Retry-After honoured; longer ones are cut to this.
  std::chrono::milliseconds max_retry_after{30000};
  /// openai: no attempt starts after the request deadline and none waits
  /// past it (the supervisor has answered 504 by then).
  std::chrono::milliseconds call_deadline{30000};
  /// openai: a call whose every model failed is answered by the local
  /// provider (when one is set up) instead of failing.
  bool local_fallback = true;
  /// openai: questions the local planner reads whole are answered by the
  /// local provider without a model call (llm.planFirst).
  bool plan_first = true;

  static llm_settings from(const domain::config& cfg);
};

/// How one attempt on one model went.
enum class attempt_result : uint8_t {
  ok,
  timeout,     ///< retryable
  unavailable, ///< 5xx / connection refused: retryable
  fixture_missing,
  rejected, ///< 4xx, TLS or a bad URL: the next model, no retry
};

/// A logical call in progress: attempts, retries, fallback.
struct pending_call {
  llm_request req;
  caf::typed_response_promise<llm_reply> rp;
  std::vector<std::string> models; ///< primary (or override), fallback
  size_t model_index = 0;          ///< 0 primary, 1 fallback
  int32_t attempts = 0;            ///< over all models
  int32_t model_attempts = 0;      ///< on the current model
  int32_t retries = 0;
  std::chrono::steady_clock::time_point started;
  int64_t started_us = 0;
  bool tokens_estimated = true;
  /// The endpoint refused json_schema (400): JSON mode from then on.
  bool json_object = false;
  /// Every model failed and the local provider answered in their place.
  bool local_fallback = false;
  /// The local planner answered before any model was tried (planFirst).
  bool planned_first = false;
  /// Aborts the HTTP attempt in flight when the request is cancelled.
  std::shared_ptr<domain::cancel_signal> abort;
};

struct llm_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  llm_state() = default;

  static inline const char* name = "llm";

  llm_settings settings;
  std::shared_ptr<const data::fixture_store> fixtures;
  std::shared_ptr<telemetry> metrics;
  ledger_actor ledger;
  std::unordered_map<uint64_t, pending_call> pending;
  uint64_t next_id = 1;
  std::minstd_rand rng{42};
  /// The HTTP client of the openai provider (null for the scripted one).
  std::shared_ptr<domain::http_transport> transport;
  /// The local provider: null unless llm.provider is "local", or "openai"
  /// with llm.localFallback (then it answers when every model failed).
  std::shared_ptr<const data::local_provider> local;
};

/// Estimated tokens of a text: one per four bytes, at least one.
int64_t estimate_tokens(const std::string& text);

/// The LLM actor: answers logical model calls with the scripted provider
/// or an OpenAI-compatible endpoint (through `transport`, which performs
/// the HTTP calls on its own threads and reports back by message). Failures
/// go through one retry, backoff and fallback path; when every model of an
/// openai call failed, `local` (if given and llm.localFallback is on)
/// answers in their place. The chaos modes simulate failures for tests.
/// Every logical call is a ledger row and a metric.
llm_actor::behavior_type
llm(llm_actor::stateful_pointer<llm_state> self, llm_settings settings,
    std::shared_ptr<const data::fixture_store> fixtures,
    std::shared_ptr<telemetry> metrics, ledger_actor ledger,
    std::shared_ptr<domain::http_transport> transport = nullptr,
    std::shared_ptr<const data::local_provider> local = nullptr);

} // namespace candor::actors
