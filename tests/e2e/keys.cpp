// End-to-end: API keys. `candor keys add|list|revoke` on a real data
// directory, and the real `candor serve` with keys: 401 without an active
// key, 429 with Retry-After past a key's rate or daily model tokens, the
// key's name (never the key) in the ledger, the log, /stats and /metrics;
// and no serving beyond loopback without keys unless told so.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "data/ledger/keys.hpp"
#include "data/sqlite.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"
#include "tests/support/questions.hpp"

using namespace candor;
using namespace candor::test;
namespace json = boost::json;

namespace {

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

std::string slurp_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Every file of the ledger (the database and its WAL).
std::string ledger_bytes(const std::string& data_dir) {
  return slurp_file(data_dir + "/ledger.db")
         + slurp_file(data_dir + "/ledger.db-wal");
}

/// `candor keys add NAME args...` on `data_dir`: the key it printed.
std::string add_key(const std::string& data_dir, const std::string& name,
                    std::vector<std::string> args = {}) {
  std::vector<std::string> argv{"keys", "add", name, "--data-dir", data_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_candor(argv);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto key = r.out;
  while (!key.empty() && key.back() == '\n')
    key.pop_back();
  BOOST_REQUIRE_EQUAL(key.size(), 47u);
  return key;
}

header_list bearer(const std::string& key) {
  return {{"Authorization", "Bearer " + key}};
}

json::object parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  BOOST_REQUIRE_MESSAGE(!ec && v.is_object(), "not a JSON object: " << body);
  return v.as_object();
}

void check_error(const http_response& r, int status, std::string_view error) {
  BOOST_CHECK_EQUAL(r.status, status);
  auto o = parse_object(r.body);
  BOOST_CHECK_EQUAL(o.at("error").as_string(), error);
  BOOST_CHECK_EQUAL(o.at("requestId").as_string(), r.header("x-request-id"));
}

int64_t retry_after(const http_response& r) {
  auto v = r.header("retry-after");
  BOOST_REQUIRE_MESSAGE(!v.empty(), "no Retry-After");
  for (char c : v)
    BOOST_REQUIRE_MESSAGE(c >= '0' && c <= '9', "Retry-After: " << v);
  return std::stoll(v);
}

/// The ledger's request rows as "path status key" lines.
std::string request_rows(const std::string& data_dir) {
  auto db = data::database::open(data_dir + "/ledger.db");
  BOOST_REQUIRE(db.ok());
  auto text = db->query_text(
    "SELECT group_concat(path || ' ' || http_status || ' ' || key_name, "
    "char(10)) FROM requests");
  BOOST_REQUIRE(text.ok());
  return *text;
}

/// Waits until the writer has flushed `n` request rows.
void wait_rows(const std::string& data_dir, int n) {
  for (int i = 0; i < 200; ++i) {
    auto rows = request_rows(data_dir);
    if (!rows.empty()
        && std::count(rows.begin(), rows.end(), '\n') + 1 >= n)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
  }
  BOOST_FAIL("the ledger did not get " << n << " rows");
}

} // namespace

BOOST_AUTO_TEST_SUITE(e2e_keys)

