// The API key gate: constant-time lookup by hash, token buckets, the
// daily model-token budget and the per-key /metrics lines.

#include "net/key_gate.hpp"

#include <algorithm>
#include <cmath>

#include "data/ledger/keys.hpp"
#include "net/http_util.hpp"

namespace candor::net {

namespace {

constexpr int64_t day_us = 86'400'000'000;

int64_t utc_day(int64_t now_us) noexcept {
  return now_us / day_us;
}

} // namespace

int64_t seconds_to_utc_midnight(int64_t now_us) noexcept {
  auto next = (utc_day(now_us) + 1) * day_us;
  auto s = (next - now_us + 999'999) / 1'000'000;
  return std::max<int64_t>(s, 1);
}

void key_gate::load(const std::vector<data::api_key>& keys,
                    const std::map<std::string, int64_t>& used_today,
                    int64_t now_us) {
  auto day = utc_day(now_us);
  auto now = clock::now();
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<entry> next;
  for (const auto& k : keys) {
    if (k.revoked_us != 0)
      continue;
    entry e;
    e.key = k;
    e.bucket = static_cast<double>(k.burst);
    e.refilled = now;
    e.day = day;
    auto it = used_today.find(k.name);
    e.used = it == used_today.end() ? 0 : it->second;
    for (const auto& old : keys_)
      if (old.key.hash == k.hash && old.key.name == k.name) {
        e.bucket = std::min(old.bucket, e.bucket);
        e.refilled = old.refilled;
        if (old.day == day)
          e.used = std::max(e.used, old.used);
      }
    figures_[k.name]; // the key's series exist from its first load
    next.push_back(std::move(e));
  }
  keys_ = std::move(next);
}

bool key_gate::enabled() const noexcept {
  std::lock_guard<std::mutex> guard{mtx_};
  return !keys_.empty();
}

key_verdict key_gate::admit(std::string_view token, clock::time_point now,
                            int64_t now_us) {
  key_verdict v;
  if (token.empty()) {
    std::lock_guard<std::mutex> guard{mtx_};
    ++unauthorized_;
    v.result = key_verdict::kind::missing;
    return v;
  }
  // Hashed outside the lock; a token without a key's shape is not hashed.
  std::string hash;
  if (data::plausible_api_key(token))
    hash = data::key_hash(token);
  std::lock_guard<std::mutex> guard{mtx_};
  entry* match = nullptr;
  if (!hash.empty())
    for (auto& e : keys_) // every key is compared: no early exit
      if (constant_time_equal(hash, e.key.hash))
        match = &e;
  if (match == nullptr) {
    ++unauthorized_;
    v.result = key_verdict::kind::invalid;
    return v;
  }
  auto& e = *match;
  auto& fig = figures_[e.key.name];
  v.name = e.key.name;
  auto day = utc_day(now_us);
  if (e.day != day) {
    e.day = day;
    e.used = 0;
  }
  if (e.key.daily_tokens > 0 && e.used >= e.key.daily_tokens) {
    ++fig.budget_spent;
    v.result = key_verdict::kind::budget_spent;
    v.retry_after_s = seconds_to_utc_midnight(now_us);
    return v;
  }
  auto rate = std::max(e.key.rate, 1e-9);
  auto elapsed = std::chrono::duration<double>(now - e.refilled).count();
  if (elapsed > 0) {
    e.bucket = std::min(static_cast<double>(e.key.burst),
                        e.bucket + elapsed * rate);
    e.refilled = now;
  }
  if (e.bucket < 1.0) {
    ++fig.rate_limited;
    v.result = key_verdict::kind::rate_limited;
    auto wait = std::ceil((1.0 - e.bucket) / rate);
    v.retry_after_s = std::clamp<int64_t>(static_cast<int64_t>(wait), 1,
                                          86400);
    return v;
  }
  e.bucket -= 1.0;
  ++fig.admitted;
  v.result = key_verdict::kind::ok;
  return v;
}

void key_gate::spent(const std::string& name, int64_t tokens, int64_t now_us) {
  if (name.empty() || tokens <= 0)
    return;
  std::lock_guard<std::mutex> guard{mtx_};
  figures_[name].tokens += tokens;
  auto day = utc_day(now_us);
  for (auto& e : keys_)
    if (e.key.name == name) {
      if (e.day != day) {
        e.day = day;
        e.used = 0;
      }
      e.used += tokens;
    }
}

std::string key_gate::metrics() const {
  std::lock_guard<std::mutex> guard{mtx_};
  if (figures_.empty())
    return {};
  std::string out;
  auto series = [&](const char* name, const char* type, const char* help,
                    auto&& each) {
    out += "# HELP ";
    out += name;
    out += " ";
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += " ";
    out += type;
    out += "\n";
    each();
  };
  // Key names match [a-z0-9_-]: nothing to escape in a label value.
  auto line = [&](const char* name, const std::string& key,
                  const char* extra, int64_t value) {
    out += name;
    out += "{key=\"" + key + "\"";
    out += extra;
    out += "} " + std::to_string(value) + "\n";
  };
  series("candor_key_requests_total", "counter",
         "Requests admitted per API key (by name).", [&] {
           for (const auto& [k, f] : figures_)
             line("candor_key_requests_total", k, "", f.admitted);
         });
  series("candor_key_rejected_total", "counter",
         "Requests answered 429 per API key: its rate or its daily model "
         "tokens.",
         [&] {
           for (const auto& [k, f] : figures_) {
             line("candor_key_rejected_total", k, ",reason=\"rate\"",
                  f.rate_limited);
             line("candor_key_rejected_total", k, ",reason=\"daily_tokens\"",
                  f.budget_spent);
           }
         });
  series("candor_key_tokens_total", "counter",
         "Model tokens spent per API key since startup.", [&] {
           for (const auto& [k, f] : figures_)
             line("candor_key_tokens_total", k, "", f.tokens);
         });
  series("candor_key_tokens_today", "gauge",
         "Model tokens spent per active API key this UTC day.", [&] {
           for (const auto& e : keys_)
             line("candor_key_tokens_today", e.key.name, "", e.used);
         });
  series("candor_key_unauthorized_total", "counter",
         "Requests refused 401 for want of an active API key.", [&] {
           out += "candor_key_unauthorized_total "
                  + std::to_string(unauthorized_) + "\n";
         });
  return out;
}

} // namespace candor::net
