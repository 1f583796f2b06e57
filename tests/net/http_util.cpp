// Tests of the HTTP layer's pure helpers: request ids, media types,
// percent-decoding, targets, routes, framing and status mapping.

#include "net/http_util.hpp"

#include <sstream>
#include <vector>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/test/unit_test.hpp>

#include "domain/error.hpp"

using namespace candor;
using namespace candor::net;

BOOST_AUTO_TEST_SUITE(net_http_util)

BOOST_AUTO_TEST_CASE(request_id_pattern) {
  BOOST_TEST(valid_request_id("abcdefgh"));
  BOOST_TEST(valid_request_id("A1._-b2C3"));
  BOOST_TEST(valid_request_id(std::string(64, 'x')));
  BOOST_TEST(!valid_request_id("abcdefg"));
  BOOST_TEST(!valid_request_id(std::string(65, 'x')));
  BOOST_TEST(!valid_request_id("abcd efgh"));
  BOOST_TEST(!valid_request_id("abcdefgh/"));
  BOOST_TEST(!valid_request_id("abcdéfgh"));
  BOOST_TEST(!valid_request_id(""));
}

BOOST_AUTO_TEST_CASE(json_media_type) {
  BOOST_TEST(is_json_media_type("application/json"));
  BOOST_TEST(is_json_media_type("Application/JSON"));
  BOOST_TEST(is_json_media_type("application/json; charset=utf-8"));
  BOOST_TEST(is_json_media_type(" application/json ;charset=UTF-8"));
  BOOST_TEST(!is_json_media_type(""));
  BOOST_TEST(!is_json_media_type("text/plain"));
  BOOST_TEST(!is_json_media_type("application/jsonx"));
  BOOST_TEST(!is_json_media_type("application/x-www-form-urlencoded"));
}

BOOST_AUTO_TEST_CASE(percent_decoding) {
  std::string out;
  BOOST_TEST(percent_decode("a%20b+c", out, true));
  BOOST_TEST(out == "a b c");
  BOOST_TEST(percent_decode("a%20b+c", out, false));
  BOOST_TEST(out == "a b+c");
  BOOST_TEST(percent_decode("%e2%82%AC", out, false));
  BOOST_TEST(out == "\xe2\x82\xac");
  BOOST_TEST(!percent_decode("%", out, false));
  BOOST_TEST(!percent_decode("%4", out, false));
  BOOST_TEST(!percent_decode("%zz", out, false));
  BOOST_TEST(!percent_decode("a%00b", out, false));
}

BOOST_AUTO_TEST_CASE(targets) {
  auto t = parse_target("/stats?since=1h&x=a%2Bb&flag&&y=");
  BOOST_REQUIRE(t.ok());
  BOOST_TEST(t->path == "/stats");
  BOOST_REQUIRE(t->query.size() == 4u);
  BOOST_TEST(t->query[0].first == "since");
  BOOST_TEST(t->query[0].second == "1h");
  BOOST_TEST(t->query[1].second == "a+b");
  BOOST_TEST(t->query[2].first == "flag");
  BOOST_TEST(t->query[2].second == "");
  BOOST_TEST(t->query[3].first == "y");
  auto plain = parse_target("/health");
  BOOST_REQUIRE(plain.ok());
  BOOST_TEST(plain->query.empty());
  auto encoded = parse_target("/runs/abc%2Ddefgh");
  BOOST_REQUIRE(encoded.ok());
  BOOST_TEST(encoded->path == "/runs/abc-defgh");
  BOOST_TEST(!parse_target("").ok());
  // The absolute form (RFC 9112 §3.2.2): the authority is dropped.
  auto absolute = parse_target("HTTP://x:8080/stats?since=1h");
  BOOST_REQUIRE(absolute.ok());
  BOOST_TEST(absolute->path == "/stats");
  BOOST_REQUIRE(absolute->query.size() == 1u);
  BOOST_TEST(absolute->query[0].second == "1h");
  BOOST_REQUIRE(parse_target("https://x").ok());
  BOOST_TEST(parse_target("https://x")->path == "/");
  auto root_query = parse_target("http://x?since=7d");
  BOOST_REQUIRE(root_query.ok());
  BOOST_TEST(root_query->path == "/");
  BOOST_TEST(root_query->query.at(0).second == "7d");
  BOOST_TEST(!parse_target("ftp://x/ask").ok());
  BOOST_TEST(!parse_target("http:///health").ok());
  BOOST_TEST(!parse_target("x/ask").ok());
  BOOST_TEST(!parse_target("*").ok());
  BOOST_TEST(!parse_target("/a%zz").ok());
  BOOST_TEST(!parse_target("/stats?since=%").ok());
  BOOST_TEST((parse_target("/a%zz").err().code == domain::ec::invalid_request));
}

