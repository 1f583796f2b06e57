#include "actors/llm.hpp"

#include <caf/event_based_actor.hpp>

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
    case chaos_mode::none:
      return attempt_result::ok;
    case chaos_mode::primary_timeout_once:
      return p.model_index == 0 && p.attempts == 1 ? attempt_result::timeout
                                                   : attempt_result::ok;
    case chaos_mode::primary_down:
      return p.model_index == 0 ? attempt_result::unavailable
                                : attempt_result::ok;
    case chaos_mode::all_down:
      return attempt_result::unavailable;
  }
  return attempt_result::ok;
}

using llm_ptr = llm_actor::stateful_pointer<llm_state>;

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
  rec.provider = st.settings.provider;
  rec.model = p.model_index == 0 ? st.settings.primary_model
                                 : st.settings.fallback_model;
  rec.attempts = p.attempts;
  rec.retries = p.retries;
  rec.fallback_used = p.model_index > 0;
  rec.outcome = outcome;
  rec.latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - p.started)
                     .count();
  if (result) {
    rec.tokens_in = result->usage.tokens_in;
    rec.tokens_out = result->usage.tokens_out;
    rec.cost_usd = result->usage.cost_usd;
  }
  if (st.metrics)
    st.metrics->model_call(rec.prompt, outcome,
                           rec.tokens_in + rec.tokens_out, rec.fallback_used,
                           rec.retries);
  if (st.ledger)
    self->send(st.ledger, atom::put_v, std::move(rec));
  if (result)
    p.rp.deliver(std::move(*result));
  else
    p.rp.deliver(std::move(result.error()));
  st.pending.erase(it);
}

// Makes one attempt of call `id` on its current model.
void attempt(llm_ptr self, uint64_t id) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end())
    return;
  auto& p = it->second;
  auto& st = self->state;
  ++p.attempts;
  ++p.model_attempts;
  auto failure = injected_failure(p);
  if (failure == attempt_result::ok) {
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
    reply.model = p.model_index == 0 ? st.settings.primary_model
                                     : st.settings.fallback_model;
    auto& u = reply.usage;
    u.calls = 1;
    u.attempts = p.attempts;
    u.retries = p.retries;
    u.fallback_used = p.model_index > 0;
    u.tokens_in = estimate_tokens(p.req.system) + estimate_tokens(p.req.user)
                  + estimate_tokens(p.req.key);
    u.tokens_out = estimate_tokens(reply.text);
    u.cost_usd = (static_cast<double>(u.tokens_in) * st.settings.price_in_per_mtok
                  + static_cast<double>(u.tokens_out)
                      * st.settings.price_out_per_mtok)
                 / 1e6;
    u.models.push_back(reply.model);
    auto outcome = reply.finish_reason == "length" ? "truncated" : "ok";
    finish(self, id, outcome, std::move(reply));
    return;
  }
  // A retryable failure: back off on the same model, then fall back.
  if (p.model_attempts <= st.settings.max_retries) {
    ++p.retries;
    auto base = st.settings.backoff_base.count();
    auto exp = base << std::min(p.model_attempts - 1, 10);
    auto jitter = base > 0 ? static_cast<int64_t>(st.rng() % base) : 0;
    self->delayed_send(self, std::chrono::milliseconds{exp + jitter},
                       atom::internal_v, atom::call_v, id);
    return;
  }
  if (p.model_index == 0 && !st.settings.fallback_model.empty()) {
    p.model_index = 1;
    p.model_attempts = 0;
    attempt(self, id);
    return;
  }
  finish(self, id, "unavailable",
         to_caf(domain::ec::llm_unavailable,
                "every configured model failed (last: "
                  + std::string{failure == attempt_result::timeout
                                  ? "timeout"
                                  : "unavailable"}
                  + ")"));
}

} // namespace

llm_actor::behavior_type
llm(llm_actor::stateful_pointer<llm_state> self, llm_settings settings,
    std::shared_ptr<const data::fixture_store> fixtures,
    std::shared_ptr<telemetry> metrics, ledger_actor ledger) {
  self->state.settings = std::move(settings);
  self->state.fixtures = std::move(fixtures);
  self->state.metrics = std::move(metrics);
  self->state.ledger = std::move(ledger);
  return {
    [self](atom::call, llm_request& req) -> caf::result<llm_reply> {
      if (req.budget <= 0)
        return to_caf(domain::ec::llm_budget_exceeded,
                      "the model-call budget of this request is spent");
      auto id = self->state.next_id++;
      pending_call p;
      p.req = std::move(req);
      p.rp = self->make_response_promise<llm_reply>();
      p.started = std::chrono::steady_clock::now();
      p.started_us = now_us();
      auto rp = p.rp;
      self->state.pending.emplace(id, std::move(p));
      attempt(self, id);
      return rp;
    },
    [self](atom::put, ledger_actor& ledger) {
      self->state.ledger = std::move(ledger);
    },
    [self](atom::internal, atom::call, uint64_t id) { attempt(self, id); },
  };
}

} // namespace candor::actors
