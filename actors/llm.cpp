// The LLM actor: logical model calls against the scripted provider or an
// OpenAI-compatible endpoint, with retries, backoff, fallback, the local
// provider as the last resort, and chaos modes.

#include "actors/llm.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include "data/log.hpp"

namespace candor::actors {

using domain::chaos_mode;

llm_settings llm_settings::from(const domain::config& cfg) {
  llm_settings s;
  s.provider = cfg.llm.provider;
  s.primary_model = cfg.llm.model;
  s.fallback_model = cfg.llm.fallback_model;
  s.max_retries = cfg.llm.max_retries;
  s.backoff_base = std::chrono::milliseconds{cfg.llm.backoff_base_ms};
  s.price_in_per_mtok = cfg.llm.price_input_per_mtok_usd;
  s.price_out_per_mtok = cfg.llm.price_output_per_mtok_usd;
  s.base_url = cfg.llm.base_url;
  while (!s.base_url.empty() && s.base_url.back() == '/')
    s.base_url.pop_back();
  s.api_key = cfg.llm.api_key;
  s.response_format = cfg.llm.response_format;
  s.attempt_timeout = std::chrono::milliseconds{cfg.llm.attempt_timeout_ms};
  s.call_deadline = std::chrono::milliseconds{cfg.graph.request_deadline_ms};
  s.local_fallback = cfg.llm.local_fallback;
  s.plan_first = cfg.llm.plan_first;
  return s;
}

int64_t estimate_tokens(const std::string& text) {
  return std::max<int64_t>(1, static_cast<int64_t>(text.size() + 3) / 4);
}

namespace {

int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch())
    .count();
}

/// The chaos modes decide whether the endpoint "fails" this attempt.
attempt_result injected_failure(const pending_call& p) {
  switch (p.req.chaos) {
    case chaos_mode::none: return attempt_result::ok;
    case chaos_mode::primary_timeout_once:
      return p.model_index == 0 && p.attempts == 1 ? attempt_result::timeout
                                                   : attempt_result::ok;
    case chaos_mode::primary_down:
      return p.model_index == 0 ? attempt_result::unavailable
                                : attempt_result::ok;
    case chaos_mode::all_down: return attempt_result::unavailable;
  }
  return attempt_result::ok;
}

using llm_ptr = llm_actor::stateful_pointer<llm_state>;

const std::string& current_model(const pending_call& p) {
  static const std::string none;
  return p.model_index < p.models.size() ? p.models[p.model_index] : none;
}

// Ends call `id`: one ledger row, one metric, then the reply or error.
void finish(llm_ptr self, uint64_t id, const std::string& outcome,
            caf::expected<llm_reply> result) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end())
    return;
  auto& p = it->second;
  auto& st = self->state;
  domain::llm_call_record rec;
  rec.request_id = p.req.request_id;
  rec.ts_us = p.started_us;
  rec.prompt = p.req.prompt;
  rec.prompt_version = p.req.prompt_version;
  // A local fallback is the local provider's answer: its row says so.
  // So is a call the planner answered first (llm.planFirst).
  bool local = p.local_fallback || p.planned_first;
  rec.provider = local ? "local" : st.settings.provider;
  rec.model = local ? std::string{data::local_model_name} : current_model(p);
  rec.attempts = p.attempts;
  rec.retries = p.retries;
  rec.fallback_used = p.model_index > 0 && !p.local_fallback;
  rec.local_fallback = p.local_fallback;
  rec.outcome = outcome;
  rec.latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - p.started)
                     .count();
  rec.tokens_estimated = p.tokens_estimated;
  if (result) {
    rec.tokens_in = result->usage.tokens_in;
    rec.tokens_out = result->usage.tokens_out;
    rec.cost_usd = result->usage.cost_usd;
  }
  if (st.metrics)
    st.metrics->model_call(rec.prompt, outcome, rec.tokens_in + rec.tokens_out,
                           rec.fallback_used, rec.retries, rec.local_fallback);
  if (st.ledger)
    self->send(st.ledger, atom::put_v, std::move(rec));
  if (result)
    p.rp.deliver(std::move(*result));
  else
    p.rp.deliver(std::move(result.error()));
  st.pending.erase(it);
}

