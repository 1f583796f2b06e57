// The ledger's API keys on SQLite: added, listed, revoked, stored hashed;
// request rows carry the key's name (schema version 4, migrated from 3).

#include <cctype>
#include <string>

#include <boost/test/unit_test.hpp>

#include "data/ledger/keys.hpp"
#include "data/ledger/sql.hpp"
#include "data/ledger/store.hpp"
#include "tests/support/key_checks.hpp"
#include "tests/support/ledger_rows.hpp"

using namespace candor;
using namespace candor::data;
using namespace candor::test::ledger_rows;

BOOST_AUTO_TEST_SUITE(data_ledger_keys)

BOOST_AUTO_TEST_CASE(keys_are_generated_hashed_and_named) {
  auto a = new_api_key();
  auto b = new_api_key();
  BOOST_REQUIRE(a.ok() && b.ok());
  BOOST_TEST(a->size() == 47u);
  BOOST_TEST(a->substr(0, 4) == "cnd_");
  BOOST_TEST(*a != *b);
  for (char c : a->substr(4))
    BOOST_TEST(bool(std::isalnum(static_cast<unsigned char>(c)) || c == '-'
                    || c == '_'));
  BOOST_TEST(plausible_api_key(*a));
  BOOST_TEST(!plausible_api_key("Bearer"));
  BOOST_TEST(!plausible_api_key(std::string(200, 'x')));
  // SHA-256 of "abc" (FIPS 180-2).
  BOOST_TEST(key_hash("abc")
             == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_TEST(key_prefix(*a) == a->substr(0, 8));
  for (const std::string good :
       {std::string{"a"}, std::string{"alice"}, std::string{"ci-bot_2"},
        std::string(40, 'z')})
    BOOST_TEST(valid_key_name(good), good);
  for (const std::string bad :
       {std::string{}, std::string{"Alice"}, std::string{"a b"},
        std::string{"a.b"}, std::string{"\xC3\xA9"}, std::string(41, 'z')})
    BOOST_TEST(!valid_key_name(bad), bad);
}

BOOST_AUTO_TEST_CASE(add_list_revoke_and_per_key_figures) {
  temp_dir dir{"candor-ledger-keys"};
  auto path = dir.file("ledger.db");
  auto writer = open_store(path, true);
  auto reader = open_store(path, false);
  test::check_key_calls(writer, reader);
}

BOOST_AUTO_TEST_CASE(a_version_3_ledger_is_migrated_keeping_its_rows) {
  temp_dir dir{"candor-ledger-keys"};
  auto path = dir.file("ledger.db");
  {
    auto raw = open_raw(path);
    BOOST_REQUIRE(!raw.exec(ledger_sql::schema_v1));
    BOOST_REQUIRE(!raw.exec(ledger_sql::migrate_v1_to_v2));
    BOOST_REQUIRE(!raw.exec(ledger_sql::migrate_v2_to_v3));
    BOOST_REQUIRE(!raw.exec(
      "INSERT INTO requests (request_id, ts_us, method, path, route, status, "
      "blocked_by, http_status, error, latency_us, question, llm_calls, "
      "tokens, cost_usd, warnings) VALUES ('old-1', 1, 'POST', '/ask', "
      "'docs', 'answered', '', 200, '', 5, 'q', 1, 7, 0, '[]')"));
  }
  auto writer = open_store(path, true);
  BOOST_TEST(count(writer) == 1);
  auto raw = open_raw(path);
  BOOST_TEST(*raw.query_int64("PRAGMA user_version")
             == data::ledger_schema_version);
  BOOST_TEST(*raw.query_text("SELECT key_name || '|' FROM requests") == "|");
  auto reader = open_store(path, false);
  test::check_key_calls(writer, reader);
}

BOOST_AUTO_TEST_SUITE_END()
