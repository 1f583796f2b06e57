// End-to-end: POST /ask with Accept: text/event-stream through the real
// `candor serve` (scripted provider), and clients that hang up while their
// question runs: a slow query (its executor process is killed) and a slow
// model call (its HTTP call to the model endpoint is aborted). The ledger
// records them as `cancelled` and the server keeps serving.

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "tests/support/children.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/openai_stub.hpp"
#include "tests/support/process.hpp"

using namespace candor;
using namespace candor::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

constexpr auto docs_q = "How long is the warranty on an e-bike battery?";
constexpr auto data_q = "What was our revenue by channel in 2024?";
constexpr auto categories_q = "How many products are in each category?";
constexpr auto heavy_q
  = "How many pairs of order lines have different quantities?";
constexpr auto no_fixture_q = "Is there a question nobody recorded a reply to?";

std::string ask_body(std::string_view q) {
  return json::serialize(json::object{{"question", q}});
}

/// A POST /ask that asks for the event stream.
std::string stream_request(std::string_view q, std::string_view id) {
  auto body = ask_body(q);
  return "POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Accept: text/event-stream\r\nX-Request-Id: "
         + std::string{id} + "\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string plain_request(std::string_view q, std::string_view id) {
  auto body = ask_body(q);
  return "POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "X-Request-Id: "
         + std::string{id} + "\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + body;
}

struct sse_event {
  std::string event;
  std::string data;
};

/// An event-stream response: the head (lower-case field names) and the
/// events in order.
struct sse_response {
  std::string status_line;
  std::map<std::string, std::string> headers;
  std::vector<sse_event> events;

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& e : events)
      out.push_back(e.event);
    return out;
  }

  const sse_event* find(std::string_view name) const {
    for (auto& e : events)
      if (e.event == name)
        return &e;
    return nullptr;
  }
};

sse_response parse_sse(const std::string& raw) {
  sse_response r;
  auto end = raw.find("\r\n\r\n");
  BOOST_REQUIRE_MESSAGE(end != std::string::npos, "no head in: " << raw);
  std::string_view head{raw.data(), end};
  auto line_end = head.find("\r\n");
  r.status_line = std::string{head.substr(0, line_end)};
  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 2);
    line_end = head.find("\r\n");
    auto line = head.substr(0, line_end);
    auto colon = line.find(':');
    std::string name{line.substr(0, colon)};
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = std::string{line.substr(colon + 2)};
  }
  std::string_view body{raw};
  body.remove_prefix(end + 4);
  while (!body.empty()) {
    auto stop = body.find("\n\n");
    BOOST_REQUIRE_MESSAGE(stop != std::string_view::npos,
                          "an unterminated event: " << body);
    auto frame = body.substr(0, stop);
    body.remove_prefix(stop + 2);
    sse_event ev;
    while (!frame.empty()) {
      auto nl = frame.find('\n');
      auto line = frame.substr(0, nl);
      frame = nl == std::string_view::npos ? std::string_view{}
                                           : frame.substr(nl + 1);
      if (line.substr(0, 7) == "event: ")
        ev.event = std::string{line.substr(7)};
      else if (line.substr(0, 6) == "data: ")
        ev.data += (ev.data.empty() ? "" : "\n") + std::string{line.substr(6)};
    }
    r.events.push_back(std::move(ev));
  }
  return r;
}

json::object parse_object(std::string_view text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << text);
  return v.as_object();
}

/// A response body without what differs between two requests of the same
/// question: the id, the latency and the steps' timings.
json::object comparable(json::object o) {
  o.erase("requestId");
  // Each question without one begins a conversation of its own.
  if (auto* c = o.if_contains("conversationId"); c && c->is_string())
    *c = "c_";
  if (auto* meta = o.if_contains("meta"); meta && meta->is_object()) {
    auto& m = meta->as_object();
    m.erase("latencyMs");
    if (auto* trace = m.if_contains("trace"); trace && trace->is_array())
      for (auto& step : trace->as_array())
        step.as_object().erase("micros");
  }
  return o;
}