/// Usage and cost of one successful attempt; tokens < 0 are estimated.
void fill_usage(llm_ptr self, pending_call& p, llm_reply& reply,
                int64_t tokens_in, int64_t tokens_out) {
  auto& st = self->state;
  auto& u = reply.usage;
  u.calls = 1;
  u.attempts = p.attempts;
  u.retries = p.retries;
  u.fallback_used = p.model_index > 0 || p.local_fallback;
  u.local_fallback = p.local_fallback;
  p.tokens_estimated = tokens_in < 0 || tokens_out < 0;
  u.tokens_in = tokens_in >= 0
                  ? tokens_in
                  : estimate_tokens(p.req.system) + estimate_tokens(p.req.user)
                      + estimate_tokens(p.req.key);
  u.tokens_out = tokens_out >= 0 ? tokens_out : estimate_tokens(reply.text);
  domain::model_price fallback{st.settings.price_in_per_mtok,
                               st.settings.price_out_per_mtok};
  auto price
    = st.settings.provider == "fake" ? fallback
      : st.settings.provider == "local" || p.local_fallback || p.planned_first
        ? domain::model_price{0, 0}
        : domain::builtin_prices().lookup(reply.model, fallback);
  u.cost_usd = domain::round_usd(
    (static_cast<double>(u.tokens_in) * price.input_per_mtok
     + static_cast<double>(u.tokens_out) * price.output_per_mtok)
    / 1e6);
  u.models.push_back(reply.model);
}

void attempt(llm_ptr self, uint64_t id);

/// Call `p` as the local provider reads it; `fallback`: standing in for
/// models that failed.
data::local_call local_call_of(const pending_call& p, bool fallback) {
  return {p.req.prompt,     p.req.key,  &p.req.passages,
          p.req.request_id, &p.req.sql, fallback, &p.req.earlier};
}

/// Ends call `id` with the local provider's reply `text`: no tokens, no
/// cost.
void finish_locally(llm_ptr self, uint64_t id, pending_call& p,
                    std::string text) {
  llm_reply reply;
  reply.text = std::move(text);
  reply.finish_reason = "stop";
  reply.model = std::string{data::local_model_name};
  fill_usage(self, p, reply, 0, 0);
  finish(self, id, "ok", std::move(reply));
}

/// Every model of call `id` failed (`why`: the last failure). With
/// llm.localFallback, the local provider answers in their place: the same
/// logical call (no extra budget), no tokens, no cost, its notes saying
/// that no language model was reachable. False when it does not: the
/// fallback is off or not set up, or the prompt is one the local provider
/// does not answer (the guard classifier's).
bool fall_back_locally(llm_ptr self, uint64_t id, pending_call& p,
                       const std::string& why) {
  auto& st = self->state;
  if (st.settings.provider != "openai" || !st.settings.local_fallback
      || !st.local)
    return false;
  auto call = local_call_of(p, true);
  auto text = st.local->reply(call);
  if (!text)
    return false;
  data::log_event(data::log_level::warn, "llm_local_fallback",
                  {{"requestId", p.req.request_id},
                   {"prompt", p.req.prompt},
                   {"attempts", std::to_string(p.attempts)},
                   {"reason", why}});
  p.local_fallback = true;
  finish_locally(self, id, p, std::move(*text));
  return true;
}

/// A failed attempt: back off on the same model when `kind` is retryable
/// and retries are left, else move to the next model, else give up.
void after_failure(llm_ptr self, uint64_t id, attempt_result kind,
                   const std::string& why, int64_t min_delay_ms = 0) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end())
    return;
  auto& p = it->second;
  auto& st = self->state;
  data::log_event(data::log_level::warn, "llm_attempt_failed",
                  {{"requestId", p.req.request_id},
                   {"prompt", p.req.prompt},
                   {"model", current_model(p)},
                   {"attempt", std::to_string(p.attempts)},
                   {"reason", why}});
  bool retryable
    = kind == attempt_result::timeout || kind == attempt_result::unavailable;
  if (retryable && p.model_attempts <= st.settings.max_retries) {
    ++p.retries;
    auto base = st.settings.backoff_base.count();
    auto exp = base << std::min(p.model_attempts - 1, 10);
    auto jitter = base > 0 ? static_cast<int64_t>(st.rng() % base) : 0;
    auto delay = std::max<int64_t>(exp + jitter, min_delay_ms);
    self->delayed_send(self, std::chrono::milliseconds{delay}, atom::internal_v,
                       atom::call_v, id);
    return;
  }
  if (p.model_index + 1 < p.models.size()) {
    ++p.model_index;
    p.model_attempts = 0;
    attempt(self, id);
    return;
  }
  if (fall_back_locally(self, id, p, why))
    return;
  finish(self, id, "unavailable",
         to_caf(domain::ec::llm_unavailable,
                "every configured model failed (last: " + why + ")"));
}

