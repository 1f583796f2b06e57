// Tests of the citation check: foreign and duplicate ids, refusals, and
// citation snippets.

#include "domain/citations.hpp"

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

using namespace candor::domain;

namespace {

passage make(std::string id, double score, bool sanitized = false,
             std::string text = "Some passage text.") {
  passage p;
  p.chunk_id = std::move(id);
  p.doc_title = "Doc " + p.chunk_id;
  p.heading = "Heading " + p.chunk_id;
  p.score = score;
  p.sanitized = sanitized;
  p.text = std::move(text);
  return p;
}

std::vector<passage> retrieved() {
  return {make("a#x-1", 0.9), make("b#y-1", 0.5, true), make("c#z-1", 0.2),
          make("d#w-1", 0.1)};
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_citations)

BOOST_AUTO_TEST_CASE(valid_citations_answer_in_cited_order) {
  auto r = check_citations(retrieved(), {"b#y-1", "a#x-1"}, false, true);
  BOOST_CHECK(r.verdict == citation_verdict::answered);
  BOOST_REQUIRE_EQUAL(r.citations.size(), 2u);
  BOOST_CHECK_EQUAL(r.citations[0].chunk_id, "b#y-1");
  BOOST_CHECK_EQUAL(r.citations[0].doc_title, "Doc b#y-1");
  BOOST_CHECK_EQUAL(r.citations[0].heading, "Heading b#y-1");
  BOOST_CHECK_EQUAL(r.citations[0].score, 0.5);
  BOOST_CHECK(r.citations[0].sanitized);
  BOOST_CHECK(!r.citations[1].sanitized);
  BOOST_CHECK(r.dropped.empty());
}

BOOST_AUTO_TEST_CASE(foreign_ids_are_dropped_and_the_rest_stands) {
  auto r = check_citations(retrieved(), {"a#x-1", "warranty#overview-1"}, false,
                           true);
  BOOST_CHECK(r.verdict == citation_verdict::answered);
  BOOST_REQUIRE_EQUAL(r.citations.size(), 1u);
  BOOST_CHECK_EQUAL(r.citations[0].chunk_id, "a#x-1");
  BOOST_REQUIRE_EQUAL(r.dropped.size(), 1u);
  BOOST_CHECK_EQUAL(r.dropped[0], "warranty#overview-1");
}

BOOST_AUTO_TEST_CASE(only_foreign_ids_mean_refused) {
  auto r = check_citations(retrieved(), {"nowhere#1", "A#X-1"}, false, true);
  BOOST_CHECK(r.verdict == citation_verdict::no_valid_citation);
  BOOST_CHECK(r.citations.empty());
  BOOST_CHECK_EQUAL(r.dropped.size(), 2u); // ids are case-sensitive
  r = check_citations(retrieved(), {}, false, true);
  BOOST_CHECK(r.verdict == citation_verdict::no_valid_citation);
}

BOOST_AUTO_TEST_CASE(refused_or_not_confident_wins_over_valid_citations) {
  auto r = check_citations(retrieved(), {"a#x-1"}, true, true);
  BOOST_CHECK(r.verdict == citation_verdict::model_refused);
  BOOST_CHECK(r.citations.empty());
  r = check_citations(retrieved(), {"a#x-1"}, false, false);
  BOOST_CHECK(r.verdict == citation_verdict::not_confident);
  BOOST_CHECK(r.citations.empty());
  // A foreign id is still reported when the answer is refused.
  r = check_citations(retrieved(), {"zz#1"}, false, false);
  BOOST_CHECK_EQUAL(r.dropped.size(), 1u);
}

BOOST_AUTO_TEST_CASE(duplicates_count_once_and_at_most_three_stand) {
  auto r = check_citations(
    retrieved(), {"a#x-1", "a#x-1", "b#y-1", "c#z-1", "d#w-1"}, false, true);
  BOOST_CHECK(r.verdict == citation_verdict::answered);
  BOOST_REQUIRE_EQUAL(r.citations.size(), 3u);
  BOOST_CHECK_EQUAL(r.citations[0].chunk_id, "a#x-1");
  BOOST_CHECK_EQUAL(r.citations[1].chunk_id, "b#y-1");
  BOOST_CHECK_EQUAL(r.citations[2].chunk_id, "c#z-1");
  BOOST_CHECK(r.dropped.empty());
}

BOOST_AUTO_TEST_CASE(dropped_ids_are_cut_for_the_log) {
  std::string long_id(500, 'x');
  auto r = check_citations(retrieved(), {long_id}, false, true);
  BOOST_REQUIRE_EQUAL(r.dropped.size(), 1u);
  BOOST_CHECK_EQUAL(r.dropped[0].size(), 80u);
}

BOOST_AUTO_TEST_CASE(snippets_are_short_whole_words_and_valid_utf8) {
  BOOST_CHECK_EQUAL(make_snippet("Short text."), "Short text.");
  BOOST_CHECK_EQUAL(make_snippet("One\n\nTwo  three\n- four"),
                    "One Two three - four");
  std::string words;
  for (int i = 0; i < 200; ++i)
    words += "word" + std::to_string(i) + " ";
  auto s = make_snippet(words, 300);
  BOOST_CHECK_LE(code_points(s), 301u);
  BOOST_CHECK(s.size() > 200);
  BOOST_CHECK(s.substr(s.size() - 3) == "\u2026");
  // Ends on a whole word: the text before the ellipsis is a prefix of the
  // input ending right before a space.
  auto body = s.substr(0, s.size() - 3);
  BOOST_CHECK_EQUAL(words.substr(0, body.size()), body);
  BOOST_CHECK_EQUAL(words[body.size()], ' ');
  // Multi-byte characters are never split.
  std::string euros;
  for (int i = 0; i < 400; ++i)
    euros += "\u20ac";
  auto e = make_snippet(euros, 300);
  BOOST_CHECK_EQUAL(code_points(e), 301u);
  BOOST_CHECK_EQUAL((e.size() - 3) % 3, 0u);
}

BOOST_AUTO_TEST_CASE(citation_snippets_come_from_the_passage) {
  std::string text(1000, 'a');
  auto ps = retrieved();
  ps[0].text = "Refunds take 14 days. " + text;
  auto r = check_citations(ps, {"a#x-1"}, false, true);
  BOOST_REQUIRE_EQUAL(r.citations.size(), 1u);
  BOOST_CHECK(r.citations[0].snippet.rfind("Refunds take 14 days.", 0) == 0);
  BOOST_CHECK_LE(code_points(r.citations[0].snippet), 301u);
}

BOOST_AUTO_TEST_SUITE_END()