struct started_server {
  server_process proc;
  explicit started_server(std::map<std::string, std::string> env = {})
      : proc(std::move(env)) {
    BOOST_REQUIRE_MESSAGE(proc.start(std::chrono::seconds{60}),
                          "server did not start:\n"
                            << proc.log());
  }

  /// The plain POST /ask of `q`: its status and body.
  std::pair<int, std::string> ask_plain(std::string_view q,
                                        std::string_view id) {
    http_client c{proc.port(), 30000ms};
    BOOST_REQUIRE(c.connected());
    BOOST_REQUIRE(c.send_raw(plain_request(q, id)));
    auto r = c.read_response();
    BOOST_REQUIRE_MESSAGE(r, "no answer to " << id << "; the server's log:\n"
                               << proc.log());
    return {r->status, r->body};
  }

  /// The streamed POST /ask of `q`, read to the end of the connection.
  sse_response ask_streamed(std::string_view q, std::string_view id) {
    http_client c{proc.port(), 30000ms};
    BOOST_REQUIRE(c.connected());
    BOOST_REQUIRE(c.send_raw(stream_request(q, id)));
    return parse_sse(c.read_until_closed());
  }

  json::object get(const std::string& target) {
    http_client c{proc.port()};
    BOOST_REQUIRE(c.connected());
    auto r = c.request("GET", target);
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_MESSAGE(r->status == 200, r->status << " " << r->body);
    return parse_object(r->body);
  }

  std::string metrics() {
    http_client c{proc.port()};
    auto r = c.request("GET", "/metrics");
    BOOST_REQUIRE(r);
    return r->body;
  }

  /// /runs/{id} once the ledger has its request row and `array` (the
  /// rows written after it, e.g. "sqlAudit") is not empty ({} if never).
  json::object run_request(const std::string& id, const char* array,
                           std::chrono::milliseconds within = 10s) {
    json::object out;
    eventually(
      [&] {
        http_client c{proc.port()};
        auto r = c.request("GET", "/runs/" + id);
        if (!r || r->status != 200)
          return false;
        out = parse_object(r->body);
        return !out.at(array).as_array().empty();
      },
      within);
    return out;
  }
};

void check_stream_head(const sse_response& r, std::string_view id) {
  BOOST_TEST(r.status_line == "HTTP/1.1 200 OK");
  BOOST_TEST(r.headers.at("content-type").find("text/event-stream") == 0u);
  BOOST_TEST(r.headers.at("cache-control") == "no-cache");
  BOOST_TEST(r.headers.at("connection") == "close");
  BOOST_TEST(r.headers.count("content-length") == 0u);
  BOOST_TEST(r.headers.at("x-request-id") == id);
}

/// How many executor children `pid` has, with none left a zombie.
bool pool_settled(pid_t pid, size_t size) {
  auto kids = executors_of(pid);
  if (kids.size() != size)
    return false;
  for (auto& [child, state] : kids)
    if (state == 'Z')
      return false;
  return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_stream)

