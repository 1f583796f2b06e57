#include "actors/ledger.hpp"

#include "domain/log.hpp"

namespace candor::actors {

namespace {

template <class Self>
bool open_store(Self* self, const std::string& path, bool writer) {
  auto store = data::ledger_store::open(path, writer);
  if (!store) {
    domain::log_event(domain::log_level::error, "ledger_open_failed",
                      {{"path", path}, {"message", store.err().message}});
    self->quit(to_caf(store.err().code, store.err().message));
    return false;
  }
  self->state.store
    = std::make_unique<data::ledger_store>(std::move(store.value()));
  return true;
}

int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace

void ledger_state::flush() {
  if (!store || batch.empty())
    return;
  auto n = static_cast<int64_t>(batch.size());
  if (auto err = store->write(batch)) {
    domain::log_event(domain::log_level::error, "ledger_write_failed",
                      {{"rows", n}, {"message", err.message}});
    return;
  }
  written += n;
  if (metrics)
    metrics->ledger_rows(n);
  batch = {};
}

ledger_state::~ledger_state() {
  flush();
}

ledger_actor::behavior_type
ledger(ledger_actor::stateful_pointer<ledger_state> self,
       ledger_settings settings, std::shared_ptr<telemetry> metrics) {
  self->state.settings = std::move(settings);
  self->state.metrics = std::move(metrics);
  if (!open_store(self, self->state.settings.path, true))
    return ledger_actor::behavior_type::make_empty_behavior();
  // Flushes when the batch is full, else arms the timer once.
  auto queued = [self] {
    auto& s = self->state;
    if (s.batch.size() >= s.settings.max_batch) {
      s.flush();
    } else if (!s.tick_pending) {
      s.tick_pending = true;
      self->delayed_send(self, s.settings.flush_interval, atom::internal_v,
                         atom::tick_v);
    }
  };
  return {
    [self, queued](atom::put, domain::request_record& r) {
      self->state.batch.requests.push_back(std::move(r));
      queued();
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
    [self](atom::flush) -> int64_t {
      self->state.flush();
      return self->state.written;
    },
    [self](atom::internal, atom::tick) {
      auto& s = self->state;
      s.tick_pending = false;
      s.flush();
      if (!s.batch.empty()) { // a failed write: retry later
        s.tick_pending = true;
        self->delayed_send(self, s.settings.flush_interval, atom::internal_v,
                           atom::tick_v);
      }
    },
  };
}

ledger_reader_actor::behavior_type
ledger_reader(ledger_reader_actor::stateful_pointer<ledger_reader_state> self,
              std::string path, bool cost_is_fictional) {
  self->state.cost_is_fictional = cost_is_fictional;
  if (!open_store(self, path, false))
    return ledger_reader_actor::behavior_type::make_empty_behavior();
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
    [self](atom::count) -> caf::result<int64_t> {
      auto r = self->state.store->count_requests();
      if (!r)
        return to_caf(r.err().code, r.err().message);
      return r.value();
    },
  };
}

} // namespace candor::actors
