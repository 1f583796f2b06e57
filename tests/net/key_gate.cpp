// The API key gate: who passes, the token bucket, the daily model-token
// budget, reloads, and the per-key /metrics lines.

#include <boost/test/unit_test.hpp>

#include "data/ledger/keys.hpp"
#include "net/key_gate.hpp"

using namespace candor;
using namespace candor::net;
using kind = key_verdict::kind;
using namespace std::chrono_literals;

namespace {

constexpr int64_t day_us = 86'400'000'000;
constexpr int64_t noon_us = 20'000 * day_us + day_us / 2; // a UTC noon

data::api_key key(std::string name, const std::string& secret, double rate,
                  int64_t burst, int64_t daily) {
  data::api_key k;
  k.name = std::move(name);
  k.hash = data::key_hash(secret);
  k.prefix = data::key_prefix(secret);
  k.rate = rate;
  k.burst = burst;
  k.daily_tokens = daily;
  return k;
}

const std::string alice = "cnd_alice-secret-0123456789";
const std::string bob = "cnd_bob-secret-0123456789";

} // namespace

BOOST_AUTO_TEST_SUITE(net_key_gate)

BOOST_AUTO_TEST_CASE(rate_limited_is_429) {
  BOOST_TEST(domain::http_status(domain::ec::rate_limited) == 429);
  BOOST_TEST(domain::to_string(domain::ec::rate_limited) == "rate_limited");
}

BOOST_AUTO_TEST_CASE(no_keys_means_open_and_bad_tokens_are_refused) {
  key_gate gate;
  BOOST_TEST(!gate.enabled());
  BOOST_TEST(gate.metrics().empty());
  auto revoked = key(std::string{"bob"}, bob, 1, 1, 0);
  revoked.revoked_us = 1;
  gate.load({key("alice", alice, 1, 1, 0), revoked}, {}, noon_us);
  BOOST_TEST(gate.enabled());
  auto t = key_gate::clock::now();
  BOOST_TEST((gate.admit("", t, noon_us).result == kind::missing));
  BOOST_TEST((gate.admit("cnd_nope", t, noon_us).result == kind::invalid));
  BOOST_TEST((gate.admit("not-a-key", t, noon_us).result == kind::invalid));
  BOOST_TEST((gate.admit(bob, t, noon_us).result == kind::invalid));
  auto v = gate.admit(alice, t, noon_us);
  BOOST_TEST((v.result == kind::ok));
  BOOST_TEST(v.name == "alice");
  // Revoked everywhere: nothing passes, and the gate is open again only
  // when no active key is left.
  gate.load({revoked}, {}, noon_us);
  BOOST_TEST(!gate.enabled());
}

BOOST_AUTO_TEST_CASE(the_bucket_refills_at_the_rate) {
  key_gate gate;
  gate.load({key("alice", alice, 0.5, 2, 0)}, {}, noon_us);
  auto t = key_gate::clock::now();
  BOOST_TEST((gate.admit(alice, t, noon_us).result == kind::ok));
  BOOST_TEST((gate.admit(alice, t, noon_us).result == kind::ok));
  auto v = gate.admit(alice, t, noon_us);
  BOOST_TEST((v.result == kind::rate_limited));
  BOOST_TEST(v.name == "alice");
  BOOST_TEST(v.retry_after_s == 2); // one request at 0.5/s
  v = gate.admit(alice, t + 1s, noon_us);
  BOOST_TEST((v.result == kind::rate_limited));
  BOOST_TEST(v.retry_after_s == 1);
  BOOST_TEST((gate.admit(alice, t + 2s, noon_us).result == kind::ok));
  // Never more than the burst, however long the pause.
  auto later = t + 1h;
  BOOST_TEST((gate.admit(alice, later, noon_us).result == kind::ok));
  BOOST_TEST((gate.admit(alice, later, noon_us).result == kind::ok));
  BOOST_TEST((gate.admit(alice, later, noon_us).result == kind::rate_limited));
  // A reload keeps the bucket (no fresh burst by SIGHUP).
  gate.load({key("alice", alice, 0.5, 2, 0)}, {}, noon_us);
  BOOST_TEST((gate.admit(alice, later, noon_us).result == kind::rate_limited));
}

BOOST_AUTO_TEST_CASE(the_daily_budget_lasts_until_utc_midnight) {
  key_gate gate;
  gate.load({key("alice", alice, 1000, 1000, 100), key("bob", bob, 1000, 1000, 0)},
            {{"alice", 60}}, noon_us);
  auto t = key_gate::clock::now();
  BOOST_TEST((gate.admit(alice, t, noon_us).result == kind::ok));
  gate.spent("alice", 50, noon_us); // 110 of 100: the next one waits
  auto v = gate.admit(alice, t, noon_us);
  BOOST_TEST((v.result == kind::budget_spent));
  BOOST_TEST(v.retry_after_s == 43200);
  BOOST_TEST(seconds_to_utc_midnight(noon_us) == 43200);
  BOOST_TEST(seconds_to_utc_midnight(noon_us + day_us / 2 - 1) == 1);
  // A reload reading fewer tokens from the ledger (it lags) keeps the count.
  gate.load({key("alice", alice, 1000, 1000, 100)}, {{"alice", 10}}, noon_us);
  BOOST_TEST((gate.admit(alice, t, noon_us).result == kind::budget_spent));
  // Bob has no budget; alice's new day starts at midnight.
  gate.load({key("alice", alice, 1000, 1000, 100), key("bob", bob, 1000, 1000, 0)},
            {}, noon_us);
  gate.spent("bob", 1'000'000, noon_us);
  BOOST_TEST((gate.admit(bob, t, noon_us).result == kind::ok));
  BOOST_TEST((gate.admit(alice, t, noon_us + day_us / 2).result == kind::ok));
}

BOOST_AUTO_TEST_CASE(metrics_name_keys_never_secrets) {
  key_gate gate;
  gate.load({key("alice", alice, 1, 1, 0)}, {}, noon_us);
  auto t = key_gate::clock::now();
  (void)gate.admit(alice, t, noon_us);
  (void)gate.admit(alice, t, noon_us);
  (void)gate.admit("", t, noon_us);
  gate.spent("alice", 42, noon_us);
  auto text = gate.metrics();
  BOOST_TEST(text.find("candor_key_requests_total{key=\"alice\"} 1\n")
             != std::string::npos);
  BOOST_TEST(
    text.find("candor_key_rejected_total{key=\"alice\",reason=\"rate\"} 1\n")
    != std::string::npos);
  BOOST_TEST(text.find("candor_key_tokens_total{key=\"alice\"} 42\n")
             != std::string::npos);
  BOOST_TEST(text.find("candor_key_tokens_today{key=\"alice\"} 42\n")
             != std::string::npos);
  BOOST_TEST(text.find("candor_key_unauthorized_total 1\n")
             != std::string::npos);
  BOOST_TEST(text.find(alice) == std::string::npos);
  BOOST_TEST(text.find(data::key_hash(alice)) == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