BOOST_AUTO_TEST_CASE(routes) {
  std::string id;
  BOOST_TEST((match_route("/ask", id) == route_id::ask));
  BOOST_TEST((match_route("/stats", id) == route_id::stats));
  BOOST_TEST((match_route("/metrics", id) == route_id::metrics));
  BOOST_TEST((match_route("/health", id) == route_id::health));
  BOOST_TEST((match_route("/demo/questions", id) == route_id::demo_questions));
  BOOST_TEST((match_route("/runs/abc", id) == route_id::runs));
  BOOST_TEST(id == "abc");
  BOOST_TEST((match_route("/runs/", id) == route_id::unknown));
  BOOST_TEST((match_route("/runs", id) == route_id::unknown));
  BOOST_TEST((match_route("/ask/", id) == route_id::unknown));
  BOOST_TEST((match_route("/", id) == route_id::page));
  BOOST_TEST((match_route("/static/app.js", id) == route_id::page));
  BOOST_TEST((match_route("/static/app.css", id) == route_id::page));
  BOOST_TEST((match_route("/static/nope.js", id) == route_id::unknown));
  BOOST_TEST((match_route("/static/", id) == route_id::unknown));
  BOOST_TEST((match_route("/index.html", id) == route_id::unknown));
  BOOST_TEST(allowed_methods(route_id::page) == "GET, HEAD");
  BOOST_TEST(allowed_methods(route_id::ask) == "POST");
  BOOST_TEST(allowed_methods(route_id::stats) == "GET, HEAD");
  BOOST_TEST(allowed_methods(route_id::runs) == "GET, HEAD");
  // The OpenAI-compatible routes.
  BOOST_TEST((match_route("/v1/models", id) == route_id::v1_models));
  BOOST_TEST((match_route("/v1/models/candor", id) == route_id::v1_model));
  BOOST_TEST(id == "candor");
  BOOST_TEST((match_route("/v1/models/", id) == route_id::unknown));
  BOOST_TEST((match_route("/v1/chat/completions", id) == route_id::v1_chat));
  BOOST_TEST((match_route("/v1/chat/completions/", id) == route_id::unknown));
  BOOST_TEST((match_route("/v1/completions", id) == route_id::unknown));
  BOOST_TEST(allowed_methods(route_id::v1_chat) == "POST");
  BOOST_TEST(method_allowed(route_id::v1_chat, "POST"));
  BOOST_TEST(!method_allowed(route_id::v1_chat, "GET"));
  BOOST_TEST(method_allowed(route_id::v1_models, "HEAD"));
  BOOST_TEST(!method_allowed(route_id::v1_models, "POST"));
}

BOOST_AUTO_TEST_CASE(methods) {
  BOOST_TEST(method_allowed(route_id::ask, "POST"));
  BOOST_TEST(!method_allowed(route_id::ask, "GET"));
  BOOST_TEST(!method_allowed(route_id::ask, "HEAD"));
  BOOST_TEST(method_allowed(route_id::health, "GET"));
  BOOST_TEST(method_allowed(route_id::health, "HEAD"));
  BOOST_TEST(!method_allowed(route_id::health, "POST"));
  BOOST_TEST(!method_allowed(route_id::unknown, "GET"));
}