/// Sends attempt `p.attempts` of call `id` to the endpoint.
void send_http(llm_ptr self, uint64_t id, pending_call& p) {
  auto& st = self->state;
  if (!st.transport) {
    finish(self, id, "unavailable",
           to_caf(domain::ec::llm_unavailable,
                  "the openai provider has no HTTP client"));
    return;
  }
  domain::chat_spec spec;
  spec.model = current_model(p);
  spec.system = p.req.system;
  spec.user = p.req.user;
  spec.max_tokens = p.req.max_tokens;
  spec.schema_name = p.req.prompt;
  spec.schema = p.req.schema;
  spec.response_format
    = p.json_object ? "json_object" : st.settings.response_format;
  domain::http_call call;
  call.url = st.settings.base_url + "/chat/completions";
  call.body = domain::make_chat_body(spec);
  // An attempt never waits past the call's deadline.
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - p.started);
  call.timeout = std::max(
    std::chrono::milliseconds{1},
    std::min(st.settings.attempt_timeout, st.settings.call_deadline - spent));
  call.headers.emplace_back("Content-Type", "application/json");
  call.headers.emplace_back("Accept", "application/json");
  if (!st.settings.api_key.empty())
    call.headers.emplace_back("Authorization", "Bearer " + st.settings.api_key);
  // One signal per attempt: a cancel aborts the attempt in flight.
  p.abort = std::make_shared<domain::cancel_signal>();
  call.cancel = p.abort;
  auto me = caf::actor_cast<llm_actor>(self);
  st.transport->post(std::move(call), [me, id](domain::http_result r) {
    auto text = r.failure == domain::transport_failure::none
                  ? std::move(r.body)
                  : std::move(r.detail);
    caf::anon_send(me, atom::internal_v, atom::exec_v, id,
                   static_cast<int32_t>(r.failure),
                   static_cast<int32_t>(r.status), std::move(text),
                   std::move(r.retry_after));
  });
}

/// The transport's report on the current attempt of call `id`.
void on_http(llm_ptr self, uint64_t id, int32_t failure, int32_t status,
             std::string& body, const std::string& retry_after) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end())
    return;
  auto& p = it->second;
  using domain::transport_failure;
  switch (static_cast<transport_failure>(failure)) {
    case transport_failure::none: break;
    case transport_failure::timeout:
      after_failure(self, id, attempt_result::timeout, "timeout");
      return;
    case transport_failure::connect:
    case transport_failure::protocol:
      after_failure(self, id, attempt_result::unavailable, body);
      return;
    default: // tls, bad_url: retrying the same model cannot help
      after_failure(self, id, attempt_result::rejected, body);
      return;
  }
  auto why = "HTTP " + std::to_string(status);
  switch (domain::classify_status(status)) {
    case domain::status_action::retry: {
      auto wait
        = domain::retry_after_ms(retry_after, std::chrono::system_clock::now(),
                                 self->state.settings.max_retry_after.count());
      after_failure(self, id,
                    status == 408 ? attempt_result::timeout
                                  : attempt_result::unavailable,
                    why, std::max<int64_t>(wait, 0));
      return;
    }
    case domain::status_action::next_model:
      // Endpoints without structured output refuse json_schema with a 400:
      // the same model once more in JSON mode before moving on.
      if (status == 400 && !p.json_object && !p.req.schema.empty()
          && self->state.settings.response_format == "json_schema") {
        p.json_object = true;
        data::log_event(
          data::log_level::warn, "llm_json_mode",
          {{"requestId", p.req.request_id}, {"model", current_model(p)}});
        --p.model_attempts; // not a retry: the same attempt, other format
        attempt(self, id);
        return;
      }
      after_failure(self, id, attempt_result::rejected, why);
      return;
    case domain::status_action::ok: break;
  }
  auto parsed = domain::parse_chat_response(body);
  if (!parsed) {
    // A broken envelope is the endpoint's fault, like a 5xx.
    after_failure(self, id, attempt_result::unavailable,
                  "malformed response: " + parsed.err().message);
    return;
  }
  llm_reply reply;
  reply.text = std::move(parsed->text);
  reply.finish_reason = parsed->finish_reason;
  reply.model = current_model(p);
  fill_usage(self, p, reply, parsed->tokens_in, parsed->tokens_out);
  auto outcome = reply.finish_reason == "length" ? "truncated" : "ok";
  finish(self, id, outcome, std::move(reply));
}

/// The local provider's reply to call `id`: deterministic, no tokens, no
/// cost; a prompt it does not answer is an error like an unreachable model.
void answer_locally(llm_ptr self, uint64_t id, pending_call& p) {
  auto& st = self->state;
  if (!st.local) {
    finish(
      self, id, "unavailable",
      to_caf(domain::ec::llm_unavailable, "the local provider is not set up"));
    return;
  }
  auto call = local_call_of(p, false);
  auto text = st.local->reply(call);
  if (!text) {
    finish(self, id, "unavailable",
           to_caf(text.err().code, text.err().message));
    return;
  }
  finish_locally(self, id, p, std::move(*text));
}

