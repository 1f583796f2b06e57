#include "actors/ledger.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <cerrno>
#include <cstring>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <thread>

#include <caf/send.hpp>

#include "domain/log.hpp"

namespace candor::actors {

/// Owns the ledger connection and commits batches on its own thread, in
/// order. A failed commit is retried (the rows stay queued) so nothing is
/// lost to a transient error such as a locked database. A batch that still
/// fails after every try is written row by row, so that a row the database
/// refuses for good costs only itself: it is logged (`ledger_row_dropped`,
/// with its kind and request id) and left out of the written count.
///
/// Writing the ledger is bookkeeping, not serving: the writer thread runs
/// at a lower CPU priority (`writer_nice` levels above the server's nice
/// value), so on a busy machine it commits
/// in the gaps the request path leaves instead of taking a core from it for
/// a whole batch. So that a low-priority writer can never fall behind for
/// good, a second thread at the server's own priority commits too while
/// `catch_up_rows` or more records wait (a thread cannot raise its own
/// priority back without privileges). One batch is committed at a time, in
/// the order submitted, whichever thread commits it.
class ledger_writer {
public:
  using done_fn = std::function<void(int64_t written)>;

  ledger_writer(data::ledger_store store, std::shared_ptr<telemetry> metrics,
                const ledger_settings& s)
    : store_(std::move(store)),
      metrics_(std::move(metrics)),
      attempts_(std::max(s.write_attempts, 1)),
      retry_delay_(s.retry_delay),
      catch_up_rows_(s.catch_up_rows) {
    thread_ = std::thread{[this, nice = s.writer_nice] {
      pthread_setname_np(pthread_self(), "candor.ledger");
      if (nice > 0)
        lower_priority(nice);
      loop(false);
    }};
    if (s.writer_nice > 0)
      catch_up_ = std::thread{[this] {
        pthread_setname_np(pthread_self(), "candor.ledger+");
        loop(true);
      }};
  }

  ~ledger_writer() {
    {
      std::lock_guard<std::mutex> g{mtx_};
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (catch_up_.joinable())
      catch_up_.join();
  }

  /// Queues a batch (may be empty) and calls `done` after it is committed.
  void submit(data::ledger_batch batch, done_fn done) {
    size_t backlog = 0;
    {
      std::lock_guard<std::mutex> g{mtx_};
      backlog = waiting_rows_ += batch.size();
      jobs_.push_back({std::move(batch), std::move(done)});
    }
    cv_.notify_all();
    if (metrics_)
      metrics_->ledger_backlog(static_cast<int64_t>(backlog));
  }

private:
  struct job {
    data::ledger_batch batch;
    done_fn done;
  };

  /// Raises the calling thread's nice value by `levels` (Linux: per
  /// thread), up to 19.
  static void lower_priority(int levels) {
    auto tid = static_cast<id_t>(::gettid());
    errno = 0;
    int now = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && ::setpriority(PRIO_PROCESS, tid,
                                    std::min(now + levels, 19)) == 0)
      return;
    domain::log_event(domain::log_level::warn, "ledger_priority_unchanged",
                      {{"levels", levels}, {"message", std::strerror(errno)}});
  }

  /// The catch-up thread takes a batch only while the backlog is large,
  /// or when stopping (so that shutdown drains at full priority).
  bool may_take(bool catch_up) const {
    return !jobs_.empty() && !committing_
           && (!catch_up || stopping_ || waiting_rows_ >= catch_up_rows_);
  }

  void loop(bool catch_up) {
    for (;;) {
      std::unique_lock<std::mutex> lk{mtx_};
      cv_.wait(lk, [&] {
        return (stopping_ && jobs_.empty()) || may_take(catch_up);
      });
      if (jobs_.empty())
        return; // stopping and drained
      auto j = std::move(jobs_.front());
      jobs_.pop_front();
      committing_ = true;
      lk.unlock();
      commit(j.batch);
      if (j.done)
        j.done(written_);
      lk.lock();
      committing_ = false;
      auto backlog = waiting_rows_ -= j.batch.size();
      lk.unlock();
      cv_.notify_all();
      if (metrics_)
        metrics_->ledger_backlog(static_cast<int64_t>(backlog));
    }
  }