BOOST_AUTO_TEST_CASE(streamed_ask_sends_the_steps_then_the_same_body) {
  started_server s;
  struct scenario {
    const char* question;
    std::vector<std::string> events;
  };
  std::vector<scenario> scenarios{
    {docs_q, {"route", "retrieval", "answer", "result"}},
    {data_q, {"route", "sql", "rows", "answer", "result"}},
  };
  int n = 0;
  for (auto& sc : scenarios) {
    BOOST_TEST_CONTEXT(sc.question) {
      auto id = "stream-plain-" + std::to_string(n);
      auto sid = "stream-events-" + std::to_string(n++);
      auto [status, body] = s.ask_plain(sc.question, id);
      BOOST_REQUIRE_EQUAL(status, 200);
      auto r = s.ask_streamed(sc.question, sid);
      check_stream_head(r, sid);
      BOOST_TEST(r.names() == sc.events, boost::test_tools::per_element());
      auto result = parse_object(r.events.back().data);
      BOOST_TEST(result.at("requestId").as_string() == sid);
      BOOST_TEST(json::serialize(comparable(result))
                 == json::serialize(comparable(parse_object(body))));
      auto route = parse_object(r.find("route")->data);
      BOOST_TEST(route.at("route") == result.at("route"));
      BOOST_TEST(route.at("routeReason") == result.at("routeReason"));
      auto answer = parse_object(r.find("answer")->data);
      BOOST_TEST(answer.at("status") == result.at("status"));
      if (auto* retrieval = r.find("retrieval")) {
        auto chunks = parse_object(retrieval->data).at("chunks").as_array();
        BOOST_REQUIRE(!chunks.empty());
        // The cited passage is among those retrieved, with its score.
        auto& cited = result.at("citations").as_array().at(0).as_object();
        bool found = false;
        for (auto& c : chunks)
          found = found
                  || (c.at("chunkId") == cited.at("chunkId")
                      && c.at("score") == cited.at("score"));
        BOOST_TEST(found);
      }
      if (auto* sql = r.find("sql")) {
        auto o = parse_object(sql->data);
        auto& block = result.at("sql").as_object();
        BOOST_TEST(o.at("verdict").as_string() == "allowed");
        BOOST_TEST(o.at("query") == block.at("query"));
        auto rows = parse_object(r.find("rows")->data);
        BOOST_TEST(rows.at("rowCount") == block.at("rowCount"));
        BOOST_TEST(rows.at("columns") == block.at("columns"));
      }
    }
  }
  // An error is the error body, as an `error` event once the stream began.
  auto [status, body] = s.ask_plain(no_fixture_q, "stream-plain-err");
  BOOST_REQUIRE_EQUAL(status, 422);
  auto r = s.ask_streamed(no_fixture_q, "stream-events-err");
  check_stream_head(r, "stream-events-err");
  BOOST_REQUIRE(!r.events.empty());
  BOOST_TEST(r.events.back().event == "error");
  auto err = parse_object(r.events.back().data);
  auto plain = parse_object(body);
  BOOST_TEST(err.at("error") == plain.at("error"));
  BOOST_TEST(err.at("message") == plain.at("message"));
  BOOST_TEST(err.at("requestId").as_string() == "stream-events-err");
  // Without the Accept field nothing changed (a Content-Length body), and
  // a refusal before the question runs is a plain error with its status.
  http_client c{s.proc.port()};
  auto bad = c.request(
    "POST", "/ask", R"({"question":"x"})",
    {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}});
  BOOST_REQUIRE(bad);
  BOOST_TEST(bad->status == 400);
  BOOST_TEST(bad->header("content-type") == "application/json");
}

