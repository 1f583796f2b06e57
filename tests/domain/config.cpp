// Tests of the configuration: precedence of defaults, file, environment and
// flags, and errors that name the key and where its value came from.

#include "data/config_load.hpp"
#include "domain/config.hpp"

#include <cstdio>
#include <fstream>
#include <vector>

#include <unistd.h>

#include <boost/test/unit_test.hpp>

using namespace candor::domain;
namespace data = candor::data;

namespace {

outcome<config> load(const env_lookup& env = {},
                     const std::map<std::string, std::string>& flags = {},
                     const std::string& file = {}) {
  return data::load_config(default_config_json(), file, env, flags);
}

std::string temp_file(const std::string& text) {
  char name[] = "/tmp/candor-config-XXXXXX";
  int fd = mkstemp(name);
  BOOST_REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream{name} << text;
  return name;
}

} // namespace

BOOST_AUTO_TEST_SUITE(domain_config)

BOOST_AUTO_TEST_CASE(embedded_defaults_load) {
  auto cfg = load();
  BOOST_REQUIRE_MESSAGE(cfg.ok(),
                        (cfg.ok() ? std::string{} : cfg.err().message));
  BOOST_CHECK_EQUAL(cfg->http.port, 8080);
  BOOST_CHECK_EQUAL(cfg->http.bind, "127.0.0.1");
  BOOST_CHECK_EQUAL(cfg->http.body_limit_bytes, 16384);
  BOOST_CHECK_EQUAL(cfg->http.chat_body_limit_bytes, 262144);
  BOOST_CHECK_EQUAL(cfg->graph.step_cap, 25);
  BOOST_CHECK_EQUAL(cfg->graph.llm_call_budget, 8);
  // With no endpoint, the local provider answers; it names one model.
  BOOST_CHECK_EQUAL(cfg->llm.provider, "local");
  BOOST_CHECK_EQUAL(cfg->llm.model, "candor-local");
  BOOST_CHECK(cfg->llm.fallback_model.empty());
  // An endpoint's failed calls are answered locally unless turned off.
  BOOST_CHECK(cfg->llm.local_fallback);
  BOOST_CHECK_EQUAL(cfg->data_dir, "var");
}

BOOST_AUTO_TEST_CASE(environment_overrides_file_and_flags_override_both) {
  auto file = temp_file(R"({"http": {"port": 9000}, "dataDir": "x"})");
  auto cfg = load({{"CANDOR_HTTP_PORT", "9100"}}, {}, file);
  BOOST_REQUIRE(cfg);
  BOOST_CHECK_EQUAL(cfg->http.port, 9100);
  BOOST_CHECK_EQUAL(cfg->data_dir, "x");
  cfg = load({{"CANDOR_HTTP_PORT", "9100"}}, {{"http.port", "9200"}}, file);
  BOOST_REQUIRE(cfg);
  BOOST_CHECK_EQUAL(cfg->http.port, 9200);
  std::remove(file.c_str());
}

BOOST_AUTO_TEST_CASE(environment_names_are_derived_from_keys) {
  BOOST_CHECK_EQUAL(env_name("llm.apiKey"), "CANDOR_LLM_API_KEY");
  BOOST_CHECK_EQUAL(env_name("llm.fallbackModel"), "CANDOR_LLM_FALLBACK_MODEL");
  BOOST_CHECK_EQUAL(env_name("dataDir"), "CANDOR_DATA_DIR");
  BOOST_CHECK_EQUAL(env_name("guardrail.mode"), "CANDOR_GUARDRAIL_MODE");
  BOOST_CHECK_EQUAL(env_name("llm.localFallback"), "CANDOR_LLM_LOCAL_FALLBACK");
  auto cfg = load({{"CANDOR_GRAPH_REQUEST_DEADLINE_MS", "1500"},
                   {"CANDOR_LLM_ALLOW_CHAOS", "true"},
                   {"CANDOR_LLM_LOCAL_FALLBACK", "false"}});
  BOOST_REQUIRE(cfg);
  BOOST_CHECK_EQUAL(cfg->graph.request_deadline_ms, 1500);
  BOOST_CHECK(cfg->llm.allow_chaos);
  BOOST_CHECK(!cfg->llm.local_fallback);
}