BOOST_AUTO_TEST_CASE(add_list_revoke_show_the_key_once_and_store_its_hash) {
  auto dir = make_temp_dir("candor-keys");
  auto data = dir + "/var";
  auto r = run_candor({"keys", "add", "ci-bot", "--data-dir", data, "--rate",
                       "2", "--burst", "4", "--daily-tokens", "5000"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto key = r.out.substr(0, r.out.find('\n'));
  BOOST_TEST(r.out == key + "\n"); // the key alone on stdout
  BOOST_TEST(key.substr(0, 4) == "cnd_");
  BOOST_TEST(!has(r.err, key));
  // The same name again, a bad name, bad limits.
  r = run_candor({"keys", "add", "ci-bot", "--data-dir", data});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(has(r.err, "exists"));
  BOOST_TEST(r.out.empty());
  r = run_candor({"keys", "add", "Bad Name", "--data-dir", data});
  BOOST_TEST(r.exit_code == 2);
  r = run_candor({"keys", "add", "x", "--rate", "0", "--data-dir", data});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.err, "--rate"));
  r = run_candor({"keys", "frobnicate", "--data-dir", data});
  BOOST_TEST(r.exit_code == 2);
  // list: name, prefix, limits; never the key nor its hash.
  r = run_candor({"keys", "list", "--data-dir", data});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(has(r.out, "ci-bot"));
  BOOST_TEST(has(r.out, key.substr(0, 8)));
  BOOST_TEST(has(r.out, "5000"));
  BOOST_TEST(!has(r.out, key));
  BOOST_TEST(!has(r.out, data::key_hash(key)));
  // Stored: the hash, not the key.
  auto bytes = ledger_bytes(data);
  BOOST_TEST(has(bytes, data::key_hash(key)));
  BOOST_TEST(!has(bytes, key));
  // revoke: once.
  r = run_candor({"keys", "revoke", "ci-bot", "--data-dir", data});
  BOOST_TEST(r.exit_code == 0);
  r = run_candor({"keys", "revoke", "ci-bot", "--data-dir", data});
  BOOST_TEST(r.exit_code == 1);
  r = run_candor({"keys", "list", "--data-dir", data});
  auto line = r.out.substr(r.out.find("ci-bot"));
  line = line.substr(0, line.find('\n'));
  BOOST_TEST(!line.ends_with(" -")); // a revocation time
  remove_tree(dir);
}

BOOST_AUTO_TEST_CASE(a_server_with_keys_admits_only_them_and_names_them) {
  server_process proc;
  auto alice = add_key(proc.data_dir(), "alice");
  auto bob = add_key(proc.data_dir(), "bob");
  BOOST_REQUIRE_MESSAGE(proc.start(), proc.log());
  http_client c{proc.port()};
  // 401 without a key and with a wrong one; /health needs none.
  auto r = c.ask(ask_body(out_of_scope_q));
  BOOST_REQUIRE(r);
  check_error(*r, 401, "unauthorized");
  BOOST_TEST(has(r->header("www-authenticate"), "Bearer"));
  r = c.ask(ask_body(out_of_scope_q), bearer(alice + "x"));
  BOOST_REQUIRE(r);
  check_error(*r, 401, "unauthorized");
  r = c.request("GET", "/demo/questions");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  r = c.request("GET", "/health");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  // 200 with the key.
  r = c.ask(ask_body(out_of_scope_q), bearer(alice));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  auto tokens = parse_object(r->body).at("meta").at("tokens").at("total").as_int64();
  r = c.request("GET", "/demo/questions", {}, bearer(bob));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  // Bob revoked: refused after a SIGHUP (or the next periodic reload).
  auto rr = run_candor({"keys", "revoke", "bob", "--data-dir", proc.data_dir()});
  BOOST_REQUIRE(rr.exit_code == 0);
  ::kill(proc.pid(), SIGHUP);
  int status = 0;
  for (int i = 0; i < 200 && status != 401; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
    r = c.request("GET", "/demo/questions", {}, bearer(bob));
    BOOST_REQUIRE(r);
    status = r->status;
  }
  BOOST_TEST(status == 401);
  // The name in the ledger rows, /stats and /metrics.
  wait_rows(proc.data_dir(), 5);
  auto rows = request_rows(proc.data_dir());
  BOOST_TEST(has(rows, "/ask 200 alice"), rows);
  BOOST_TEST(has(rows, "/ask 401 "), rows); // no name without a key
  r = c.request("GET", "/stats");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  auto by_key = parse_object(r->body).at("byKey").as_object();
  BOOST_TEST(by_key.at("alice").at("requests").as_int64() == 1);
  BOOST_TEST(by_key.at("alice").at("tokens").as_int64() == tokens);
  r = c.request("GET", "/metrics");
  BOOST_REQUIRE(r);
  BOOST_TEST(has(r->body, "candor_key_requests_total{key=\"alice\"} 1\n"),
             r->body);
  BOOST_TEST(has(r->body, "candor_key_requests_total{key=\"bob\"} 1\n"));
  BOOST_TEST(has(r->body, "candor_key_tokens_total{key=\"alice\"} "
                            + std::to_string(tokens) + "\n"));
  BOOST_TEST(proc.stop(SIGTERM) == 0);
  // The log names the key; no key is anywhere in the log or the ledger.
  auto log = proc.log();
  BOOST_TEST(has(log, "\"key\":\"alice\""));
  BOOST_TEST(!has(log, alice));
  BOOST_TEST(!has(log, bob));
  auto bytes = ledger_bytes(proc.data_dir());
  BOOST_TEST(!has(bytes, alice));
  BOOST_TEST(!has(bytes, bob));
}

