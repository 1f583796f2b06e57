#pragma once

// Declares what the caller of a question and the service share while it
// runs: a cancel signal (a client that hung up) and the progress events of
// the graph's steps (POST /ask with Accept: text/event-stream).

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace candor::domain {

/// A one-shot signal from any thread to whoever does the work: cancel()
/// runs the registered hook once, at once when the hook comes later.
/// Thread-safe. Also what the model client's calls carry (an aborted call
/// closes its connection).
class cancel_signal {
public:
  /// Raises the signal; the hook (if any) runs now, on this thread, once.
  void cancel() {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (cancelled_.exchange(true))
        return;
      hook = std::move(hook_);
      hook_ = nullptr;
    }
    if (hook)
      hook();
  }

  bool cancelled() const noexcept {
    return cancelled_.load(std::memory_order_acquire);
  }

  /// Sets the hook cancel() runs (replacing an earlier one; empty: none).
  /// Runs it at once, on this thread, when the signal is already raised.
  void on_cancel(std::function<void()> hook) {
    {
      std::lock_guard<std::mutex> guard{mtx_};
      if (!cancelled_.load(std::memory_order_relaxed)) {
        hook_ = std::move(hook);
        return;
      }
    }
    if (hook)
      hook();
  }

private:
  std::mutex mtx_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> hook_;
};

/// One step of a question as a streaming client sees it: an event name
/// (`route`, `retrieval`, `sql`, `rows`, `answer`) and its JSON data.
struct progress_event {
  std::string event;
  std::string data;
};

/// A question in flight as its caller and the service share it. The
/// caller raises `stop` (e.g. its client hung up); the service stops the
/// question's work and ends it as `cancelled`. `progress`, when set, is
/// told of each step as it finishes, from the service's threads (the
/// caller posts to its own). Thread-safe.
struct request_control {
  cancel_signal stop;
  std::function<void(progress_event)> progress;
};

using request_control_ptr = std::shared_ptr<request_control>;

} // namespace candor::domain
