// Tests of the ledger's conversation turns: several per statement,
// trimmed to the newest of a continued conversation, read in order since a
// time, and dropped past the retention.

#include "data/ledger/store.hpp"

#include <string>

#include <boost/test/unit_test.hpp>

#include "data/clock.hpp"
#include "tests/support/ledger_rows.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;

using namespace candor::test::ledger_rows;

BOOST_AUTO_TEST_SUITE(data_ledger_turns)

// Conversation turns: many per batch (written several rows a statement),
// trimmed to the newest max turns of a continued conversation, read oldest
// first since a time, and a request without an outcome writes none.
BOOST_AUTO_TEST_CASE(conversation_turns_are_kept_bounded_and_read_in_order) {
  temp_dir dir;
  auto store = open_store(dir.file("ledger.db"), true);
  store.bound_conversations(5, int64_t{3600} * 1000000);
  auto now = data::wall_us();
  auto turn_of = [&](const std::string& conversation, int i, bool continues) {
    auto r = request("turn-" + conversation + "-" + std::to_string(i),
                     now + i, "data", "answered", 200, 10);
    r.conversation_id = conversation;
    r.conversation_continues = continues;
    r.key_name = "team-a";
    r.said.request_id = r.request_id;
    r.said.at_us = now + i;
    r.said.question = "question " + std::to_string(i);
    r.said.status = "answered";
    r.said.answer = "answer " + std::to_string(i);
    return r;
  };
  const std::string a = "c_0123456789abcdef0123456789abcdef";
  const std::string b = "c_fedcba9876543210fedcba9876543210";
  ledger_batch batch;
  // 19 turns of `a` in one batch: three statements' worth of rows.
  for (int i = 0; i < 19; ++i)
    batch.requests.push_back(turn_of(a, i, i > 0));
  batch.requests.push_back(turn_of(b, 100, false));
  auto pending = turn_of(b, 101, true);
  pending.status.clear(); // no outcome: no turn
  batch.requests.push_back(pending);
  BOOST_REQUIRE(!store.write(batch));
  auto turns = store.conversation(a, 0);
  BOOST_REQUIRE(turns.ok());
  BOOST_REQUIRE_EQUAL(turns->size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    BOOST_TEST((*turns)[i].t.question == "question " + std::to_string(14 + i));
    BOOST_TEST((*turns)[i].t.answer == "answer " + std::to_string(14 + i));
    BOOST_TEST((*turns)[i].key_name == "team-a");
  }
  // Only the turns since a time.
  auto recent = store.conversation(a, now + 17);
  BOOST_REQUIRE(recent.ok());
  BOOST_TEST(recent->size() == 2u);
  auto other = store.conversation(b, 0);
  BOOST_REQUIRE(other.ok());
  BOOST_REQUIRE_EQUAL(other->size(), 1u);
  BOOST_TEST(other->front().t.question == "question 100");
  auto none = store.conversation("c_00000000000000000000000000000000", 0);
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(none->empty());
}

// Turns past the retention are dropped from the table by the writer (the
// first batch with turns purges; later ones at most once a minute).
BOOST_AUTO_TEST_CASE(turns_past_the_retention_are_dropped) {
  temp_dir dir;
  auto path = dir.file("ledger.db");
  auto now = data::wall_us();
  {
    auto store = open_store(path, true);
    store.bound_conversations(20, int64_t{3600} * 1000000); // an hour
    ledger_batch batch;
    for (int64_t age_s : {7200, 10}) {
      auto r = request("aged-" + std::to_string(age_s), now, "docs",
                       "answered", 200, 10);
      r.conversation_id = "c_0123456789abcdef0123456789abcdef";
      r.said.request_id = r.request_id;
      r.said.at_us = now - age_s * 1000000;
      r.said.status = "answered";
      batch.requests.push_back(std::move(r));
    }
    BOOST_REQUIRE(!store.write(batch));
  }
  auto raw = open_raw(path);
  auto kept = raw.query_text("SELECT group_concat(request_id) FROM "
                             "conversation_turns");
  BOOST_REQUIRE(kept.ok());
  BOOST_TEST(*kept == "aged-10");
}

BOOST_AUTO_TEST_SUITE_END()