  void commit(const data::ledger_batch& batch) {
    if (batch.empty())
      return;
    auto n = static_cast<int64_t>(batch.size());
    for (int attempt = 1;; ++attempt) {
      auto err = store_.write(batch);
      if (!err)
        break;
      domain::log_event(domain::log_level::error, "ledger_write_failed",
                        {{"rows", n},
                         {"attempt", attempt},
                         {"message", err.message}});
      if (attempt == attempts_) {
        n = commit_row_by_row(batch);
        break;
      }
      std::this_thread::sleep_for(retry_delay_);
    }
    written_ += n;
    if (metrics_)
      metrics_->ledger_rows(n);
  }

  /// Writes each record of `batch` in a transaction of its own; returns how
  /// many were stored. A record that fails is logged and dropped.
  int64_t commit_row_by_row(const data::ledger_batch& batch) {
    int64_t stored = 0;
    auto one = [&](std::string_view kind, const std::string& request_id,
                   data::ledger_batch single) {
      if (auto err = store_.write(single)) {
        domain::log_event(domain::log_level::error, "ledger_row_dropped",
                          {{"kind", kind},
                           {"requestId", request_id},
                           {"message", err.message}});
        return;
      }
      ++stored;
    };
    for (const auto& x : batch.requests)
      one("request", x.request_id, {{x}, {}, {}, {}});
    for (const auto& x : batch.llm_calls)
      one("llm_call", x.request_id, {{}, {x}, {}, {}});
    for (const auto& x : batch.traces)
      one("trace", x.request_id, {{}, {}, {x}, {}});
    for (const auto& x : batch.sql_audits)
      one("sql_audit", x.request_id, {{}, {}, {}, {x}});
    return stored;
  }

  data::ledger_store store_;
  std::shared_ptr<telemetry> metrics_;
  int attempts_;
  std::chrono::milliseconds retry_delay_;
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<job> jobs_;
  bool stopping_ = false;
  /// A thread is committing a batch it took (jobs_ holds only later ones).
  bool committing_ = false;
  /// Records in submitted batches not yet committed.
  size_t waiting_rows_ = 0;
  size_t catch_up_rows_;
  /// Touched only by the thread committing (one at a time, under
  /// committing_).
  int64_t written_ = 0;
  std::thread thread_;
  std::thread catch_up_;
};

namespace {

int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace

// -- ledger_inbox -------------------------------------------------------------

bool ledger_inbox::push(domain::request_record rec, size_t max_batch) {
  std::lock_guard<std::mutex> guard{mtx_};
  rows_.push_back(std::move(rec));
  bool tell = !told_ || (max_batch > 0 && rows_.size() % max_batch == 0);
  told_ = true;
  return tell;
}

std::vector<domain::request_record> ledger_inbox::take() {
  std::vector<domain::request_record> out;
  std::lock_guard<std::mutex> guard{mtx_};
  out.swap(rows_);
  told_ = false;
  return out;
}

size_t ledger_inbox::size() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return rows_.size();
}

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
  auto store = data::ledger_store::open(self->state.settings.path, true);
  if (!store) {
    domain::log_event(domain::log_level::error, "ledger_open_failed",
                      {{"path", self->state.settings.path},
                       {"message", store.err().message}});
    self->quit(to_caf(store.err().code, store.err().message));
    return ledger_actor::behavior_type::make_empty_behavior();
  }
  const auto& ls = self->state.settings;
  self->state.writer = std::make_unique<ledger_writer>(
    std::move(*store), std::move(metrics), ls);
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
              std::string path, bool cost_is_fictional) {
  self->state.cost_is_fictional = cost_is_fictional;
  auto store = data::ledger_store::open(path, false);
  if (!store) {
    domain::log_event(domain::log_level::error, "ledger_open_failed",
                      {{"path", path}, {"message", store.err().message}});
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
    [self](atom::count) -> caf::result<int64_t> {
      auto r = self->state.store->count_requests();
      if (!r)
        return to_caf(r.err().code, r.err().message);
      return r.value();
    },
  };
}

} // namespace candor::actors
