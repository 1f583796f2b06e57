// The ledger actor and the ledger reader: batching request,
// model-call and SQL audit rows to the writer thread, and serving reads.

#include "actors/ledger.hpp"

#include <algorithm>
#include <mutex>

#include <caf/send.hpp>

#include "data/ledger/writer.hpp"
#include "data/log.hpp"

namespace candor::actors {

namespace {

int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace

namespace {

/// Queues a request row and the trace that travels with it.
void add_request(data::ledger_batch& b, domain::request_record&& r) {
  if (!r.steps.empty())
    b.traces.push_back({r.request_id, r.ts_us, std::move(r.steps)});
  b.requests.push_back(std::move(r));
}

/// Moves the rows waiting in the inbox (if any) into the batch.
void collect(ledger_state& s) {
  if (!s.settings.inbox)
    return;
  for (auto& r : s.settings.inbox->take())
    add_request(s.batch, std::move(r));
}

} // namespace

ledger_state::ledger_state() = default;

ledger_state::~ledger_state() {
  collect(*this);
  if (writer && !batch.empty())
    writer->submit(std::move(batch), nullptr);
  writer.reset(); // drains and joins
}

ledger_actor::behavior_type
ledger(ledger_actor::stateful_pointer<ledger_state> self,
       ledger_settings settings, std::shared_ptr<telemetry> metrics) {
  self->state.settings = std::move(settings);
  const auto& where = self->state.settings.where;
  auto store = data::ledger_store::open(where, true);
  if (!store) {
    data::log_event(
      data::log_level::error, "ledger_open_failed",
      {{"path", where.describe()}, {"message", store.err().message}});
    self->quit(to_caf(store.err().code, store.err().message));
    return ledger_actor::behavior_type::make_empty_behavior();
  }
  const auto& ls = self->state.settings;
  store->bound_conversations(ls.conversation_max_turns,
                             ls.conversation_retention_us);
  self->state.writer = std::make_unique<ledger_writer>(std::move(*store),
                                                       std::move(metrics), ls);
  // Hands the batch to the writer; with a ticket, the writer reports back.
  auto hand_over = [self](uint64_t ticket) {
    auto& s = self->state;
    ledger_writer::done_fn done;
    if (ticket != 0) {
      auto me = caf::actor_cast<ledger_actor>(self);
      done = [me, ticket](int64_t written) {
        caf::anon_send(me, atom::internal_v, atom::flush_v, ticket, written);
      };
    }
    s.writer->submit(std::move(s.batch), std::move(done));
    s.batch = {};
  };
  // Arms the flush timer once.
  auto arm = [self] {
    auto& s = self->state;
    if (s.tick_pending)
      return;
    s.tick_pending = true;
    self->delayed_send(self, s.settings.flush_interval, atom::internal_v,
                       atom::tick_v);
  };
  // Hands over a full batch at once, else arms the timer.
  auto queued = [self, hand_over, arm] {
    if (self->state.batch.size() >= self->state.settings.max_batch)
      hand_over(0);
    else
      arm();
  };
  // A restarted ledger collects what its predecessor left in the inbox.
  if (self->state.settings.inbox && self->state.settings.inbox->size() > 0)
    arm();
  return {
    [self, queued](atom::put, domain::request_record& r) {
      add_request(self->state.batch, std::move(r));
      queued();
    },
    [self, hand_over, arm](atom::internal, atom::put) {
      // Rows wait in the inbox until the timer, unless a batch is full.
      auto& s = self->state;
      if (s.settings.inbox
          && s.settings.inbox->size() >= s.settings.max_batch) {
        collect(s);
        hand_over(0);
      } else {
        arm();
      }
    },
    [self, queued](atom::put, domain::llm_call_record& r) {
      self->state.batch.llm_calls.push_back(std::move(r));
      queued();
    },
    [self, queued](atom::put, domain::trace_record& r) {
      self->state.batch.traces.push_back(std::move(r));
      queued();
    },
    [self, queued](atom::put, domain::sql_audit_record& r) {
      self->state.batch.sql_audits.push_back(std::move(r));
      queued();
    },
    [self, hand_over](atom::flush) -> caf::result<int64_t> {
      auto& s = self->state;
      auto ticket = s.next_ticket++;
      auto rp = self->make_response_promise<int64_t>();
      s.waiting.emplace(ticket, rp);
      collect(s);
      hand_over(ticket);
      return rp;
    },
    [self, hand_over](atom::internal, atom::tick) {
      self->state.tick_pending = false;
      collect(self->state);
      if (!self->state.batch.empty())
        hand_over(0);
    },
    [self](atom::internal, atom::flush, uint64_t ticket, int64_t written) {
      auto& w = self->state.waiting;
      if (auto it = w.find(ticket); it != w.end()) {
        it->second.deliver(written);
        w.erase(it);
      }
    },
  };
}

ledger_reader_actor::behavior_type
ledger_reader(ledger_reader_actor::stateful_pointer<ledger_reader_state> self,
              data::ledger_location where, bool cost_is_fictional,
              int64_t conversation_retention_us) {
  self->state.cost_is_fictional = cost_is_fictional;
  self->state.conversation_retention_us = conversation_retention_us;
  auto store = data::ledger_store::open(where, false);
  if (!store) {
    data::log_event(data::log_level::error, "ledger_open_failed",
                    {{"path", where.describe()},
                     {"message", store.err().message}});
    self->quit(to_caf(store.err().code, store.err().message));
    return ledger_reader_actor::behavior_type::make_empty_behavior();
  }
  self->state.store
    = std::make_unique<data::ledger_store>(std::move(store.value()));
  return {
    [self](atom::stats, std::string& label,
           int64_t seconds) -> caf::result<std::string> {
      auto r = self->state.store->stats_json(label, seconds, now_us(),
                                             self->state.cost_is_fictional);
      if (!r)
        return to_caf(r.err().code, r.err().message);
      return std::move(r.value());
    },
    [self](atom::run, std::string& id) -> caf::result<std::string> {
      auto r = self->state.store->run_json(id);
      if (!r)
        return to_caf(r.err().code, r.err().message);
      return std::move(r.value());
    },
    [self](atom::conversation, std::string& id,
           std::string& key_name) -> caf::result<std::vector<domain::turn>> {
      auto& s = self->state;
      auto r = s.store->conversation(id, now_us() - s.conversation_retention_us);
      if (!r)
        return to_caf(r.err().code, r.err().message);
      // Another key's conversation is as unknown as one that never was.
      std::vector<domain::turn> turns;
      for (auto& x : *r) {
        if (x.key_name != key_name) {
          turns.clear();
          break;
        }
        turns.push_back(std::move(x.t));
      }
      if (turns.empty())
        return to_caf(domain::ec::not_found,
                      "no conversation " + id + " (it may have expired)");
      return turns;
    },
    [self](atom::count) -> caf::result<int64_t> {
      auto r = self->state.store->count_requests();
      if (!r)
        return to_caf(r.err().code, r.err().message);
      return r.value();
    },
  };
}

} // namespace candor::actors
