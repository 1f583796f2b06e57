// The per-request supervisor: runs the graph one node at a time, records
// the trace, enforces the step cap, model-call budget and deadline.

#include "data/clock.hpp"
#include "actors/supervisor.hpp"

#include "domain/conversation.hpp"

#include <algorithm>

#include <caf/event_based_actor.hpp>
#include <caf/sec.hpp>

#include "domain/api/stream_json.hpp"
#include "domain/model/contracts.hpp"
#include "data/log.hpp"
#include "domain/records.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;
using domain::node;
using self_ptr = caf::stateful_actor<supervisor_state>*;
using clock = std::chrono::steady_clock;

int64_t micros_since(clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock::now()
                                                               - t0)
    .count();
}

/// Microseconds since the request arrived (since the supervisor started
/// when the request carries no arrival time).
int64_t latency_us(self_ptr self) {
  auto& s = self->state;
  if (s.received_us > 0)
    return std::max<int64_t>(0, data::wall_us() - s.received_us);
  return micros_since(s.started);
}

/// Hands the finished request's row to the recorder: the one place a
/// request row is written, whatever the request's channel.
void record(self_ptr self, domain::request_record rec) {
  if (const auto& rec_fn = self->state.g->record)
    rec_fn(std::move(rec));
}

/// The earlier messages a chat client sent with its question
/// (/v1/chat/completions) bounded like the ledger's turns: the newest
/// conversations.historyTurns, each cut to conversations.maxTurnBytes.
std::vector<domain::turn> bounded_history(std::vector<domain::turn> history,
                                          const limits& lim) {
  auto out = domain::readable_history(std::move(history),
                                      static_cast<size_t>(lim.history_turns));
  for (auto& t : out)
    t.question = domain::cut_utf8_bytes(t.question,
                                        static_cast<size_t>(lim.turn_bytes));
  return out;
}

/// Drops the supervisor's handle from its deadline slot, and its hook from
/// the caller's control.
void release_slot(self_ptr self) {
  if (auto& slot = self->state.slot) {
    slot->set(nullptr);
    slot = nullptr;
  }
  if (auto& ctl = self->state.control)
    ctl->stop.on_cancel(nullptr);
}

/// Ends the request with an HTTP-level error (422, 503, 504, 500).
void fail(self_ptr self, domain::error err) {
  release_slot(self);
  auto& s = self->state;
  auto rec = domain::request_row(s.request, domain::http_status(err.code),
                                 latency_us(self));
  rec.error = std::string{domain::to_string(err.code)};
  if (err.code == domain::ec::cancelled)
    rec.status = "cancelled";
  if (const auto& sp = s.spent; sp.llm_calls > 0 || !sp.route.empty()) {
    rec.route = sp.route;
    rec.llm_calls = static_cast<int32_t>(sp.llm_calls);
    rec.tokens = sp.tokens;
    rec.cost_usd = sp.cost_usd;
    err.spent = sp;
  }
  rec.steps = std::move(s.trace);
  record(self, std::move(rec));
  if (auto respond = std::move(self->state.respond))
    respond(std::move(err));
  self->quit();
}

/// Ends the request with its final state.
void deliver(self_ptr self) {
  release_slot(self);
  auto& s = self->state;
  auto latency = latency_us(self);
  s.st->latency_ms = latency / 1000;
  s.st->trace = std::move(s.trace);
  auto rec = domain::request_row(s.request, 200, latency);
  domain::record_outcome(rec, *s.st); // the trace travels with the row
  domain::settle_conversation(s.request, *s.st);
  domain::record_turn(rec, s.request, *s.st,
                      static_cast<size_t>(s.lim.turn_bytes));
  record(self, std::move(rec));
  if (auto respond = std::move(s.respond))
    respond(std::move(s.st));
  self->quit();
}

/// Ends the request as `status: error` and lets finalize run.
void stop_with(ask_state& st, std::string warning, std::string_view text) {
  domain::add_warning(st, std::move(warning));
  domain::finish(st, domain::status_kind::error, std::string{text});
}

