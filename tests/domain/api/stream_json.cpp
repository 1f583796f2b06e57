// Tests of the event-stream framing and the progress events of a streamed
// POST /ask (domain/api/stream_json.hpp).

#include "domain/api/stream_json.hpp"

#include <string>

#include <boost/json/parse.hpp>
#include <boost/test/unit_test.hpp>

using namespace candor;
using domain::node;
namespace json = boost::json;

namespace {

json::object data_of(const domain::progress_event& ev) {
  return json::parse(ev.data).as_object();
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_stream_json)

BOOST_AUTO_TEST_CASE(frames) {
  std::string out;
  domain::append_sse(out, "result", R"({"a":1})");
  BOOST_TEST(out == "event: result\ndata: {\"a\":1}\n\n");
  out.clear();
  domain::append_sse(out, {}, "[DONE]");
  BOOST_TEST(out == "data: [DONE]\n\n");
  out.clear();
  domain::append_sse(out, "x", "one\ntwo");
  BOOST_TEST(out == "event: x\ndata: one\ndata: two\n\n");
}

BOOST_AUTO_TEST_CASE(events_of_a_data_question) {
  domain::ask_state st;
  bool told = false;
  BOOST_TEST(domain::progress_after(node::guard_input, st, told).empty());
  st.route = domain::route_kind::data;
  st.route_reason = "sales";
  auto ev = domain::progress_after(node::router, st, told);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  BOOST_TEST(ev[0].event == "route");
  BOOST_TEST(data_of(ev[0]).at("route").as_string() == "data");
  BOOST_TEST(told);
  st.has_sql = true;
  st.sql.query = "SELECT 1";
  st.pending_error = "no such column: x";
  ev = domain::progress_after(node::sql_validate, st, told);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u); // the route is told once
  BOOST_TEST(data_of(ev[0]).at("verdict").as_string() == "correctable");
  st.pending_error.clear();
  ev = domain::progress_after(node::sql_validate, st, told);
  BOOST_TEST(data_of(ev[0]).at("verdict").as_string() == "allowed");
  st.sql.row_count = 4;
  st.sql.columns = {"channel", "revenue"};
  ev = domain::progress_after(node::sql_execute, st, told);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  BOOST_TEST(ev[0].event == "rows");
  BOOST_TEST(data_of(ev[0]).at("rowCount").as_int64() == 4);
  domain::block(st, domain::layer_kind::sql_policy, {"sql_policy:ddl"}, "no");
  ev = domain::progress_after(node::sql_validate, st, told);
  auto blocked = data_of(ev[0]);
  BOOST_TEST(blocked.at("verdict").as_string() == "blocked");
  BOOST_TEST(blocked.at("layer").as_string() == "sql_policy");
  BOOST_TEST(blocked.at("rules").as_array().at(0).as_string()
             == "sql_policy:ddl");
  ev = domain::progress_after(node::finalize, st, told);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  BOOST_TEST(ev[0].event == "answer");
  BOOST_TEST(data_of(ev[0]).at("status").as_string() == "blocked");
}

BOOST_AUTO_TEST_CASE(retrieval_lists_chunks_and_scores) {
  domain::ask_state st;
  st.route = domain::route_kind::docs;
  bool told = true;
  domain::passage p;
  p.chunk_id = "faq#battery-1";
  p.doc_title = "FAQ";
  p.score = 19.514812;
  st.passages.push_back(p);
  auto ev = domain::progress_after(node::retrieve, st, told);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  auto chunks = data_of(ev[0]).at("chunks").as_array();
  BOOST_REQUIRE_EQUAL(chunks.size(), 1u);
  BOOST_TEST(chunks[0].at("chunkId").as_string() == "faq#battery-1");
  BOOST_TEST(chunks[0].at("score").as_double() == 19.5148);
}

BOOST_AUTO_TEST_SUITE_END()