BOOST_AUTO_TEST_CASE(a_conversation_belongs_to_the_key_that_began_it) {
  server_process proc;
  auto alice = add_key(proc.data_dir(), "alice");
  auto bob = add_key(proc.data_dir(), "bob");
  BOOST_REQUIRE_MESSAGE(proc.start(), proc.log());
  http_client c{proc.port()};
  auto r = c.ask(ask_body(out_of_scope_q), bearer(alice));
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  auto id = std::string{parse_object(r->body).at("conversationId").as_string()};
  auto follow_up = json::serialize(
    json::object{{"question", "and on Sunday?"}, {"conversationId", id}});
  // Another key cannot continue it or read it: as if it did not exist.
  r = c.ask(follow_up, bearer(bob));
  BOOST_REQUIRE(r);
  check_error(*r, 404, "not_found");
  r = c.request("GET", "/conversations/" + id, {}, bearer(bob));
  BOOST_REQUIRE(r);
  check_error(*r, 404, "not_found");
  r = c.request("GET", "/conversations/" + id);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  // Its own key can.
  r = c.request("GET", "/conversations/" + id, {}, bearer(alice));
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  BOOST_TEST(parse_object(r->body).at("turns").as_array().size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_openai_endpoint_takes_the_key_as_its_api_key) {
  server_process proc;
  auto carol = add_key(proc.data_dir(), "carol");
  BOOST_REQUIRE_MESSAGE(proc.start(), proc.log());
  http_client c{proc.port()};
  std::string body = R"({"model":"candor","messages":[{"role":"user",)"
                     R"("content":")"
                     + std::string{out_of_scope_q} + R"("}]})";
  header_list json{{"Content-Type", "application/json"}};
  auto keyed = bearer(carol);
  keyed.insert(keyed.end(), json.begin(), json.end());
  // Without the key: 401 in OpenAI's error shape.
  auto r = c.request("POST", "/v1/chat/completions", body, json);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  BOOST_TEST(parse_object(r->body).at("error").is_object(), r->body);
  r = c.request("GET", "/v1/models");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  // With it, as an OpenAI client sends its API key.
  r = c.request("POST", "/v1/chat/completions", body, keyed);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200, r->body);
  r = c.request("GET", "/v1/models", {}, bearer(carol));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  // The row is the key's.
  wait_rows(proc.data_dir(), 3);
  auto rows = request_rows(proc.data_dir());
  BOOST_TEST(has(rows, "/v1/chat/completions 200 carol"), rows);
  BOOST_TEST(proc.stop(SIGTERM) == 0);
  BOOST_TEST(!has(proc.log(), carol));
}