void dispatch(self_ptr self, node n);

void on_reply(self_ptr self, node n, clock::time_point t0, ask_box next) {
  auto& s = self->state;
  s.st = std::move(next);
  s.trace.push_back({n, domain::step_outcome(n, *s.st), micros_since(t0)});
  if (s.control && s.control->progress)
    for (auto& ev : domain::progress_after(n, *s.st, s.route_told))
      s.control->progress(std::move(ev));
  const auto& st = *s.st;
  if (st.route != domain::route_kind::none)
    s.spent.route = std::string{domain::to_string(st.route)};
  s.spent.llm_calls = st.usage.calls;
  s.spent.tokens = st.usage.tokens_in + st.usage.tokens_out;
  s.spent.cost_usd = st.usage.cost_usd;
  dispatch(self, s.g->edge(n, *s.st));
}

void on_error(self_ptr self, node n, clock::time_point t0,
              const caf::error& err) {
  auto& s = self->state;
  auto e = to_domain(err);
  s.trace.push_back(
    {n, "error:" + std::string{domain::to_string(e.code)}, micros_since(t0)});
  switch (e.code) {
    case domain::ec::llm_budget_exceeded: {
      // The node kept the state; start again from the request.
      s.st = ask_box{};
      auto& st = *s.st;
      st.request = s.request;
      st.warnings = s.request.warnings;
      st.service = *s.info;
      st.route = domain::route_kind::none;
      stop_with(st, "llm_budget_exceeded", domain::texts::budget_exceeded);
      dispatch(self, node::finalize);
      return;
    }
    case domain::ec::timeout:
      e.message = "the request deadline of "
                  + std::to_string(s.lim.deadline.count())
                  + " ms passed in node " + std::string{domain::to_string(n)};
      break;
    case domain::ec::fixture_missing:
    case domain::ec::llm_unavailable:
    case domain::ec::sql_executor_failed:
    case domain::ec::overloaded:
    case domain::ec::shutting_down: break;
    default:
      data::log_event(data::log_level::error, "node_failed",
                      {{"requestId", s.request_id},
                       {"node", domain::to_string(n)},
                       {"error", caf::to_string(err)}});
      e = domain::make_error(domain::ec::internal,
                             "node " + std::string{domain::to_string(n)}
                               + " failed");
  }
  fail(self, std::move(e));
}

void dispatch(self_ptr self, node n) {
  auto& s = self->state;
  if (n == node::done) {
    deliver(self);
    return;
  }
  if (n != node::finalize) {
    auto& st = *s.st;
    if (s.steps >= s.lim.step_cap) {
      stop_with(st, "step_cap_exceeded", domain::texts::step_cap_exceeded);
      n = node::finalize;
    } else if (domain::min_model_calls(n, st) > st.llm_budget) {
      st.route = domain::route_kind::none;
      stop_with(st, "llm_budget_exceeded", domain::texts::budget_exceeded);
      n = node::finalize;
    }
  }
  const auto& handle = s.g->at(n);
  if (!handle) {
    if (n == node::finalize) {
      fail(self, domain::make_error(domain::ec::internal,
                                    "the finalize node is missing"));
      return;
    }
    stop_with(*s.st, "node_unavailable:" + std::string{domain::to_string(n)},
              domain::texts::node_unavailable);
    dispatch(self, node::finalize);
    return;
  }
  if (clock::now() >= s.deadline_at) {
    on_error(self, n, clock::now(), caf::make_error(caf::sec::request_timeout));
    return;
  }
  ++s.steps;
  auto t0 = clock::now();
  s.current = n;
  s.current_since = t0;
  // No per-request timeout: the deadline tick covers the whole request.
  self->request(handle, caf::infinite, atom::step_v, std::move(s.st))
    .then(
      [self, n, t0](ask_box& next) { on_reply(self, n, t0, std::move(next)); },
      [self, n, t0](caf::error& err) { on_error(self, n, t0, err); });
}

