// Tests of the eval gate's metrics, thresholds and golden-set validation.

#include "eval/metrics.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "eval/gate.hpp"
#include "eval/golden.hpp"

using namespace candor;
using namespace candor::eval;
using domain::layer_kind;
using domain::route_kind;
using domain::status_kind;

namespace {

auto tol(double x) {
  return boost::test_tools::tolerance(x);
}

domain::cell num(double x) {
  domain::cell c;
  c.kind = domain::cell::real;
  c.r = x;
  return c;
}

domain::cell integer(int64_t x) {
  domain::cell c;
  c.kind = domain::cell::integer;
  c.i = x;
  return c;
}

domain::cell text(std::string s) {
  domain::cell c;
  c.kind = domain::cell::text;
  c.s = std::move(s);
  return c;
}

golden_item item(route_kind route, status_kind status,
                 std::vector<std::string> chunks = {}) {
  golden_item it;
  it.id = "t";
  it.expected_route = route;
  it.expected_status = status;
  if (status == status_kind::blocked)
    it.blocking_layer = layer_kind::input_rules;
  it.chunk_ids = std::move(chunks);
  return it;
}

observed seen(route_kind route, status_kind status,
              std::vector<std::string> retrieved = {},
              std::vector<std::string> cited = {}) {
  observed o;
  o.route = route;
  o.status = status;
  o.retrieved = std::move(retrieved);
  o.cited = std::move(cited);
  return o;
}

const metric& find(const std::vector<metric>& ms, const std::string& key) {
  for (auto& m : ms)
    if (m.key == key)
      return m;
  BOOST_FAIL("no metric " << key);
  return ms.front();
}

std::string golden_json(const std::string& item_fields) {
  return R"({"name":"t","items":[{"id":"g1","split":"test",)"
         R"("category":"docs_answerable","question":"How long?",)"
         + item_fields + "}]}";
}

} // namespace

BOOST_AUTO_TEST_SUITE(eval_metrics)

BOOST_AUTO_TEST_CASE(rows_compare_numbers_within_tolerance_and_order) {
  std::vector<result_row> want{{text("web"), num(10.004)},
                               {text("retail"), integer(3)}};
  std::vector<result_row> same{{text("web"), integer(10)},
                               {text("retail"), num(3.0)}};
  std::vector<result_row> swapped{same[1], same[0]};
  BOOST_CHECK(rows_equal(same, want, true));
  BOOST_CHECK(!rows_equal(swapped, want, true));
  BOOST_CHECK(rows_equal(swapped, want, false));
  std::vector<result_row> off{{text("web"), num(10.02)},
                              {text("retail"), integer(3)}};
  BOOST_CHECK(!rows_equal(off, want, false));
  // Text compares exactly, and a row more or less is a miss.
  std::vector<result_row> other{{text("Web"), num(10.0)},
                                {text("retail"), integer(3)}};
  BOOST_CHECK(!rows_equal(other, want, false));
  BOOST_CHECK(!rows_equal({same[0]}, want, false));
  // A multiset: two equal rows do not match one row twice.
  std::vector<result_row> twice{same[0], same[0]};
  BOOST_CHECK(!rows_equal(twice, want, false));
  // NULL equals NULL only.
  std::vector<result_row> null_row{{domain::cell{}}};
  BOOST_CHECK(rows_equal(null_row, null_row, true));
  BOOST_CHECK(!rows_equal(null_row, {{integer(0)}}, true));
}

BOOST_AUTO_TEST_CASE(percentile_is_nearest_rank) {
  BOOST_TEST(percentile({}, 50) == 0.0);
  BOOST_TEST(percentile({5, 1, 3, 2, 4}, 50) == 3.0);
  BOOST_TEST(percentile({5, 1, 3, 2, 4}, 95) == 5.0);
  BOOST_TEST(percentile({7}, 95) == 7.0);
}