BOOST_AUTO_TEST_CASE(past_its_rate_or_its_daily_tokens_a_key_gets_429) {
  server_process proc;
  auto slow = add_key(proc.data_dir(), "slow",
                      {"--rate", "0.01", "--burst", "2"});
  auto thrifty = add_key(proc.data_dir(), "thrifty", {"--daily-tokens", "1"});
  BOOST_REQUIRE_MESSAGE(proc.start(), proc.log());
  http_client c{proc.port()};
  for (int i = 0; i < 2; ++i) {
    auto r = c.request("GET", "/demo/questions", {}, bearer(slow));
    BOOST_REQUIRE(r);
    BOOST_TEST(r->status == 200);
  }
  auto r = c.request("GET", "/demo/questions", {}, bearer(slow));
  BOOST_REQUIRE(r);
  check_error(*r, 429, "rate_limited");
  auto wait = retry_after(*r);
  BOOST_TEST(wait >= 1);
  BOOST_TEST(wait <= 100); // one request at 0.01/s
  // The first question spends tokens past the budget; the next waits for
  // UTC midnight.
  r = c.ask(ask_body(out_of_scope_q), bearer(thrifty));
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 200);
  BOOST_TEST(parse_object(r->body).at("meta").at("tokens").at("total").as_int64() > 1);
  r = c.ask(ask_body(out_of_scope_q), bearer(thrifty));
  BOOST_REQUIRE(r);
  check_error(*r, 429, "rate_limited");
  wait = retry_after(*r);
  BOOST_TEST(wait >= 1);
  BOOST_TEST(wait <= 86400);
  BOOST_TEST(has(parse_object(r->body).at("message").as_string().c_str(),
                 "midnight"));
  wait_rows(proc.data_dir(), 3);
  auto rows = request_rows(proc.data_dir());
  BOOST_TEST(has(rows, "/demo/questions 429 slow"), rows);
  BOOST_TEST(has(rows, "/ask 429 thrifty"), rows);
  r = c.request("GET", "/stats");
  BOOST_REQUIRE(r);
  auto by_key = parse_object(r->body).at("byKey").as_object();
  BOOST_TEST(by_key.at("thrifty").at("rateLimited").as_int64() == 1);
  r = c.request("GET", "/metrics");
  BOOST_REQUIRE(r);
  BOOST_TEST(has(r->body, "candor_key_rejected_total{key=\"slow\",reason="
                          "\"rate\"} 1\n"));
  BOOST_TEST(has(r->body, "candor_key_rejected_total{key=\"thrifty\","
                          "reason=\"daily_tokens\"} 1\n"));
}

BOOST_AUTO_TEST_CASE(beyond_loopback_only_with_a_key_or_an_explicit_opt_in) {
  auto dir = make_temp_dir("candor-keys");
  auto data = dir + "/var";
  // 192.0.2.1 (TEST-NET-1) is on no interface here: a server that gets
  // past the check fails to bind (exit 1) and never listens anywhere.
  std::map<std::string, std::string> env{
    {"CANDOR_HTTP_OPERATOR_TOKEN", "op-7f3a9c1e-operator"}};
  auto r = run_candor(
    {"serve", "--port", "0", "--bind", "192.0.2.1", "--data-dir", data}, env);
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(has(r.err, "candor keys add"));
  BOOST_TEST(has(r.err, "--allow-unauthenticated"));
  BOOST_TEST(has(r.err, "http.allowUnauthenticated"));
  r = run_candor({"serve", "--port", "0", "--bind", "192.0.2.1", "--data-dir",
                  data, "--allow-unauthenticated"},
                 env);
  BOOST_TEST(r.exit_code == 1, r.err);
  BOOST_TEST(has(r.err, "cannot listen"));
  add_key(data, "remote");
  r = run_candor(
    {"serve", "--port", "0", "--bind", "192.0.2.1", "--data-dir", data}, env);
  BOOST_TEST(r.exit_code == 1, r.err);
  BOOST_TEST(has(r.err, "cannot listen"));
  remove_tree(dir);
}

BOOST_AUTO_TEST_SUITE_END()