BOOST_AUTO_TEST_CASE(unknown_keys_and_bad_values_name_the_key) {
  auto file = temp_file(R"({"http": {"prot": 1}})");
  auto cfg = load({}, {}, file);
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK_EQUAL(cfg.err().code, ec::config_invalid);
  BOOST_CHECK(cfg.err().message.find("http.prot") != std::string::npos);
  std::remove(file.c_str());

  cfg = load({{"CANDOR_HTTP_PORT", "eighty"}});
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("CANDOR_HTTP_PORT") != std::string::npos);

  cfg = load({{"CANDOR_HTTP_PORT", "70000"}});
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("between") != std::string::npos);

  cfg = load({{"CANDOR_NO_SUCH_THING", "1"}});
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("CANDOR_NO_SUCH_THING")
              != std::string::npos);

  cfg = load({}, {{"guardrail.mode", "lenient"}});
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("guardrail.mode") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(wrong_json_types_are_rejected) {
  auto file = temp_file(R"({"http": {"port": "8080"}})");
  auto cfg = load({}, {}, file);
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("http.port") != std::string::npos);
  std::remove(file.c_str());
  file = temp_file("{not json");
  cfg = load({}, {}, file);
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("not valid JSON") != std::string::npos);
  std::remove(file.c_str());
  cfg = load({}, {}, "/nonexistent/candor.json");
  BOOST_REQUIRE(!cfg);
}

BOOST_AUTO_TEST_CASE(secrets_come_only_from_the_environment) {
  auto file = temp_file(R"({"llm": {"apiKey": "sk-abc"}})");
  auto cfg = load({}, {}, file);
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("CANDOR_LLM_API_KEY")
              != std::string::npos);
  std::remove(file.c_str());
}

BOOST_AUTO_TEST_CASE(a_key_or_endpoint_selects_the_real_provider) {
  auto cfg = load({{"CANDOR_LLM_API_KEY", "sk-test"}});
  BOOST_REQUIRE(!cfg); // a key without an endpoint is inconsistent
  BOOST_CHECK(cfg.err().message.find("CANDOR_LLM_BASE_URL")
              != std::string::npos);
  cfg = load({{"CANDOR_LLM_BASE_URL", "http://127.0.0.1:9/v1"},
              {"CANDOR_LLM_MODEL", "m1"}});
  BOOST_REQUIRE(cfg);
  BOOST_CHECK_EQUAL(cfg->llm.provider, "openai");
  cfg = load({{"CANDOR_GUARDRAIL_MODE", "rules+model"}});
  BOOST_REQUIRE(!cfg);
}

BOOST_AUTO_TEST_CASE(an_inconsistent_endpoint_names_the_variable) {
  auto names = [](const outcome<config>& c, const std::string& var) {
    return !c && c.err().message.find(var) != std::string::npos;
  };
  // The scripted model names mean nothing to a real endpoint.
  BOOST_CHECK(names(load({{"CANDOR_LLM_BASE_URL", "http://127.0.0.1:9/v1"}}),
                    "CANDOR_LLM_MODEL"));
  BOOST_CHECK(names(
    load({{"CANDOR_LLM_BASE_URL", "ftp://h/v1"}, {"CANDOR_LLM_MODEL", "m"}}),
    "CANDOR_LLM_BASE_URL"));
  BOOST_CHECK(names(load({{"CANDOR_LLM_BASE_URL", "https://u:p@h/v1"},
                          {"CANDOR_LLM_MODEL", "m"}}),
                    "CANDOR_LLM_BASE_URL"));
  // A key never goes to another machine in clear text.
  BOOST_CHECK(names(load({{"CANDOR_LLM_BASE_URL", "http://example.com/v1"},
                          {"CANDOR_LLM_MODEL", "m"},
                          {"CANDOR_LLM_API_KEY", "sk-x"}}),
                    "CANDOR_LLM_API_KEY"));
  auto bad_key = load({{"CANDOR_LLM_BASE_URL", "https://h/v1"},
                       {"CANDOR_LLM_MODEL", "m"},
                       {"CANDOR_LLM_API_KEY", "sk-x\r\nX-Evil: 1"}});
  BOOST_CHECK(names(bad_key, "CANDOR_LLM_API_KEY"));
  BOOST_CHECK(!bad_key
              && bad_key.err().message.find("sk-x") == std::string::npos);
  BOOST_CHECK(load({{"CANDOR_LLM_BASE_URL", "http://localhost:8000/v1"},
                    {"CANDOR_LLM_MODEL", "m"},
                    {"CANDOR_LLM_API_KEY", "sk-x"}}));
  // The guard model needs the rules+model mode.
  BOOST_CHECK(names(load({{"CANDOR_LLM_BASE_URL", "https://h/v1"},
                          {"CANDOR_LLM_MODEL", "m"},
                          {"CANDOR_GUARD_MODEL", "g"}}),
                    "CANDOR_GUARD_MODEL"));
  auto ok = load({{"CANDOR_LLM_BASE_URL", "https://h/v1"},
                  {"CANDOR_LLM_MODEL", "m"},
                  {"CANDOR_GUARDRAIL_MODE", "rules+model"},
                  {"CANDOR_GUARD_MODEL", "g"}});
  BOOST_REQUIRE(ok);
  BOOST_CHECK_EQUAL(ok->guardrail.model, "g");
  BOOST_CHECK_EQUAL(ok->llm.model, "m");
  BOOST_CHECK_EQUAL(ok->llm.fallback_model, ""); // no scripted fallback
  auto fb = load({{"CANDOR_LLM_BASE_URL", "https://h/v1"},
                  {"CANDOR_LLM_MODEL", "m"},
                  {"CANDOR_LLM_FALLBACK_MODEL", "f"}});
  BOOST_REQUIRE(fb);
  BOOST_CHECK_EQUAL(fb->llm.fallback_model, "f");
}