/// llm.planFirst: a call the local planner answers for a question it reads
/// whole is answered by it before any model is tried (provider `local`,
/// no tokens, no cost). False when the model is to be called.
bool plan_first(llm_ptr self, uint64_t id, pending_call& p) {
  auto& st = self->state;
  if (st.settings.provider != "openai" || !st.settings.plan_first || !st.local)
    return false;
  auto call = local_call_of(p, false);
  auto text = st.local->plan_first_reply(call);
  if (!text)
    return false;
  p.planned_first = true;
  finish_locally(self, id, p, std::move(*text));
  return true;
}

// Makes one attempt of call `id` on its current model.
void attempt(llm_ptr self, uint64_t id) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end())
    return;
  auto& p = it->second;
  auto& st = self->state;
  // A real endpoint is not called after the request deadline: the
  // supervisor has answered 504 and nobody waits for the reply.
  if (st.settings.provider == "openai"
      && std::chrono::steady_clock::now() - p.started
           >= st.settings.call_deadline) {
    // A timeout, not "unavailable": whichever notices the deadline first
    // (this check or the supervisor's tick), the client gets the same 504.
    finish(self, id, "timeout",
           to_caf(domain::ec::timeout,
                  "the request deadline passed before the next attempt"));
    return;
  }
  ++p.attempts;
  ++p.model_attempts;
  auto failure = injected_failure(p);
  if (failure != attempt_result::ok) {
    after_failure(self, id, failure,
                  failure == attempt_result::timeout ? "timeout"
                                                     : "unavailable");
    return;
  }
  if (st.settings.provider == "openai") {
    send_http(self, id, p);
    return;
  }
  if (st.settings.provider == "local") {
    answer_locally(self, id, p);
    return;
  }
  auto scripted = st.fixtures->lookup(p.req.prompt, p.req.key,
                                      static_cast<size_t>(p.req.ordinal));
  if (!scripted) {
    finish(self, id, "fixture_missing",
           to_caf(scripted.err().code, scripted.err().message));
    return;
  }
  llm_reply reply;
  reply.text = scripted->text;
  reply.finish_reason = scripted->finish_reason;
  reply.model = current_model(p);
  fill_usage(self, p, reply, -1, -1);
  auto outcome = reply.finish_reason == "length" ? "truncated" : "ok";
  finish(self, id, outcome, std::move(reply));
}

} // namespace

llm_actor::behavior_type
llm(llm_actor::stateful_pointer<llm_state> self, llm_settings settings,
    std::shared_ptr<const data::fixture_store> fixtures,
    std::shared_ptr<telemetry> metrics, ledger_actor ledger,
    std::shared_ptr<domain::http_transport> transport,
    std::shared_ptr<const data::local_provider> local) {
  self->state.settings = std::move(settings);
  self->state.local = std::move(local);
  self->state.fixtures = std::move(fixtures);
  self->state.metrics = std::move(metrics);
  self->state.ledger = std::move(ledger);
  self->state.transport = std::move(transport);
  return {
    [self](atom::call, llm_request& req) -> caf::result<llm_reply> {
      if (req.budget <= 0)
        return to_caf(domain::ec::llm_budget_exceeded,
                      "the model-call budget of this request is spent");
      auto& st = self->state;
      auto id = st.next_id++;
      pending_call p;
      p.req = std::move(req);
      p.models.push_back(p.req.model.empty() ? st.settings.primary_model
                                             : p.req.model);
      if (!st.settings.fallback_model.empty()
          && st.settings.fallback_model != p.models.front())
        p.models.push_back(st.settings.fallback_model);
      p.rp = self->make_response_promise<llm_reply>();
      p.started = std::chrono::steady_clock::now();
      p.started_us = now_us();
      auto rp = p.rp;
      auto& pending = st.pending.emplace(id, std::move(p)).first->second;
      if (!plan_first(self, id, pending))
        attempt(self, id);
      return rp;
    },
    [self](atom::put, ledger_actor& ledger) {
      self->state.ledger = std::move(ledger);
    },
    [self](atom::cancel, const std::string& request_id, int64_t received_us) {
      std::vector<uint64_t> ids;
      for (auto& [id, p] : self->state.pending)
        if (p.req.request_id == request_id && p.req.received_us == received_us)
          ids.push_back(id);
      for (auto id : ids) {
        auto& p = self->state.pending.at(id);
        if (auto abort = std::move(p.abort))
          abort->cancel(); // closes the connection; its report is dropped
        finish(self, id, "cancelled",
               to_caf(domain::ec::cancelled, "the request was cancelled"));
      }
    },
    [self](atom::internal, atom::call, uint64_t id) { attempt(self, id); },
    [self](atom::internal, atom::exec, uint64_t id, int32_t failure,
           int32_t status, std::string& body, std::string& retry_after) {
      on_http(self, id, failure, status, body, retry_after);
    },
  };
}

} // namespace candor::actors
