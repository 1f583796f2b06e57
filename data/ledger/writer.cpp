// The ledger writer: commits batches on a lowered-priority thread, with
// retries, a catch-up thread and a row-by-row fallback.

#include "data/ledger/writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "data/log.hpp"

namespace candor::actors {

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

/// Raises the calling thread's nice value by `levels` (Linux: per thread),
/// up to 19. False (logged) when the kernel refuses.
bool lower_priority(int levels) {
  auto tid = static_cast<id_t>(::gettid());
  errno = 0;
  int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno == 0
      && ::setpriority(PRIO_PROCESS, tid, std::min(now + levels, 19)) == 0)
    return true;
  data::log_event(data::log_level::warn, "ledger_priority_unchanged",
                  {{"levels", levels}, {"message", std::strerror(errno)}});
  return false;
}

} // namespace

ledger_writer::ledger_writer(data::ledger_store store,
                             std::shared_ptr<telemetry> metrics,
                             const ledger_settings& s)
    : store_(std::move(store)), metrics_(std::move(metrics)),
      attempts_(std::max(s.write_attempts, 1)), retry_delay_(s.retry_delay),
      catch_up_rows_(s.catch_up_rows) {
  // The catch-up thread first, so the writer knows whether it has one; a
  // writer without it keeps the server's priority.
  if (s.writer_nice > 0) {
    try {
      catch_up_thread_ = std::thread{[this] { loop(true); }};
      // Named here, before the constructor returns, not by the thread
      // itself: whoever looks for it (ps, the tests) finds it at once.
      pthread_setname_np(catch_up_thread_.native_handle(), "candor.ledger+");
    } catch (const std::system_error& e) {
      data::log_event(data::log_level::warn, "ledger_catch_up_unavailable",
                      {{"message", e.what()}});
    }
  }
  bool lower = s.writer_nice > 0 && catch_up_thread_.joinable();
  try {
    writer_ = std::thread{[this, lower, levels = s.writer_nice] {
      if (lower && lower_priority(levels)) {
        {
          std::lock_guard<std::mutex> g{mtx_};
          catch_up_ = true;
        }
        // Whose turn it is may have changed (a batch submitted, or the
        // writer stopped, before this thread ran).
        cv_.notify_all();
      }
      loop(false);
    }};
    pthread_setname_np(writer_.native_handle(), "candor.ledger");
  } catch (...) {
    {
      std::lock_guard<std::mutex> g{mtx_};
      stopping_ = true;
    }
    cv_.notify_all();
    if (catch_up_thread_.joinable())
      catch_up_thread_.join();
    throw;
  }
}

ledger_writer::~ledger_writer() {
  {
    std::lock_guard<std::mutex> g{mtx_};
    stopping_ = true;
  }
  cv_.notify_all();
  writer_.join();
  if (catch_up_thread_.joinable())
    catch_up_thread_.join();
}

void ledger_writer::submit(data::ledger_batch batch, done_fn done) {
  {
    std::lock_guard<std::mutex> g{mtx_};
    waiting_rows_ += batch.size();
    jobs_.push_back({std::move(batch), std::move(done)});
    // Set under the lock, so that the last value set is the current one.
    if (metrics_)
      metrics_->ledger_backlog(static_cast<int64_t>(waiting_rows_));
  }
  cv_.notify_all();
}

int64_t ledger_writer::commits(bool catch_up) const {
  std::lock_guard<std::mutex> g{mtx_};
  return commits_[catch_up ? 1 : 0];
}

bool ledger_writer::catching_up() const {
  std::lock_guard<std::mutex> g{mtx_};
  return catch_up_;
}

bool ledger_writer::may_take(bool catch_up) const {
  if (jobs_.empty() || committing_)
    return false;
  if (!catch_up_)
    return !catch_up; // the writer works alone
  // Behind (or stopping): the catch-up thread's turn, else the writer's.
  bool behind = stopping_ || waiting_rows_ >= catch_up_rows_;
  return catch_up == behind;
}

void ledger_writer::loop(bool catch_up) {
  for (;;) {
    std::unique_lock<std::mutex> lk{mtx_};
    cv_.wait(lk, [&] {
      return (stopping_ && jobs_.empty() && !committing_) || may_take(catch_up);
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
    waiting_rows_ -= j.batch.size();
    ++commits_[catch_up ? 1 : 0];
    if (metrics_)
      metrics_->ledger_backlog(static_cast<int64_t>(waiting_rows_));
    lk.unlock();
    cv_.notify_all();
  }
}

void ledger_writer::commit(const data::ledger_batch& batch) {
  if (batch.empty())
    return;
  auto n = static_cast<int64_t>(batch.size());
  for (int attempt = 1;; ++attempt) {
    auto err = store_.write(batch);
    if (!err) {
      if (metrics_ && metrics_->ledger_write_ok())
        data::log_event(data::log_level::warn, "ledger_write_recovered",
                        {{"rows", n}, {"attempt", attempt}});
      break;
    }
    // Loud, but one line per 25 attempts in a long outage (a full disk).
    if (attempt == 1 || attempt % 25 == 0)
      data::log_event(
        data::log_level::error, "ledger_write_failed",
        {{"rows", n}, {"attempt", attempt}, {"message", err.message}});
    if (metrics_)
      metrics_->ledger_write_failed(err.message);
    // The storage failing keeps the rows queued until it recovers,
    // however long (unless the server is stopping: then they are given up
    // after three tries, each logged); after `attempts_`, a batch that
    // fails otherwise is written row by row, so that only a row the
    // database refuses is left out.
    bool stopping = false;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stopping = stopping_;
    }
    bool storage = store_.last_write_storage_fault();
    if ((storage && stopping && attempt >= 3)
        || (!storage && attempt >= attempts_)) {
      n = commit_row_by_row(batch);
      break;
    }
    std::this_thread::sleep_for(retry_delay_);
  }
  written_ += n;
  if (metrics_)
    metrics_->ledger_rows(n);
}

int64_t ledger_writer::commit_row_by_row(const data::ledger_batch& batch) {
  int64_t stored = 0;
  auto one = [&](std::string_view kind, const std::string& request_id,
                 data::ledger_batch single) {
    if (auto err = store_.write(single)) {
      data::log_event(
        data::log_level::error, "ledger_row_dropped",
        {{"kind", kind}, {"requestId", request_id}, {"message", err.message}});
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

} // namespace candor::actors