BOOST_AUTO_TEST_CASE(a_client_that_hangs_up_mid_query_cancels_it) {
  // A query that would run for 20 s.
  started_server s{{{"CANDOR_SQL_DEADLINE_MS", "20000"}}};
  auto pool = executors_of(s.proc.pid());
  BOOST_REQUIRE(eventually([&] { return pool_settled(s.proc.pid(), 2); }));
  pool = executors_of(s.proc.pid());
  auto before = s.get("/stats?since=1h");
  auto cancelled_before = before.at("totals")
                            .as_object()
                            .at("byStatus")
                            .as_object()
                            .at("cancelled")
                            .as_int64();
  // Streamed and plain: both hang up while the statement runs.
  for (bool streamed : {true, false}) {
    BOOST_TEST_CONTEXT((streamed ? "streamed" : "plain")) {
      std::string id = streamed ? "hangup-stream-1" : "hangup-plain-1";
      auto t0 = std::chrono::steady_clock::now();
      {
        http_client c{s.proc.port(), 10000ms};
        BOOST_REQUIRE(c.connected());
        BOOST_REQUIRE(c.send_raw(streamed ? stream_request(heavy_q, id)
                                          : plain_request(heavy_q, id)));
        if (streamed)
          BOOST_REQUIRE(c.read_until("event: sql")); // validated: it runs
        // The statement reaches an executor.
        BOOST_REQUIRE(eventually(
          [&] {
            auto h = s.get("/health");
            return h.at("sandbox").as_object().at("busy").as_int64() == 1;
          },
          10s));
      } // hangs up
      auto run = s.run_request(id, "sqlAudit");
      BOOST_REQUIRE(!run.empty());
      auto& req = run.at("request").as_object();
      BOOST_TEST(req.at("status").as_string() == "cancelled");
      BOOST_TEST(req.at("httpStatus").as_int64() == 499);
      BOOST_TEST(req.at("error").as_string() == "cancelled");
      auto& trace = run.at("trace").as_array();
      BOOST_REQUIRE(!trace.empty());
      BOOST_TEST(trace.back().at("node").as_string() == "sql_execute");
      BOOST_TEST(trace.back().at("outcome").as_string() == "cancelled");
      // The executor that ran it was killed and replaced: one process of
      // the pool is gone, the pool is whole again, no zombie is left.
      BOOST_TEST(eventually(
        [&] {
          size_t gone = 0;
          for (auto& [pid, state] : pool)
            gone += not_running(pid) ? 1 : 0;
          return gone == 1 && pool_settled(s.proc.pid(), 2);
        },
        10s));
      BOOST_TEST((std::chrono::steady_clock::now() - t0 < 15s));
      auto audit = run.at("sqlAudit").as_array();
      BOOST_REQUIRE_EQUAL(audit.size(), 1u);
      BOOST_TEST(audit[0].at("verdict").as_string() == "error");
      BOOST_TEST(audit[0].at("reason").as_string().find("cancelled") == 0u);
      pool = executors_of(s.proc.pid());
    }
  }
  // Counted, and the server keeps serving.
  auto after = s.get("/stats?since=1h");
  BOOST_TEST(after.at("totals")
               .as_object()
               .at("byStatus")
               .as_object()
               .at("cancelled")
               .as_int64()
             == cancelled_before + 2);
  BOOST_TEST(s.metrics().find("status=\"cancelled\"") != std::string::npos);
  auto [status, body] = s.ask_plain(categories_q, "after-hangup-1");
  BOOST_TEST(status == 200);
  BOOST_TEST(parse_object(body).at("status").as_string() == "answered");
}

BOOST_AUTO_TEST_CASE(a_hang_up_during_a_slow_model_call_aborts_it) {
  constexpr auto oos = "What is the weather in Lisbon tomorrow?";
  openai_stub stub([](const stub_request& req) {
    stub_reply r;
    r.content
      = R"({"route":"out_of_scope","reason":"The question is about weather."})";
    if (req.user.find("Lisbon") != std::string::npos)
      r.delay = 8s; // a model that takes its time
    return r;
  });
  started_server s{{{"CANDOR_LLM_BASE_URL", stub.base_url()},
                    {"CANDOR_LLM_API_KEY", "sk-stream-test-0001"},
                    {"CANDOR_LLM_MODEL", "gpt-4o-mini"},
                    {"CANDOR_LLM_ATTEMPT_TIMEOUT_MS", "20000"}}};
  auto t0 = std::chrono::steady_clock::now();
  {
    http_client c{s.proc.port(), 10000ms};
    BOOST_REQUIRE(c.connected());
    BOOST_REQUIRE(c.send_raw(plain_request(oos, "hangup-model-1")));
    BOOST_REQUIRE(eventually([&] { return stub.requests() >= 1; }, 10s));
  } // hangs up while the model "thinks"
  // The model endpoint sees its caller go: the HTTP call was aborted.
  BOOST_TEST(eventually([&] { return stub.abandoned() == 1; }, 5s));
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 7s));
  auto run = s.run_request("hangup-model-1", "llmCalls");
  BOOST_REQUIRE(!run.empty());
  BOOST_TEST(run.at("request").at("status").as_string() == "cancelled");
  auto& calls = run.at("llmCalls").as_array();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].at("outcome").as_string() == "cancelled");
  BOOST_TEST(calls[0].at("latencyUs").as_int64() < 7'000'000);
  // The server keeps serving (a question the stub answers at once).
  auto [status, body]
    = s.ask_plain("What is the weather in Porto today?", "after-model-1");
  BOOST_TEST(status == 200);
  BOOST_TEST(parse_object(body).at("route").as_string() == "out_of_scope");
}

BOOST_AUTO_TEST_SUITE_END()