BOOST_AUTO_TEST_CASE(framing) {
  using sv = std::string_view;
  auto check
    = [](unsigned version, std::initializer_list<sv> te, size_t hosts) {
        std::vector<sv> v(te);
        return check_framing(version, v, hosts);
      };
  BOOST_TEST(!check(11, {}, 1).has_value());
  BOOST_TEST(!check(11, {"chunked"}, 1).has_value());
  BOOST_TEST(!check(11, {" Chunked "}, 1).has_value());
  BOOST_TEST(!check(11, {"chunked,"}, 1).has_value());
  BOOST_TEST(!check(10, {}, 0).has_value());
  // Codings this server does not decode, chunked not last, several.
  for (auto te :
       {sv{"gzip"}, sv{"chunked, gzip"}, sv{"gzip, chunked"}, sv{"identity"},
        sv{"chunked, chunked"}, sv{"chunkedx"}, sv{""}, sv{","}}) {
    BOOST_TEST_CONTEXT(te) {
      auto e = check(11, {te}, 1);
      BOOST_REQUIRE(e.has_value());
      BOOST_TEST((e->code == domain::ec::invalid_request));
    }
  }
  BOOST_TEST(check(11, {"gzip", "chunked"}, 1).has_value());
  BOOST_TEST(check(11, {"chunked", "chunked"}, 1).has_value());
  BOOST_TEST(check(10, {"chunked"}, 0).has_value());
  // Host: exactly one in HTTP/1.1, at most one in HTTP/1.0.
  BOOST_TEST(check(11, {}, 0).has_value());
  BOOST_TEST(check(11, {}, 2).has_value());
  BOOST_TEST(check(10, {}, 2).has_value());
}

BOOST_AUTO_TEST_CASE(keep_alive_reads_every_connection_field) {
  using sv = std::string_view;
  auto keep = [](unsigned version, std::initializer_list<sv> fields) {
    std::vector<sv> v(fields);
    return wants_keep_alive(version, v);
  };
  BOOST_TEST(keep(11, {}));
  BOOST_TEST(!keep(11, {"close"}));
  BOOST_TEST(!keep(11, {"keep-alive", "Close"}));
  BOOST_TEST(!keep(11, {"upgrade, close"}));
  BOOST_TEST(!keep(10, {}));
  BOOST_TEST(keep(10, {"Keep-Alive"}));
  BOOST_TEST(!keep(10, {"keep-alive, close"}));
  BOOST_TEST(!keep(10, {"close, keep-alive"}));
  BOOST_TEST(!keep(10, {"keep-alive", "close"}));
  BOOST_TEST(!keep(10, {"keep-alived"}));
}

BOOST_AUTO_TEST_CASE(stats_windows) {
  for (auto w : {"15m", "1h", "24h", "7d"})
    BOOST_TEST(valid_stats_window(w));
  for (auto w : {"", "2h", "24H", "1d", "15m "})
    BOOST_TEST(!valid_stats_window(w));
}

BOOST_AUTO_TEST_CASE(status_mapping) {
  using domain::ec;
  BOOST_TEST(domain::http_status(ec::invalid_request) == 400);
  BOOST_TEST(domain::http_status(ec::not_found) == 404);
  BOOST_TEST(domain::http_status(ec::method_not_allowed) == 405);
  BOOST_TEST(domain::http_status(ec::payload_too_large) == 413);
  BOOST_TEST(domain::http_status(ec::uri_too_long) == 414);
  BOOST_TEST(domain::http_status(ec::header_too_large) == 431);
  BOOST_TEST(domain::http_status(ec::unauthorized) == 401);
  BOOST_TEST(domain::http_status(ec::unsupported_media_type) == 415);
  BOOST_TEST(domain::http_status(ec::fixture_missing) == 422);
  BOOST_TEST(domain::http_status(ec::llm_unavailable) == 503);
  BOOST_TEST(domain::http_status(ec::overloaded) == 503);
  BOOST_TEST(domain::http_status(ec::shutting_down) == 503);
  BOOST_TEST(domain::http_status(ec::timeout) == 504);
  BOOST_TEST(domain::http_status(ec::internal) == 500);
  BOOST_TEST(domain::http_status(ec::storage_failed) == 500);
  BOOST_TEST(domain::http_status(ec::llm_budget_exceeded) == 500);
  BOOST_TEST(domain::http_status(ec::none) == 500);
}