/// A follow-up: the rows of the conversation's earlier turns are written
/// first (the ledger batches them), then read; the turns the graph may
/// read go into the request and the graph starts. A conversation that
/// does not exist for this key ends the request as a 404.
void load_history(self_ptr self) {
  auto& s = self->state;
  s.current = domain::entry_node; // the deadline sweep may end the wait
  s.current_since = clock::now();
  auto failed = [self](caf::error& err) {
    fail(self, to_domain(err));
  };
  self->request(s.g->ledger, caf::infinite, atom::flush_v)
    .then(
      [self, failed](int64_t) {
        auto& s = self->state;
        self
          ->request(s.g->reader, caf::infinite, atom::conversation_v,
                    s.request.conversation_id, s.request.key_name)
          .then(
            [self](std::vector<domain::turn>& turns) {
              auto& s = self->state;
              auto history = domain::readable_history(
                std::move(turns), static_cast<size_t>(s.lim.history_turns));
              s.st->request.history = history;
              s.request.history = std::move(history);
              dispatch(self, domain::entry_node_for(s.st->request));
            },
            failed);
      },
      failed);
}

/// The caller raised the control's stop: the request's model calls and
/// query are stopped, the step waited for is recorded as `cancelled`, and
/// the request ends as `cancelled` (its reply, if one still comes, is
/// dropped).
void cancel(self_ptr self) {
  auto& s = self->state;
  if (s.current == node::done)
    return;
  if (s.g->llm)
    self->send(s.g->llm, atom::cancel_v, s.request_id, s.received_us);
  if (s.g->sandbox)
    self->send(s.g->sandbox, atom::cancel_v, s.request_id, s.received_us);
  s.trace.push_back({s.current, "cancelled", micros_since(s.current_since)});
  fail(self, domain::make_error(domain::ec::cancelled,
                                "the client closed the connection"));
}

} // namespace

caf::behavior supervisor(caf::stateful_actor<supervisor_state>* self,
                         graph_ptr g, limits lim, domain::ask_request req,
                         std::shared_ptr<const domain::service_info> info,
                         ask_responder respond, deadline_slot_ptr slot) {
  auto& s = self->state;
  if (slot) {
    slot->set(caf::actor_cast<caf::actor>(self));
    s.slot = std::move(slot);
    // Also release the slot when the actor is stopped from outside.
    self->attach_functor([slot = s.slot] { slot->set(nullptr); });
    // The caller's control: taken out of the slot (which the guardian's
    // sweep keeps until the deadline); a stop raised before this point
    // sends the cancel at once.
    if (auto ctl = std::move(s.slot->control)) {
      s.control = std::move(ctl);
      s.control->stop.on_cancel([slot = s.slot] {
        if (auto h = slot->get())
          caf::anon_send(h, atom::internal_v, atom::cancel_v);
      });
    }
  }
  s.g = std::move(g);
  s.lim = lim;
  s.respond = std::move(respond);
  s.started = clock::now();
  s.deadline_at = s.started + lim.deadline;
  s.request_id = req.request_id;
  s.received_us = req.received_us;
  if (!req.continues && !req.history.empty())
    req.history = bounded_history(std::move(req.history), lim);
  s.request = req;
  s.info
    = info ? std::move(info) : std::make_shared<const domain::service_info>();
  auto& st = *s.st;
  st.request = std::move(req);
  st.warnings = st.request.warnings;
  st.llm_budget = lim.llm_budget;
  st.service = *s.info;
  if (lim.own_timer)
    self->delayed_send(self, lim.deadline, atom::internal_v, atom::tick_v);
  if (s.request.continues && s.g->reader)
    load_history(self);
  else
    dispatch(self, domain::entry_node_for(st.request));
  return {
    // The client hung up: stop the request's work, record it cancelled.
    [self](atom::internal, atom::cancel) { cancel(self); },
    // The deadline passed: answer 504 now; the pending reply is dropped.
    [self](atom::internal, atom::tick) {
      auto& s = self->state;
      if (s.current == node::done)
        return;
      on_error(self, s.current, s.current_since,
               caf::make_error(caf::sec::request_timeout));
    },
  };
}

} // namespace candor::actors
