#pragma once

// The server's API keys: which requests may pass, each key's token bucket
// and daily model-token budget, and the per-key figures of /metrics. Pure
// (no Beast); unit-tested in net_key_gate.

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "data/ledger/store.hpp"

namespace candor::net {

/// What the gate decided about one request's bearer token.
struct key_verdict {
  enum class kind {
    ok,           ///< a live key with room: `name` is its name
    missing,      ///< no bearer token (401)
    invalid,      ///< not an active key (401): unknown, malformed, revoked
    rate_limited, ///< the key's bucket is empty (429)
    budget_spent, ///< the key's model tokens for today are spent (429)
  };
  kind result = kind::missing;
  std::string name;          ///< the key's name (ok and the 429s)
  int64_t retry_after_s = 0; ///< the 429s: whole seconds, at least 1
};

/// The active keys, loaded from the ledger at startup and again every
/// http.keysReloadSeconds and on SIGHUP. Thread-safe. A token is hashed
/// (SHA-256) and compared with every active key's hash in constant time;
/// the key itself is never kept.
class key_gate {
public:
  using clock = std::chrono::steady_clock;

  /// Replaces the keys with the active ones of `keys`; `used_today` holds
  /// the tokens each name spent since the UTC midnight of `now_us` (from
  /// the ledger: other processes' requests and this one's before a
  /// restart). A key kept across loads keeps its bucket; its usage is the
  /// larger of the two counts (the ledger may lag the writer).
  void load(const std::vector<data::api_key>& keys,
            const std::map<std::string, int64_t>& used_today, int64_t now_us);

  /// True while at least one active key is loaded: requests then need one.
  bool enabled() const noexcept;

  /// Decides on `token` (the bearer token, empty when none) at `now`
  /// (steady, for the bucket) and `now_us` (wall clock, for the UTC day).
  /// An admitted request takes one token of its key's bucket.
  key_verdict admit(std::string_view token, clock::time_point now,
                    int64_t now_us);

  /// Adds a finished request's model tokens to its key's day.
  void spent(const std::string& name, int64_t tokens, int64_t now_us);

  /// The per-key series of /metrics in the text format (bounded: one
  /// line set per key name loaded since startup); empty when no key was
  /// ever loaded.
  std::string metrics() const;

private:
  struct figures {
    int64_t admitted = 0;
    int64_t rate_limited = 0;
    int64_t budget_spent = 0;
    int64_t tokens = 0;
  };
  struct entry {
    data::api_key key;
    double bucket = 0;
    clock::time_point refilled{};
    int64_t day = 0;  ///< UTC day number of `used`
    int64_t used = 0; ///< model tokens spent that day
  };

  mutable std::mutex mtx_;
  std::vector<entry> keys_;
  std::map<std::string, figures> figures_;
  int64_t unauthorized_ = 0;
};

/// Seconds from `now_us` (wall clock) to the next UTC midnight, at least 1.
int64_t seconds_to_utc_midnight(int64_t now_us) noexcept;

} // namespace candor::net