BOOST_AUTO_TEST_CASE(route_retrieval_and_citation_metrics) {
  auto a = item(route_kind::docs, status_kind::answered, {"warranty#frames-1"});
  auto b = item(route_kind::docs, status_kind::answered, {"shipping#costs-1"});
  auto c = item(route_kind::out_of_scope, status_kind::refused);
  std::vector<const golden_item*> items{&a, &b, &c};
  std::vector<observed> out{
    // Expected section at rank 2 (another chunk of the same section
    // counts), cited once validly and once outside the expected section.
    seen(route_kind::docs, status_kind::answered,
         {"returns#window-1", "warranty#frames-2", "shipping#costs-1"},
         {"warranty#frames-2", "returns#window-1"}),
    // Expected section not in the top 3; refused.
    seen(route_kind::docs, status_kind::refused,
         {"a#b-1", "c#d-1", "e#f-1", "shipping#costs-1"}),
    seen(route_kind::docs, status_kind::answered)};
  auto ms = compute_metrics(items, out);
  BOOST_CHECK_EQUAL(find(ms, "routeAccuracy").hits, 2u);
  BOOST_TEST(find(ms, "routeAccuracy").value == 2.0 / 3, tol(1e-9));
  BOOST_TEST(find(ms, "recallAt3").value == 0.5, tol(1e-9));
  BOOST_TEST(find(ms, "mrr").value == 0.25, tol(1e-9));
  BOOST_CHECK_EQUAL(find(ms, "citationValidity").total, 2u);
  BOOST_CHECK_EQUAL(find(ms, "citationValidity").hits, 1u);
  // a answered (right), b refused (wrong), c answered (wrong).
  BOOST_CHECK_EQUAL(find(ms, "refusalAccuracy").hits, 1u);
  BOOST_CHECK_EQUAL(find(ms, "refusalAccuracy").total, 3u);
  BOOST_CHECK(find(ms, "recallAt3").kind == metric_kind::mechanism);
  BOOST_CHECK(find(ms, "routeAccuracy").kind == metric_kind::contract);
  metric_options live;
  live.live = true;
  BOOST_CHECK(find(compute_metrics(items, out, live), "recallAt3").kind
              == metric_kind::live);
}

BOOST_AUTO_TEST_CASE(block_rates_and_failed_items) {
  auto attack = item(route_kind::none, status_kind::blocked);
  auto benign = item(route_kind::docs, status_kind::answered);
  auto benign2 = item(route_kind::data, status_kind::no_results);
  std::vector<const golden_item*> items{&attack, &attack, &benign, &benign2};
  observed failed;
  failed.failed = true;
  failed.status = status_kind::blocked; // ignored: the item failed
  std::vector<observed> out{seen(route_kind::none, status_kind::blocked),
                            failed,
                            seen(route_kind::none, status_kind::blocked),
                            seen(route_kind::data, status_kind::no_results)};
  auto ms = compute_metrics(items, out);
  BOOST_TEST(find(ms, "injectionBlockRate").value == 0.5, tol(1e-9));
  BOOST_TEST(find(ms, "falseBlockRate").value == 0.5, tol(1e-9));
  BOOST_CHECK(!find(ms, "falseBlockRate").higher_is_better);
  BOOST_CHECK_EQUAL(find(ms, "routeAccuracy").hits, 2u);
}

BOOST_AUTO_TEST_CASE(sql_execution_accuracy_uses_reference_rows) {
  auto it = item(route_kind::data, status_kind::answered);
  it.reference_sql = "SELECT 1";
  auto ordered = it;
  ordered.order_matters = true;
  std::vector<result_row> want{{integer(1)}, {integer(2)}};
  observed right = seen(route_kind::data, status_kind::answered);
  right.has_sql = true;
  right.rows = {{integer(2)}, {integer(1)}};
  right.row_count = 2;
  right.reference_rows = want;
  auto no_ref = right;
  no_ref.reference_rows.reset();
  auto undercounted = right;
  undercounted.row_count = 3;
  std::vector<const golden_item*> items{&it, &ordered, &it, &it};
  auto ms = compute_metrics(items, {right, right, no_ref, undercounted});
  auto& m = find(ms, "sqlExecutionAccuracy");
  BOOST_CHECK_EQUAL(m.total, 4u);
  BOOST_CHECK_EQUAL(m.hits, 1u); // only the unordered comparison matches
}