BOOST_AUTO_TEST_CASE(integers_beyond_int64_are_out_of_range_not_malformed) {
  std::map<std::string, std::string> names{{"sql.seed", "--seed"},
                                           {"http.port", "--port"}};
  for (auto seed : {"-1", "-9223372036854775809", "9223372036854775808"}) {
    auto cfg = data::load_config(default_config_json(), {}, {},
                                 {{"sql.seed", seed}}, names);
    BOOST_TEST_CONTEXT(seed) {
      BOOST_REQUIRE(!cfg);
      BOOST_CHECK_EQUAL(cfg.err().code, ec::config_invalid);
      BOOST_CHECK(cfg.err().message.find("--seed") != std::string::npos);
      BOOST_CHECK(
        cfg.err().message.find("must be between 0 and 9223372036854775807")
        != std::string::npos);
    }
  }
  auto ok = data::load_config(default_config_json(), {}, {},
                              {{"sql.seed", "9223372036854775807"}}, names);
  BOOST_REQUIRE(ok);
  BOOST_CHECK_EQUAL(ok->sql.seed, 9223372036854775807u);
  auto port = data::load_config(default_config_json(), {}, {},
                                {{"http.port", "99999999999999999999"}}, names);
  BOOST_REQUIRE(!port);
  BOOST_CHECK(port.err().message.find("--port") != std::string::npos);
  BOOST_CHECK(port.err().message.find("between 0 and 65535")
              != std::string::npos);
  auto file = temp_file(R"({"sql": {"seed": 9223372036854775808}})");
  auto big = load({}, {}, file);
  BOOST_REQUIRE(!big);
  BOOST_CHECK(big.err().message.find("sql.seed") != std::string::npos);
  BOOST_CHECK(big.err().message.find("between") != std::string::npos);
  std::remove(file.c_str());
}