BOOST_AUTO_TEST_CASE(response_head_is_what_beast_writes) {
  // The session writes the head itself (append_response_head) and sends
  // the body after it; the bytes must be Beast's serialization of the same
  // message, for every status the API answers with and its header sets.
  namespace http = boost::beast::http;
  struct sample {
    http::status status;
    std::vector<std::pair<std::string, std::string>> extra;
    std::string body;
    bool keep_alive;
  };
  const std::vector<sample> samples = {
    {http::status::ok, {}, R"({"answer":"x"})", true},
    {http::status::bad_request, {}, R"({"error":"invalid_request"})", true},
    {http::status::unauthorized,
     {{"WWW-Authenticate", "Bearer realm=\"candor\""}},
     "{}",
     true},
    {http::status::not_found, {}, "{}", false},
    {http::status::method_not_allowed, {{"Allow", "POST"}}, "{}", true},
    {http::status::payload_too_large, {}, "{}", false},
    {http::status::unsupported_media_type, {}, "{}", true},
    {http::status::unprocessable_entity, {}, "{}", true},
    {http::status::internal_server_error, {}, "", true},
    {http::status::service_unavailable, {{"Retry-After", "1"}}, "{}", false},
    {http::status::gateway_timeout, {}, "{}", true},
  };
  for (const auto& x : samples) {
    http::response<http::string_body> res;
    res.version(11);
    res.result(x.status);
    for (const auto& [name, value] : x.extra)
      res.set(name, value);
    res.set(http::field::content_type, "application/json");
    res.set("X-Request-Id", "req-12345678");
    res.set("X-Content-Type-Options", "nosniff");
    res.set(http::field::cache_control, "no-store");
    res.keep_alive(x.keep_alive);
    res.body() = x.body;
    res.prepare_payload();
    std::ostringstream beast_text;
    beast_text << res;
    std::vector<header_field> fields;
    for (const auto& f : res)
      fields.emplace_back(f.name_string(), f.value());
    std::string ours = "(kept)";
    append_response_head(ours, res.result_int(), res.reason(), fields);
    BOOST_TEST(ours
                 == "(kept)"
                      + beast_text.str().substr(0, beast_text.str().size()
                                                     - x.body.size()),
               static_cast<unsigned>(x.status));
    BOOST_TEST(beast_text.str().substr(beast_text.str().size() - x.body.size())
               == x.body);
  }
}

BOOST_AUTO_TEST_CASE(accept_event_stream) {
  BOOST_TEST(accepts_event_stream("text/event-stream"));
  BOOST_TEST(accepts_event_stream("Text/Event-Stream"));
  BOOST_TEST(accepts_event_stream("application/json, text/event-stream"));
  BOOST_TEST(accepts_event_stream(" text/event-stream ;q=0.5"));
  BOOST_TEST(accepts_event_stream("text/event-stream;charset=utf-8"));
  BOOST_TEST(!accepts_event_stream(""));
  BOOST_TEST(!accepts_event_stream("application/json"));
  BOOST_TEST(!accepts_event_stream("*/*"));
  BOOST_TEST(!accepts_event_stream("text/event-streamx"));
  BOOST_TEST(!accepts_event_stream("text/event-stream;q=0"));
  BOOST_TEST(!accepts_event_stream("text/event-stream; q=0.000"));
  BOOST_TEST(accepts_event_stream("text/event-stream;q=0, text/event-stream"));
}

BOOST_AUTO_TEST_SUITE_END()
