// Tests of the documents' own thesaurus (`<kb>/thesaurus.json`): parsed and
// checked, kept in the index by ingest, loaded with the snapshot, and used
// by every query analysis on it.

#include <filesystem>
#include <fstream>
#include <string>

#include <boost/test/unit_test.hpp>

#include "data/retrieval/index_store.hpp"
#include "data/retrieval/ingest.hpp"
#include "data/retrieval/query.hpp"
#include "domain/build_info.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::data;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream{path, std::ios::binary} << text;
}

bool expands_to(const analyzed_query& q, const std::string& term) {
  for (auto& e : q.expansions)
    for (auto& alt : e.alternatives)
      for (auto& t : alt)
        if (t == term)
          return true;
  return false;
}

constexpr auto harbour_doc = R"(# Shipping

## Island deliveries

Parcels to the Harbour Isles travel by ferry and arrive within nine days.

## Mainland deliveries

Parcels on the mainland arrive within two days.
)";

constexpr auto harbour_thesaurus
  = R"({"groups": [["tortuga", "harbour isles"], ["skerry", "harbour isles"]]})";

} // namespace

BOOST_AUTO_TEST_SUITE(data_thesaurus)

BOOST_AUTO_TEST_CASE(groups_are_checked_and_named) {
  auto ok = thesaurus_extension::parse(harbour_thesaurus);
  BOOST_REQUIRE(ok.ok());
  BOOST_CHECK_EQUAL((*ok)->groups().size(), 2u);
  for (auto* bad :
       {"not json", R"({"group": []})", R"({"groups": [["alone"]]})",
        R"({"groups": [["a", 3]]})"}) {
    auto r = thesaurus_extension::parse(bad);
    BOOST_REQUIRE_MESSAGE(!r.ok(), bad);
    BOOST_CHECK(r.err().code == domain::ec::config_invalid);
  }
  auto one = thesaurus_extension::parse(R"({"groups": [["x", "y"], ["z"]]})");
  BOOST_REQUIRE(!one.ok());
  BOOST_CHECK_MESSAGE(one.err().message.find("groups[1]") != std::string::npos,
                      one.err().message);
}

BOOST_AUTO_TEST_CASE(a_query_expands_with_the_documents_groups) {
  auto t = thesaurus_extension::parse(harbour_thesaurus);
  BOOST_REQUIRE(t.ok());
  auto without = analyze_query("How long does delivery to Tortuga take?");
  BOOST_CHECK(!expands_to(without, "isl"));
  auto with
    = analyze_query("How long does delivery to Tortuga take?", {}, t->get());
  BOOST_CHECK(expands_to(with, "isl") || expands_to(with, "isles"));
  // The built-in groups still apply with it.
  auto builtin = analyze_query("Can I get my money back?", {}, t->get());
  BOOST_CHECK(!builtin.expansions.empty());
}

BOOST_AUTO_TEST_CASE(ingest_keeps_it_with_the_index) {
  test::temp_dir dir{"candor-thesaurus"};
  auto kb = dir.file("kb");
  std::filesystem::create_directories(kb);
  write(kb + "/shipping.md", harbour_doc);
  write(kb + "/thesaurus.json", harbour_thesaurus);
  auto index = dir.file("index.db");
  auto rep = ingest(kb, index);
  BOOST_REQUIRE_MESSAGE(rep.ok(), (rep.ok() ? "" : rep.err().message));
  BOOST_CHECK_EQUAL(rep->documents_total, 1u); // not a document itself
  auto snap = load_snapshot(index, {});
  BOOST_REQUIRE(snap.ok());
  BOOST_REQUIRE((*snap)->thesaurus() != nullptr);
  auto hits = (*snap)->search("delivery to Tortuga", 1, search_mode::bm25);
  BOOST_REQUIRE_EQUAL(hits.size(), 1u);
  BOOST_CHECK(hits[0].chunk_id.find("island") != std::string::npos);
  // Gone from the folder, gone from the index at the next ingest.
  std::filesystem::remove(kb + "/thesaurus.json");
  BOOST_REQUIRE(ingest(kb, index).ok());
  snap = load_snapshot(index, {});
  BOOST_REQUIRE(snap.ok());
  BOOST_CHECK((*snap)->thesaurus() == nullptr);
  BOOST_CHECK((*snap)->search("Tortuga", 1, search_mode::bm25).empty());
  // A broken one stops the ingest, naming the file; the index stays.
  write(kb + "/thesaurus.json", R"({"groups": [["only one"]]})");
  auto broken = ingest(kb, index);
  BOOST_REQUIRE(!broken.ok());
  BOOST_CHECK(broken.err().message.find("thesaurus.json") != std::string::npos);
  BOOST_CHECK(load_snapshot(index, {}).ok());
}

BOOST_AUTO_TEST_CASE(the_sample_documents_bring_their_gazetteer) {
  auto t = read_kb_thesaurus(std::string{CANDOR_SOURCE_DIR} + "/data/kb");
  BOOST_REQUIRE(t.ok());
  BOOST_REQUIRE(*t != nullptr);
  auto q = analyze_query("shipping to Germany", {}, t->get());
  BOOST_CHECK(expands_to(q, "zone"));
  BOOST_CHECK(!expands_to(analyze_query("shipping to Germany"), "zone"));
}

BOOST_AUTO_TEST_SUITE_END()