BOOST_AUTO_TEST_CASE(bind_must_be_an_ip_address_and_data_dir_not_empty) {
  for (auto bind : {"127.0.0.1", "127.0.0.2", "::1"})
    BOOST_CHECK_MESSAGE(load({{"CANDOR_HTTP_BIND", bind}}), bind);
  // Beyond loopback, only with an operator token for /runs, /stats and
  // /metrics.
  for (auto bind : {"0.0.0.0", "::", "fe80::1%lo", "192.168.1.10"}) {
    BOOST_CHECK_MESSAGE(load({{"CANDOR_HTTP_BIND", bind},
                              {"CANDOR_HTTP_OPERATOR_TOKEN", "op-7f3a9c1e"}}),
                        bind);
    auto cfg = load({{"CANDOR_HTTP_BIND", bind}});
    BOOST_TEST_CONTEXT(bind) {
      BOOST_REQUIRE(!cfg);
      BOOST_CHECK(cfg.err().message.find("CANDOR_HTTP_BIND") != std::string::npos);
      BOOST_CHECK(cfg.err().message.find("CANDOR_HTTP_OPERATOR_TOKEN")
                  != std::string::npos);
    }
  }
  for (auto bind : {"999.1.1.1", "notanaddress", "localhost", "1.2.3", "bad"}) {
    auto cfg = load({{"CANDOR_HTTP_BIND", bind}});
    BOOST_TEST_CONTEXT(bind) {
      BOOST_REQUIRE(!cfg);
      BOOST_CHECK_EQUAL(cfg.err().code, ec::config_invalid);
      BOOST_CHECK(cfg.err().message.find("http.bind") != std::string::npos);
      BOOST_CHECK(cfg.err().message.find("IPv4 or IPv6") != std::string::npos);
    }
  }
  auto empty = load({}, {{"http.bind", ""}});
  BOOST_CHECK(!empty
              && empty.err().message.find("http.bind") != std::string::npos);
  auto file = temp_file(R"({"dataDir": ""})");
  auto cfg = load({}, {}, file);
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("dataDir") != std::string::npos);
  BOOST_CHECK(cfg.err().message.find("must not be empty") != std::string::npos);
  std::remove(file.c_str());
  cfg = load({}, {{"dataDir", ""}});
  BOOST_CHECK(!cfg && cfg.err().message.find("dataDir") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(file_errors_name_the_key_and_the_file_not_a_variable) {
  auto fails_with = [](const std::string& json, std::vector<std::string> wanted,
                       std::vector<std::string> unwanted = {}) {
    auto file = temp_file(json);
    auto cfg = load({}, {}, file);
    BOOST_TEST_CONTEXT(json) {
      BOOST_REQUIRE(!cfg);
      BOOST_CHECK_EQUAL(cfg.err().code, ec::config_invalid);
      for (auto& w : wanted)
        BOOST_CHECK_MESSAGE(cfg.err().message.find(w) != std::string::npos,
                            cfg.err().message << " lacks " << w);
      for (auto& u : unwanted)
        BOOST_CHECK_MESSAGE(cfg.err().message.find(u) == std::string::npos,
                            cfg.err().message << " has " << u);
    }
    std::remove(file.c_str());
  };
  // A group given a scalar: the key is known, its type is wrong.
  fails_with(R"({"http": 5})", {"'http'", "must be an object"},
             {"unknown key"});
  fails_with(R"({"llm": {"baseUrl": "x"}})",
             {"llm.baseUrl in /tmp/candor-config-", "http://"},
             {"CANDOR_LLM_BASE_URL must"});
  fails_with(R"({"guardrail": {"model": "x"}})",
             {"guardrail.model in /tmp/candor-config-", "rules+model"},
             {"CANDOR_GUARD_MODEL is set", "unset CANDOR_GUARD_MODEL"});
  fails_with(R"({"llm": {"fixturesDir": "/nonexistent/x"}})",
             {"llm.fixturesDir in /tmp/candor-config-", "not a directory"});
  fails_with(R"({"llm": {"caFile": "/nonexistent/ca.pem"}})",
             {"llm.caFile in /tmp/candor-config-", "not a file"});
  // From the environment, the variable is named.
  auto env = load({{"CANDOR_GUARD_MODEL", "g"}});
  BOOST_REQUIRE(!env);
  BOOST_CHECK(env.err().message.find("CANDOR_GUARD_MODEL is set")
              != std::string::npos);
  // A directory given as the config file is said to be one.
  auto dir = load({}, {}, "/tmp");
  BOOST_REQUIRE(!dir);
  BOOST_CHECK(dir.err().message.find("'/tmp' is a directory")
              != std::string::npos);
}

BOOST_AUTO_TEST_CASE(ranges_print_numbers_without_trailing_zeros) {
  auto cfg = load({{"CANDOR_RETRIEVAL_THRESHOLD", "2000"}});
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK(cfg.err().message.find("must be between 0 and 1000")
              != std::string::npos);
  BOOST_CHECK(cfg.err().message.find(".000000") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_key_given_twice_is_refused_by_name) {
  // The JSON parser keeps the last of two members silently; a config file
  // that sets a key twice is a mistake worth a message.
  auto file
    = temp_file(R"({"http": {"port": 8081, "threads": 2, "port": 9090}})");
  auto cfg = load({}, {}, file);
  BOOST_REQUIRE(!cfg);
  BOOST_CHECK_EQUAL(cfg.err().code, ec::config_invalid);
  BOOST_CHECK_MESSAGE(
    cfg.err().message.find("'http.port' appears more than once")
      != std::string::npos,
    cfg.err().message);
  std::remove(file.c_str());
  // The same name in two objects is two keys.
  file = temp_file(R"({"http": {"port": 8081}, "llm": {"model": "m"}})");
  BOOST_CHECK(load({}, {}, file));
  std::remove(file.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