BOOST_AUTO_TEST_CASE(thresholds_parse_and_gate) {
  auto t = parse_thresholds(
    R"({"scripted":{"recallAt3":{"min":0.8},"falseBlockRate":{"max":0.02}},
        "live":{}})",
    "scripted");
  BOOST_REQUIRE(t);
  BOOST_CHECK_EQUAL(t->size(), 2u);
  BOOST_CHECK(!parse_thresholds(R"({"scripted":{}})", "live"));
  BOOST_CHECK(
    !parse_thresholds(R"({"scripted":{"recall":{"min":1}}})", "scripted"));
  BOOST_CHECK(!parse_thresholds(R"({"scripted":{"mrr":{"min":0.5,"max":0.9}}})",
                                "scripted"));
  BOOST_CHECK(
    !parse_thresholds(R"({"scripted":{"mrr":{"min":2}}})", "scripted"));
  metric recall;
  recall.key = "recallAt3";
  recall.total = 10;
  recall.value = 0.79;
  metric fb;
  fb.key = "falseBlockRate";
  fb.total = 50;
  fb.value = 0.02;
  metric none;
  none.key = "mrr"; // not gated here
  none.total = 5;
  auto g = apply_thresholds({recall, fb, none}, *t);
  BOOST_CHECK(!g[0].pass);
  BOOST_CHECK(g[1].pass);
  BOOST_CHECK(g[2].pass && !g[2].bound);
  recall.total = 0; // nothing to measure: reported, not gated
  BOOST_CHECK(apply_thresholds({recall}, *t)[0].pass);
}

BOOST_AUTO_TEST_CASE(golden_items_are_validated) {
  auto ok = parse_golden_set(golden_json(
    R"("expectedRoute":"docs","expectedStatus":"answered",)"
    R"("blockingLayer":null,"chunkIds":["a#b-1"],"referenceSql":null,)"
    R"("orderMatters":false)"));
  BOOST_REQUIRE_MESSAGE(ok, (ok ? "" : ok.err().message));
  BOOST_CHECK(ok->items[0].expected_route == route_kind::docs);
  // A blocked item needs its layer, and only a blocked item has one.
  auto no_layer = parse_golden_set(
    golden_json(R"("expectedRoute":"none","expectedStatus":"blocked",)"
                R"("blockingLayer":null,"chunkIds":[],"referenceSql":null,)"
                R"("orderMatters":false)"));
  BOOST_CHECK(!no_layer);
  auto bad_layer = parse_golden_set(golden_json(
    R"("expectedRoute":"none","expectedStatus":"blocked",)"
    R"("blockingLayer":"firewall","chunkIds":[],"referenceSql":null,)"
    R"("orderMatters":false)"));
  BOOST_REQUIRE(!bad_layer);
  BOOST_CHECK(bad_layer.err().message.find("firewall") != std::string::npos);
  auto missing = parse_golden_set(
    golden_json(R"("expectedRoute":"docs","expectedStatus":"answered",)"
                R"("blockingLayer":null,"chunkIds":[],"referenceSql":null)"));
  BOOST_CHECK(!missing);
}

BOOST_AUTO_TEST_CASE(the_golden_set_covers_every_category_in_both_splits) {
  auto set = load_golden_set(default_golden_path());
  BOOST_REQUIRE_MESSAGE(set, (set ? "" : set.err().message));
  BOOST_CHECK_GE(set->items.size(), 150u);
  std::map<std::string, std::map<std::string, int>> per;
  for (auto& it : set->items)
    ++per[it.category][it.split];
  for (auto& cat : golden_categories()) {
    auto test = per[cat]["test"];
    auto cal = per[cat]["calibration"];
    BOOST_CHECK_MESSAGE(test > 0 && cal > 0 && std::abs(test - cal) <= 1,
                        cat << ": test " << test << ", calibration " << cal);
  }
  std::set<std::string> questions;
  for (auto& it : set->items)
    BOOST_CHECK_MESSAGE(questions.insert(it.question).second,
                        "duplicate question " << it.id);
}

BOOST_AUTO_TEST_SUITE_END()
