// The page (DESIGN §8) as net::server serves it: GET / and its assets,
// their media types, the Content-Security-Policy, HEAD, 404 for an unknown
// asset; and what the shipped files may not contain (no markup parsing in
// the script, no inline script or style in the HTML).

#include "net/http_util.hpp"

#include <regex>
#include <string>
#include <string_view>

#include <boost/test/unit_test.hpp>

#include "domain/embedded.hpp"
#include "tests/support/fake_server.hpp"
#include "tests/support/http_client.hpp"

using namespace candor;
using namespace candor::test;

namespace {

constexpr std::string_view csp
  = "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

void check_page_response(const http_response& r, std::string_view type,
                         std::string_view body) {
  BOOST_TEST(r.status == 200);
  check_common(r);
  BOOST_TEST(r.header("Content-Type") == type);
  BOOST_TEST(r.header("Content-Security-Policy") == csp);
  BOOST_TEST(r.body == body);
}

} // namespace

BOOST_AUTO_TEST_SUITE(net_page)

BOOST_AUTO_TEST_CASE(assets_are_compiled_in) {
  using net::find_page_asset;
  auto html = find_page_asset("/");
  BOOST_REQUIRE(html.has_value());
  BOOST_TEST(html->content_type == "text/html; charset=utf-8");
  BOOST_TEST(html->body == embedded::page_html());
  BOOST_TEST(html->body.find("<!doctype html>") == 0u);
  auto js = find_page_asset("/static/app.js");
  BOOST_REQUIRE(js.has_value());
  BOOST_TEST(js->content_type == "application/javascript; charset=utf-8");
  BOOST_TEST(!js->body.empty());
  auto css = find_page_asset("/static/app.css");
  BOOST_REQUIRE(css.has_value());
  BOOST_TEST(css->content_type == "text/css; charset=utf-8");
  BOOST_TEST(!css->body.empty());
  auto icon = find_page_asset("/static/favicon.svg");
  BOOST_REQUIRE(icon.has_value());
  BOOST_TEST(icon->content_type == "image/svg+xml");
  BOOST_TEST(icon->body.find("<svg") == 0u);
  BOOST_TEST(icon->body.find("<script") == std::string_view::npos);
  BOOST_TEST(!find_page_asset("/static/nope.js").has_value());
  BOOST_TEST(!find_page_asset("/static/").has_value());
  BOOST_TEST(!find_page_asset("/index.html").has_value());
  BOOST_TEST(net::page_csp == csp);
}

BOOST_AUTO_TEST_CASE(get_serves_the_page_and_assets_with_the_csp) {
  running_server s;
  http_client c{s.port};
  BOOST_REQUIRE(c.connected());
  auto page = c.request("GET", "/");
  BOOST_REQUIRE(page.has_value());
  check_page_response(*page, "text/html; charset=utf-8", embedded::page_html());
  // A deep link's query does not change what is served.
  auto deep = c.request("GET", "/?q=How%20long%20is%20the%20warranty%3F");
  BOOST_REQUIRE(deep.has_value());
  check_page_response(*deep, "text/html; charset=utf-8", embedded::page_html());
  auto js = c.request("GET", "/static/app.js");
  BOOST_REQUIRE(js.has_value());
  check_page_response(*js, "application/javascript; charset=utf-8",
                      embedded::page_js());
  auto css = c.request("GET", "/static/app.css");
  BOOST_REQUIRE(css.has_value());
  check_page_response(*css, "text/css; charset=utf-8", embedded::page_css());
  auto icon = c.request("GET", "/static/favicon.svg");
  BOOST_REQUIRE(icon.has_value());
  check_page_response(*icon, "image/svg+xml", embedded::page_icon());
  // Reads: no ledger row (one would be recorded before the response).
  BOOST_TEST(s.svc.records().empty());
}

