#pragma once

// The API key calls of the ledger store, checked the same way on either
// backend (tests/data/ledger/keys.cpp for SQLite, postgres.cpp for
// PostgreSQL).

#include <string>

#include <boost/test/unit_test.hpp>

#include "data/ledger/keys.hpp"
#include "data/ledger/store.hpp"
#include "tests/support/ledger_rows.hpp"

namespace candor::test {

/// Adds, lists, revokes keys through `writer`; writes requests with key
/// names and reads their tokens and /stats' byKey back through `reader`.
inline void check_key_calls(data::ledger_store& writer,
                            data::ledger_store& reader) {
  using namespace candor::test::ledger_rows;
  constexpr int64_t t0 = 1'700'000'000'000'000;
  auto secret = data::new_api_key();
  BOOST_REQUIRE(secret.ok());
  data::api_key k;
  k.name = "alice";
  k.hash = data::key_hash(*secret);
  k.prefix = data::key_prefix(*secret);
  k.rate = 2.5;
  k.burst = 3;
  k.daily_tokens = 500;
  k.created_us = t0;
  auto added = writer.add_key(k);
  BOOST_REQUIRE_MESSAGE(added.ok(), (added.ok() ? "" : added.err().message));
  BOOST_TEST(*added);
  // The same name (or the same hash) again: refused, nothing changed.
  BOOST_TEST(!*writer.add_key(k));
  auto other = k;
  other.name = "bob";
  BOOST_TEST(!*writer.add_key(other)); // same hash
  other.hash = data::key_hash("cnd_another");
  BOOST_TEST(*writer.add_key(other));
  // A reader cannot add.
  BOOST_TEST(!reader.add_key(k).ok());
  auto keys = reader.list_keys();
  BOOST_REQUIRE(keys.ok());
  BOOST_REQUIRE_EQUAL(keys->size(), 2u);
  const auto& a = (*keys)[0];
  BOOST_TEST(a.name == "alice");
  BOOST_TEST(a.hash == k.hash);
  BOOST_TEST(a.prefix == k.prefix);
  BOOST_TEST(a.rate == 2.5);
  BOOST_TEST(a.burst == 3);
  BOOST_TEST(a.daily_tokens == 500);
  BOOST_TEST(a.created_us == t0);
  BOOST_TEST(a.revoked_us == 0);
  BOOST_TEST(*writer.revoke_key("bob", t0 + 5));
  BOOST_TEST(!*writer.revoke_key("bob", t0 + 6)); // already revoked
  BOOST_TEST(!*writer.revoke_key("carol", t0 + 6));
  keys = reader.list_keys();
  BOOST_TEST((*keys)[1].revoked_us == t0 + 5);
  // Request rows carry the key's name: tokens per key, and /stats.
  ledger_batch b;
  for (int i = 0; i < 3; ++i) {
    auto r = request("k-" + std::to_string(i), t0 + i * 1000, "docs",
                     "answered", 200, 10);
    r.tokens = 100;
    r.key_name = i < 2 ? "alice" : "";
    b.requests.push_back(r);
  }
  auto limited = request("k-429", t0 + 5000, "", "", 429, 1);
  limited.error = "rate_limited";
  limited.key_name = "alice";
  b.requests.push_back(limited);
  BOOST_REQUIRE(!writer.write(b));
  auto used = reader.key_tokens_since(t0);
  BOOST_REQUIRE(used.ok());
  BOOST_TEST(used->size() == 1u);
  BOOST_TEST(used->at("alice") == 200);
  BOOST_TEST(reader.key_tokens_since(t0 + 1500)->at("alice") == 0);
  auto stats = parse(reader.stats_json("24h", 86400, t0 + 10'000, true));
  auto by_key = stats.at("byKey").as_object();
  BOOST_TEST(by_key.size() == 1u);
  BOOST_TEST(by_key.at("alice").at("requests").as_int64() == 3);
  BOOST_TEST(by_key.at("alice").at("tokens").as_int64() == 200);
  BOOST_TEST(by_key.at("alice").at("rateLimited").as_int64() == 1);
}

} // namespace candor::test
