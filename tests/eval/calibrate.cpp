// Tests of `candor-eval calibrate`: threshold choice on plateaus, edge cases,
// the shipped threshold, and the command line.

#include "data/config_load.hpp"
#include "eval/calibrate.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/retrieval/evidence.hpp"
#include "data/retrieval/ingest.hpp"
#include "domain/build_info.hpp"
#include "domain/config.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace candor;
using namespace candor::eval;
namespace json = boost::json;

namespace {

auto tol(double x) {
  return boost::test_tools::tolerance(x);
}

const std::string conf_path
  = std::string{CANDOR_SOURCE_DIR} + "/conf/candor.json";

std::vector<scored_question> items(std::vector<double> answerable,
                                   std::vector<double> unanswerable) {
  std::vector<scored_question> out;
  for (auto e : answerable)
    out.push_back({e, true});
  for (auto e : unanswerable)
    out.push_back({e, false});
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// What `candor-eval calibrate` computes for a configuration and a set.
calibration calibrate_like_the_cli(const domain::config& cfg,
                                   const labelled_set& set) {
  data::search_mode mode;
  BOOST_REQUIRE(data::parse_search_mode(cfg.retrieval.mode, mode));
  auto opts = data::ingest_options_from(cfg);
  auto snap = build_snapshot(std::string{CANDOR_SOURCE_DIR} + "/data/kb",
                             opts.chunking.target_chars, opts.retrieval);
  BOOST_REQUIRE(snap.ok());
  return calibrate(score_split(**snap, set, split_kind::calibration, mode,
                               static_cast<size_t>(cfg.retrieval.top_k)));
}

} // namespace

BOOST_AUTO_TEST_SUITE(eval_calibrate)

BOOST_AUTO_TEST_CASE(a_separable_set_gets_the_middle_of_the_gap) {
  auto c = calibrate(items({0.5, 0.6, 0.7, 0.8}, {0.1, 0.2, 0.3}));
  BOOST_TEST(c.best_accuracy == 1.0);
  BOOST_TEST(c.plateau_low == 0.3);
  BOOST_TEST(c.plateau_high == 0.5);
  BOOST_TEST(c.threshold == 0.4, tol(1e-12));
  BOOST_TEST(c.answerable == 4u);
  BOOST_TEST(c.unanswerable == 3u);
  BOOST_TEST(c.median_answerable == 0.65, tol(1e-12));
  BOOST_TEST(c.median_unanswerable == 0.2, tol(1e-12));
  BOOST_TEST(c.separation == 0.45, tol(1e-12));
}

BOOST_AUTO_TEST_CASE(the_widest_of_two_best_plateaus_wins) {
  // Sorted: U .1, A .2, U .25, A .6, A .7. Accuracy 4/5 on (.1, .2] and
  // on (.25, .6]; the second is wider.
  auto xs = items({0.2, 0.6, 0.7}, {0.1, 0.25});
  auto c = calibrate(xs);
  BOOST_TEST(c.best_accuracy == 0.8, tol(1e-12));
  BOOST_TEST(c.plateau_low == 0.25);
  BOOST_TEST(c.plateau_high == 0.6);
  BOOST_TEST(c.threshold == 0.425, tol(1e-12));
  BOOST_TEST(refusal_accuracy(xs, c.threshold) == c.best_accuracy, tol(1e-12));
  // No threshold does better than the chosen one.
  for (double t = 0; t <= 1.0; t += 0.01)
    BOOST_TEST(refusal_accuracy(xs, t) <= c.best_accuracy + 1e-12);
}

BOOST_AUTO_TEST_CASE(equal_plateaus_go_to_the_lower_one) {
  // Accuracy 4/5 on (.25, .5] and on (.75, 1]: same width (exact in
  // binary), the lower one wins.
  auto c = calibrate(items({0.5, 1.0, 1.25}, {0.25, 0.75}));
  BOOST_TEST(c.best_accuracy == 0.8, tol(1e-12));
  BOOST_TEST(c.plateau_low == 0.25);
  BOOST_TEST(c.plateau_high == 0.5);
  BOOST_TEST(c.threshold == 0.375, tol(1e-12));
}

BOOST_AUTO_TEST_CASE(runs_of_adjacent_best_intervals_merge) {
  // A tie at .5 (one answerable, one unanswerable) does not change the
  // accuracy, so (.2, .5] and (.5, .9] are one plateau (.2, .9].
  auto c = calibrate(items({0.9, 0.5, 0.95}, {0.1, 0.2, 0.5}));
  BOOST_TEST(c.plateau_low == 0.2);
  BOOST_TEST(c.plateau_high == 0.9);
  BOOST_TEST(c.threshold == 0.55, tol(1e-12));
}

BOOST_AUTO_TEST_CASE(edge_cases) {
  // Only answerable: answer everything, from 0 up to the lowest score.
  auto all_yes = calibrate(items({0.4, 0.6}, {}));
  BOOST_TEST(all_yes.best_accuracy == 1.0);
  BOOST_TEST(all_yes.threshold == 0.2, tol(1e-12));
  // Only unanswerable: refuse everything.
  auto all_no = calibrate(items({}, {0.4, 0.6}));
  BOOST_TEST(all_no.best_accuracy == 1.0);
  BOOST_TEST(all_no.threshold > 0.6);
  BOOST_TEST(refusal_accuracy(items({}, {0.4, 0.6}), all_no.threshold) == 1.0);
  // The sweep spans the observed range.
  auto c = calibrate(items({0.5, 0.8}, {0.1}), 5);
  BOOST_REQUIRE_EQUAL(c.sweep.size(), 5u);
  BOOST_TEST(c.sweep.front().threshold == 0.0);
  BOOST_TEST(c.sweep.back().threshold == 0.8, tol(1e-12));
  BOOST_TEST(refusal_accuracy({}, 0.5) == 0.0);
}

BOOST_AUTO_TEST_CASE(the_shipped_threshold_is_what_calibrate_chooses) {
  auto cfg
    = data::load_config(domain::default_config_json(), conf_path, {}, {});
  BOOST_REQUIRE(cfg.ok());
  auto set = load_labelled_set(default_labelled_set_path());
  BOOST_REQUIRE(set.ok());
  auto c = calibrate_like_the_cli(*cfg, *set);
  BOOST_TEST(c.answerable > 40u);
  BOOST_TEST(c.unanswerable > 15u);
  BOOST_TEST(c.separation > 0.0);
  BOOST_TEST(cfg->retrieval.threshold == c.threshold,
             "conf/candor.json has retrieval.threshold "
               << cfg->retrieval.threshold << " but `candor-eval calibrate` "
               << "chooses " << c.threshold);
  // The test split plays no part: dropping it changes nothing.
  auto cal_only = *set;
  std::erase_if(cal_only.questions, [](const labelled_question& q) {
    return q.split == split_kind::test;
  });
  BOOST_TEST(calibrate_like_the_cli(*cfg, cal_only).threshold == c.threshold);
}

BOOST_AUTO_TEST_CASE(evidence_separates_off_topic_from_answerable) {
  auto snap
    = build_snapshot(std::string{CANDOR_SOURCE_DIR} + "/data/kb", 600, {});
  BOOST_REQUIRE(snap.ok());
  auto score = [&](const std::string& q, data::search_mode m) {
    return data::evidence_score(**snap, q, (*snap)->search(q, 3, m));
  };
  for (auto m : {data::search_mode::tfidf, data::search_mode::bm25,
                 data::search_mode::fusion}) {
    auto good = score("How long is the warranty on an e-bike battery?", m);
    auto bad = score("What is the capital of Australia?", m);
    BOOST_TEST(good > 0.0);
    BOOST_TEST(good <= 1.0);
    BOOST_TEST(bad < good);
  }
  BOOST_TEST(data::evidence_score(**snap, "anything", {}) == 0.0);
  // The score depends on the passages, not on the mode's raw scores.
  auto q = std::string{"How long is the warranty on an e-bike battery?"};
  auto hits = (*snap)->search(q, 3, data::search_mode::bm25);
  auto same = hits;
  for (auto& h : same)
    h.score = h.bm25 = h.tfidf = 0;
  BOOST_TEST(data::evidence_score(**snap, q, hits)
             == data::evidence_score(**snap, q, same));
}

BOOST_AUTO_TEST_CASE(write_threshold_edits_only_that_value) {
  test::temp_dir dir{"candor-calibrate"};
  auto path = dir.file("candor.json");
  std::filesystem::copy_file(conf_path, path);
  auto before = read(path);
  BOOST_REQUIRE(!write_threshold(path, 0.0321));
  auto after = read(path);
  auto a = json::parse(before).as_object();
  auto b = json::parse(after).as_object();
  BOOST_TEST(b.at("retrieval").at("threshold").to_number<double>() == 0.0321);
  a["retrieval"].as_object()["threshold"] = 0.0321;
  BOOST_TEST((a == b));
  // The layout is kept: same number of lines.
  BOOST_TEST(std::count(before.begin(), before.end(), '\n')
             == std::count(after.begin(), after.end(), '\n'));
  // And the result loads as a configuration.
  auto cfg = data::load_config(domain::default_config_json(), path, {}, {});
  BOOST_REQUIRE(cfg.ok());
  BOOST_TEST(cfg->retrieval.threshold == 0.0321);
  // Errors: a missing file, and a file without retrieval.threshold.
  BOOST_TEST(bool(write_threshold(dir.file("missing.json"), 0.5)));
  std::ofstream{dir.file("other.json")} << R"({"http": {"port": 1}})";
  auto err = write_threshold(dir.file("other.json"), 0.5);
  BOOST_TEST(bool(err));
  BOOST_TEST(read(dir.file("other.json")) == R"({"http": {"port": 1}})");
}

BOOST_AUTO_TEST_CASE(the_cli_calibrates_writes_and_ablates) {
  using candor::test::run_candor_eval;
  auto cfg
    = data::load_config(domain::default_config_json(), conf_path, {}, {});
  BOOST_REQUIRE(cfg.ok());
  auto r = run_candor_eval({"calibrate", "--help"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.find("--write") != std::string::npos);
  r = run_candor_eval({"calibrate", "--json"});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  auto v = json::parse(r.out).as_object();
  BOOST_TEST(v.at("threshold").to_number<double>() == cfg->retrieval.threshold);
  BOOST_TEST(v.at("mode").as_string() == cfg->retrieval.mode);
  // --write sets the value in the given file (a copy here).
  test::temp_dir dir{"candor-calibrate-cli"};
  auto copy = dir.file("candor.json");
  {
    auto text = read(conf_path);
    auto at = text.find("\"threshold\"");
    BOOST_REQUIRE(at != std::string::npos);
    auto colon = text.find(':', at);
    auto end = text.find_first_of(",\n}", colon);
    text = text.substr(0, colon + 1) + " 0.5" + text.substr(end);
    std::ofstream{copy} << text;
  }
  r = run_candor_eval({"calibrate", "--config", copy, "--write", copy});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_TEST(r.out.find("chosen threshold") != std::string::npos);
  BOOST_TEST(r.out.find("separation") != std::string::npos);
  auto written = data::load_config(domain::default_config_json(), copy, {}, {});
  BOOST_REQUIRE(written.ok());
  BOOST_TEST(written->retrieval.threshold == cfg->retrieval.threshold);
  // The ablation at one chunk size: three rows, one winner.
  r = run_candor_eval({"ablation", "--chunk-sizes", "600", "--json"});
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  auto a = json::parse(r.out).as_object();
  BOOST_TEST(a.at("split").as_string() == "test");
  auto& rows = a.at("rows").as_array();
  BOOST_TEST(rows.size() == 3u);
  size_t winners = 0;
  for (const auto& row : rows)
    winners += row.at("winner").as_bool() ? 1 : 0;
  BOOST_TEST(winners == 1u);
  r = run_candor_eval({"ablation", "--split", "train"});
  BOOST_TEST(r.exit_code == 2);
  r = run_candor_eval({"ablation", "--chunk-sizes", "50"});
  BOOST_TEST(r.exit_code == 2);
}

BOOST_AUTO_TEST_SUITE_END()