BOOST_AUTO_TEST_CASE(unknown_assets_are_404_and_other_methods_405) {
  running_server s;
  http_client c{s.port};
  for (auto path : {"/static/nope.js", "/static/", "/static/app.js/",
                    "/static/../static/app.js", "/index.html"}) {
    auto r = c.request("GET", path);
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->status == 404, path);
    BOOST_TEST(r->header("Content-Security-Policy").empty());
  }
  auto post = c.request("POST", "/", "x", {{"Content-Type", "text/plain"}});
  BOOST_REQUIRE(post.has_value());
  BOOST_TEST(post->status == 405);
  BOOST_TEST(post->header("Allow") == "GET, HEAD");
}

BOOST_AUTO_TEST_CASE(head_gets_the_head_of_a_get) {
  running_server s;
  http_client c{s.port};
  for (auto path : {"/", "/static/app.js", "/static/app.css"}) {
    auto get = c.request("GET", path);
    BOOST_REQUIRE(get.has_value());
    BOOST_REQUIRE(c.send_raw("HEAD " + std::string{path}
                             + " HTTP/1.1\r\nHost: x\r\n\r\n"
                               "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto head = c.read_response_head();
    BOOST_REQUIRE(head.has_value());
    BOOST_TEST(head->status == 200);
    BOOST_TEST(head->header("Content-Length")
               == std::to_string(get->body.size()));
    BOOST_TEST(head->header("Content-Type") == get->header("Content-Type"));
    BOOST_TEST(head->header("Content-Security-Policy") == csp);
    // No body followed the head: the next response reads cleanly.
    auto next = c.read_response();
    BOOST_REQUIRE(next.has_value());
    BOOST_TEST(next->status == 200);
    BOOST_TEST(next->body == "candor_up 1\n");
  }
}

BOOST_AUTO_TEST_CASE(script_never_parses_markup) {
  auto js = embedded::page_js();
  for (auto bad : {"innerHTML", "outerHTML", "insertAdjacentHTML",
                   "document.write", "eval(", "new Function", "srcdoc",
                   "DOMParser", "createContextualFragment"})
    BOOST_TEST(js.find(bad) == std::string_view::npos, bad);
  // What it does use.
  BOOST_TEST(js.find("textContent") != std::string_view::npos);
  BOOST_TEST(js.find("createElement") != std::string_view::npos);
}

BOOST_AUTO_TEST_CASE(html_has_no_inline_script_or_style) {
  std::string html{embedded::page_html()};
  // Every <script> has a same-origin src and an empty body.
  std::regex script_open{R"(<script\b[^>]*>)", std::regex::icase};
  size_t scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_open);
       it != std::sregex_iterator(); ++it) {
    ++scripts;
    auto tag = it->str();
    BOOST_TEST(tag.find("src=\"/static/") != std::string::npos, tag);
    auto after = html.substr(it->position() + it->length(), 9);
    BOOST_TEST(after == "</script>", tag);
  }
  BOOST_TEST(scripts == 1u);
  BOOST_TEST(
    !std::regex_search(html, std::regex{R"(<style\b)", std::regex::icase}));
  BOOST_TEST(
    !std::regex_search(html, std::regex{R"(\sstyle\s*=)", std::regex::icase}));
  // No event-handler attributes and no javascript: URLs either.
  BOOST_TEST(!std::regex_search(
    html, std::regex{R"(\son[a-z]+\s*=)", std::regex::icase}));
  BOOST_TEST(html.find("javascript:") == std::string::npos);
  // Nothing from another origin (works without the network).
  BOOST_TEST(html.find("http://") == std::string::npos);
  BOOST_TEST(html.find("https://") == std::string::npos);
  // Accessible: the question box is labelled, the answer is announced.
  BOOST_TEST(html.find("<label for=\"question\">") != std::string::npos);
  BOOST_TEST(html.find("aria-live=\"polite\"") != std::string::npos);
  // Its own icon, so browsers do not ask for /favicon.ico (a 404).
  BOOST_TEST(html.find("<link rel=\"icon\" href=\"/static/favicon.svg\"")
             != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
