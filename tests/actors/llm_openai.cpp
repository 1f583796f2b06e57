// The openai provider through the whole actor graph, against a scripted
// OpenAI-compatible stub on loopback: success, Retry-After, 5xx, timeout
// then fallback, all down (answered by the local provider, or 503 without
// llm.localFallback), authentication errors, truncation, the single parse
// re-ask, budget, JSON mode, TLS. The guard classifier: llm_openai_guard.cpp.


#include "tests/support/openai_app.hpp"

using namespace candor;
using namespace candor::test::openai_app_support;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(llm_openai)

BOOST_AUTO_TEST_CASE(success_with_usage_cost_and_structured_output) {
  openai_app t{[](const test::stub_request&) { return say(route_oos); }};
  auto r = t.ask();
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK(r->route == domain::route_kind::out_of_scope);
  BOOST_CHECK_EQUAL(r->route_reason, "The question is about weather.");
  BOOST_CHECK(!has(r->warnings, "router_fallback"));
  BOOST_CHECK_EQUAL(r->usage.calls, 1);
  BOOST_CHECK_EQUAL(r->usage.attempts, 1);
  BOOST_CHECK_EQUAL(r->usage.tokens_in, 11);
  BOOST_CHECK_EQUAL(r->usage.tokens_out, 7);
  // gpt-4o-mini from conf/prices.json: 0.15 and 0.60 USD per million.
  BOOST_CHECK_CLOSE(r->usage.cost_usd, (11 * 0.15 + 7 * 0.60) / 1e6, 1e-6);
  BOOST_CHECK(has(r->usage.models, "gpt-4o-mini"));
  auto seen = t.stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 1u);
  BOOST_CHECK_EQUAL(seen[0].authorization, std::string{"Bearer "} + key);
  BOOST_CHECK_EQUAL(seen[0].model, "gpt-4o-mini");
  BOOST_CHECK(seen[0].user.find(oos) != std::string::npos);
  auto body = boost::json::parse(seen[0].body).as_object();
  auto& fmt = body.at("response_format").as_object();
  BOOST_CHECK_EQUAL(fmt.at("type").as_string(), "json_schema");
  BOOST_CHECK_EQUAL(fmt.at("json_schema").at("name").as_string(), "router");
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK_EQUAL(calls[0].at("provider").as_string(), "openai");
  BOOST_CHECK_EQUAL(calls[0].at("model").as_string(), "gpt-4o-mini");
  BOOST_CHECK_EQUAL(calls[0].at("outcome").as_string(), "ok");
  BOOST_CHECK_EQUAL(calls[0].at("tokensIn").as_int64(), 11);
  BOOST_CHECK(!calls[0].at("tokensEstimated").as_bool());
  BOOST_CHECK_GT(calls[0].at("costUsd").as_double(), 0);
}

BOOST_AUTO_TEST_CASE(rate_limit_honours_retry_after) {
  openai_app t{[](const test::stub_request& req) {
    if (req.index == 0) {
      auto r = status(429);
      r.retry_after = "1";
      return r;
    }
    return say(route_oos);
  }};
  auto t0 = std::chrono::steady_clock::now();
  auto r = t.ask();
  auto took = std::chrono::steady_clock::now() - t0;
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!has(r->warnings, "router_fallback"));
  BOOST_CHECK_EQUAL(r->usage.attempts, 2);
  BOOST_CHECK_EQUAL(r->usage.retries, 1);
  BOOST_CHECK(!r->usage.fallback_used);
  // The backoff base is 1 ms: only Retry-After explains the wait.
  BOOST_CHECK(took >= 950ms);
  BOOST_CHECK_EQUAL(t.stub.requests(), 2);
}

BOOST_AUTO_TEST_CASE(no_attempt_after_the_request_deadline) {
  openai_app t{[](const test::stub_request&) {
                 auto r = status(429);
                 r.retry_after = "2";
                 return r;
               },
               {{"graph.requestDeadlineMs", "500"}}};
  auto r = t.ask();
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK_EQUAL(r.err().code, domain::ec::timeout); // 504 at 500 ms
  // The retry is due after the deadline: the call ends without it.
  std::this_thread::sleep_for(2500ms);
  BOOST_CHECK_EQUAL(t.stub.requests(), 1);
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  // The call ended on the request deadline: a timeout (it said
  // "unavailable", and a 503 when this check came before the supervisor's).
  BOOST_CHECK_EQUAL(calls[0].at("outcome").as_string(), "timeout");
  BOOST_CHECK_EQUAL(calls[0].at("attempts").as_int64(), 1);
}

BOOST_AUTO_TEST_CASE(server_error_then_success_on_the_same_model) {
  openai_app t{[](const test::stub_request& req) {
    return req.index == 0 ? status(500) : say(route_oos);
  }};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->usage.retries, 1);
  BOOST_CHECK(!r->usage.fallback_used);
  auto seen = t.stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 2u);
  BOOST_CHECK_EQUAL(seen[1].model, "gpt-4o-mini");
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK_EQUAL(calls[0].at("retries").as_int64(), 1);
  BOOST_CHECK_EQUAL(calls[0].at("attempts").as_int64(), 2);
}

BOOST_AUTO_TEST_CASE(timeout_then_fallback_model) {
  openai_app t{[](const test::stub_request& req) {
                 auto r = say(route_oos);
                 if (req.model == "gpt-4o-mini")
                   r.delay = 1500ms;
                 return r;
               },
               {{"llm.attemptTimeoutMs", "200"}, {"llm.maxRetries", "1"}}};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!has(r->warnings, "router_fallback"));
  BOOST_CHECK(r->usage.fallback_used);
  BOOST_CHECK_EQUAL(r->usage.attempts, 3); // 2 on the primary, 1 fallback
  BOOST_CHECK(has(r->usage.models, "m-fallback"));
  auto seen = t.stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 3u);
  BOOST_CHECK_EQUAL(seen[2].model, "m-fallback");
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK(calls[0].at("fallbackUsed").as_bool());
  BOOST_CHECK_EQUAL(calls[0].at("model").as_string(), "m-fallback");
}

BOOST_AUTO_TEST_CASE(all_models_down_without_local_fallback_is_unavailable) {
  openai_app t{[](const test::stub_request&) { return status(503); },
               {{"llm.maxRetries", "1"}, {"llm.localFallback", "false"}}};
  auto r = t.ask();
  BOOST_REQUIRE(!r.ok());
  BOOST_CHECK_EQUAL(r.err().code, domain::ec::llm_unavailable);
  BOOST_CHECK_EQUAL(t.stub.requests(), 4); // (1 + 1 retry) x 2 models
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK_EQUAL(calls[0].at("outcome").as_string(), "unavailable");
  BOOST_CHECK_EQUAL(calls[0].at("attempts").as_int64(), 4);
  BOOST_CHECK(!calls[0].at("localFallback").as_bool());
  BOOST_CHECK_EQUAL(t.stats().at("llm").at("localFallbacks").as_int64(), 0);
}

// -- the local provider as the last resort ------------------------------------

BOOST_AUTO_TEST_CASE(all_models_down_the_local_provider_answers) {
  openai_app t{[](const test::stub_request&) { return status(503); },
               {{"llm.maxRetries", "1"}}};
  auto r = t.ask(docs_q);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  // Both calls (router, rag_answer) failed on both models, with a retry
  // each, then the local provider answered them.
  BOOST_CHECK_EQUAL(t.stub.requests(), 2 * 4);
  BOOST_CHECK(r->route == domain::route_kind::docs);
  BOOST_CHECK(r->status == domain::status_kind::answered
              || r->status == domain::status_kind::refused);
  BOOST_CHECK(r->usage.local_fallback);
  BOOST_CHECK(r->usage.fallback_used);
  BOOST_CHECK_EQUAL(r->usage.calls, 2);
  BOOST_CHECK_EQUAL(r->usage.tokens_in + r->usage.tokens_out, 0);
  BOOST_CHECK_EQUAL(r->usage.cost_usd, 0.0);
  BOOST_CHECK(has(r->usage.models, std::string{data::local_model_name}));
  BOOST_CHECK_EQUAL(r->service.provider, "local");
  BOOST_CHECK(has(r->warnings, "llm_local_fallback"));
  // The answer says that no language model was reachable, once.
  auto& text = r->answer;
  auto at = text.find(domain::texts::no_model_reachable);
  BOOST_CHECK_MESSAGE(at != std::string::npos, text);
  BOOST_CHECK(text.find(domain::texts::no_model_reachable, at + 1)
              == std::string::npos);
  if (r->status == domain::status_kind::answered) {
    BOOST_CHECK(!r->citations.empty());
    BOOST_CHECK(text.find(data::local_fallback_answer_note)
                != std::string::npos);
  }
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 2u);
  for (auto& c : calls) {
    BOOST_CHECK_EQUAL(c.at("provider").as_string(), "local");
    BOOST_CHECK_EQUAL(c.at("model").as_string(), data::local_model_name);
    BOOST_CHECK_EQUAL(c.at("outcome").as_string(), "ok");
    BOOST_CHECK_EQUAL(c.at("attempts").as_int64(), 4);
    BOOST_CHECK_EQUAL(c.at("costUsd").as_double(), 0.0);
    BOOST_CHECK(c.at("localFallback").as_bool());
    BOOST_CHECK(!c.at("fallbackUsed").as_bool());
  }
  auto llm = t.stats().at("llm").as_object();
  BOOST_CHECK_EQUAL(llm.at("calls").as_int64(), 2);
  BOOST_CHECK_EQUAL(llm.at("localFallbacks").as_int64(), 2);
  BOOST_CHECK_EQUAL(llm.at("fallbacks").as_int64(), 0);
  auto metrics = t.a->metrics();
  BOOST_CHECK_MESSAGE(metrics.find("candor_model_local_fallbacks_total 2")
                        != std::string::npos,
                      metrics);
}

BOOST_AUTO_TEST_CASE(timeouts_fall_back_to_the_local_provider) {
  openai_app t{[](const test::stub_request&) {
                 auto r = say(route_oos);
                 r.delay = 1500ms;
                 return r;
               },
               {{"llm.attemptTimeoutMs", "100"}, {"llm.maxRetries", "0"}}};
  auto r = t.ask(oos);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK_EQUAL(t.stub.requests(), 2); // one attempt per model
  // The local router keeps the weather out of scope; the fixed answer
  // gets the note.
  BOOST_CHECK(r->route == domain::route_kind::out_of_scope);
  BOOST_CHECK(r->status == domain::status_kind::refused);
  BOOST_CHECK_EQUAL(r->service.provider, "local");
  BOOST_CHECK(r->answer.find(domain::texts::local_fallback_note)
              != std::string::npos);
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK(calls[0].at("localFallback").as_bool());
  BOOST_CHECK_EQUAL(calls[0].at("attempts").as_int64(), 2);
}

// With every model down, the local planner answers the data questions it
// maps to the catalog: the planned query runs through the same validation
// and sandbox, and the answer says no model was reachable.
BOOST_AUTO_TEST_CASE(a_data_question_is_planned_locally_when_all_are_down) {
  // planFirst off: the models are asked first, and fail.
  openai_app t{[](const test::stub_request&) { return status(500); },
               {{"llm.maxRetries", "0"}, {"llm.planFirst", "false"}}};
  auto r = t.ask(data_q);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK(r->route == domain::route_kind::data);
  BOOST_CHECK_MESSAGE(r->status == domain::status_kind::answered, r->answer);
  BOOST_CHECK(has(r->warnings, "llm_local_fallback"));
  BOOST_CHECK(!r->sql.plan.empty());
  BOOST_CHECK(r->sql.query.find("LIMIT 1") != std::string::npos);
  BOOST_CHECK_EQUAL(r->sql.rows.size(), 1u);
  BOOST_CHECK(r->answer.find(domain::texts::no_model_reachable)
              != std::string::npos);
  BOOST_CHECK_EQUAL(t.calls().size(), 3u); // router, sql_generate, sql_answer
}

BOOST_AUTO_TEST_CASE(a_data_question_is_refused_with_why_when_all_are_down) {
  openai_app t{[](const test::stub_request&) { return status(500); },
               {{"llm.maxRetries", "0"}}};
  auto r = t.ask("What was our revenue in 2023?");
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK(r->route == domain::route_kind::data);
  BOOST_CHECK(r->status == domain::status_kind::refused);
  BOOST_CHECK(has(r->warnings, "sql_abstained"));
  BOOST_CHECK(has(r->warnings, "llm_local_fallback"));
  // What was not understood, and not "none is configured": one is, and it
  // failed.
  BOOST_CHECK(r->answer.find("2024-01-01 to 2025-12-31") != std::string::npos);
  BOOST_CHECK(r->answer.find(data::local_fallback_planner_hint.substr(1, 40))
              != std::string::npos);
  BOOST_CHECK(r->answer.find("CANDOR_LLM_BASE_URL") == std::string::npos);
  BOOST_CHECK_EQUAL(t.calls().size(), 2u); // router, sql_generate
}

// llm.planFirst (on by default): a data question the planner reads whole is
// answered with no model call; the ledger and /stats say the planner wrote
// its SQL. Anything else goes to the model.
BOOST_AUTO_TEST_CASE(plan_first_answers_what_the_planner_reads_whole) {
  openai_app t{[](const test::stub_request&) { return say(route_oos); }};
  auto r = t.ask(data_q);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK_EQUAL(t.stub.requests(), 0);
  BOOST_CHECK(r->route == domain::route_kind::data);
  BOOST_CHECK_MESSAGE(r->status == domain::status_kind::answered, r->answer);
  BOOST_CHECK(!r->sql.plan.empty());
  BOOST_CHECK(!has(r->warnings, "llm_local_fallback"));
  BOOST_CHECK_EQUAL(r->usage.cost_usd, 0.0);
  BOOST_CHECK(r->answer.find(domain::texts::no_model_reachable)
              == std::string::npos);
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 3u); // router, sql_generate, sql_answer
  for (auto& c : calls) {
    BOOST_CHECK_EQUAL(c.at("provider").as_string(), "local");
    BOOST_CHECK(!c.at("localFallback").as_bool());
    BOOST_CHECK_EQUAL(c.at("costUsd").as_double(), 0.0);
  }
  // The weather is no data question: the model routes it.
  auto o = t.ask(oos);
  BOOST_REQUIRE(o.ok());
  BOOST_CHECK_GE(t.stub.requests(), 1);
  BOOST_CHECK(o->route == domain::route_kind::out_of_scope);
  BOOST_CHECK_EQUAL(t.calls().at(0).at("provider").as_string(), "openai");
  auto llm = t.stats().at("llm").as_object();
  BOOST_CHECK_EQUAL(llm.at("sqlByPlanner").as_int64(), 1);
  BOOST_CHECK_EQUAL(llm.at("sqlByModel").as_int64(), 0);
}

BOOST_AUTO_TEST_CASE(plan_first_off_asks_the_model_first) {
  openai_app t{[](const test::stub_request&) { return say(route_oos); },
               {{"llm.planFirst", "false"}}};
  auto r = t.ask(data_q);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
  BOOST_CHECK_EQUAL(t.stub.requests(), 1);
  // The model's routing stands, whatever the planner would have said.
  BOOST_CHECK(r->route == domain::route_kind::out_of_scope);
  BOOST_CHECK_EQUAL(t.calls().at(0).at("provider").as_string(), "openai");
}

BOOST_AUTO_TEST_CASE(auth_errors_move_to_the_next_model_without_retry) {
  openai_app t{[](const test::stub_request& req) {
    return req.model == "gpt-4o-mini" ? status(401) : say(route_oos);
  }};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->usage.fallback_used);
  BOOST_CHECK_EQUAL(r->usage.retries, 0);
  BOOST_CHECK_EQUAL(t.stub.requests(), 2);
}

BOOST_AUTO_TEST_CASE(truncation_is_not_retried) {
  openai_app t{[](const test::stub_request&) {
    auto r = say(R"({"route":"out_of)");
    r.finish_reason = "length";
    return r;
  }};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(has(r->warnings, "llm_truncated"));
  BOOST_CHECK(has(r->warnings, "router_fallback"));
  BOOST_CHECK_EQUAL(t.stub.requests(), 1);
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK_EQUAL(calls[0].at("outcome").as_string(), "truncated");
}

BOOST_AUTO_TEST_CASE(malformed_json_is_repaired_by_one_reask) {
  openai_app t{[](const test::stub_request& req) {
    return req.index == 0
             ? say("Sure! The route is out_of_scope.")
             : say(R"({"route":"out_of_scope","reason":"Repaired reply."})");
  }};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(r->route_reason, "Repaired reply.");
  BOOST_CHECK(!has(r->warnings, "router_fallback"));
  BOOST_CHECK_EQUAL(r->usage.calls, 2);
  auto seen = t.stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 2u);
  // The re-ask carries what was wrong with the first reply.
  BOOST_CHECK(seen[1].user.find("previous reply was invalid")
              != std::string::npos);
  BOOST_CHECK(seen[0].user.find("previous reply was invalid")
              == std::string::npos);
}

BOOST_AUTO_TEST_CASE(there_is_exactly_one_reask) {
  openai_app t{[](const test::stub_request&) { return say("not json"); }};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(has(r->warnings, "router_fallback"));
  BOOST_CHECK(has(r->warnings, "llm_parse_failed"));
  BOOST_CHECK_EQUAL(t.stub.requests(), 2);
}

BOOST_AUTO_TEST_CASE(budget_exceeded_calls_nothing) {
  openai_app t{[](const test::stub_request&) { return say(route_oos); },
               {{"graph.llmCallBudget", "0"}}};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(r->status == domain::status_kind::error);
  BOOST_CHECK(has(r->warnings, "llm_budget_exceeded"));
  BOOST_CHECK_EQUAL(t.stub.requests(), 0);
}

BOOST_AUTO_TEST_CASE(budget_stops_the_reask) {
  openai_app t{[](const test::stub_request&) { return say("not json"); },
               {{"graph.llmCallBudget", "1"}}};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK_EQUAL(t.stub.requests(), 1);
  BOOST_CHECK_EQUAL(r->usage.calls, 1);
}

BOOST_AUTO_TEST_CASE(json_object_mode_and_estimated_usage) {
  openai_app t{[](const test::stub_request&) {
                 auto r = say(route_oos);
                 r.prompt_tokens = -1; // no usage in the response
                 return r;
               },
               {{"llm.responseFormat", "json_object"}}};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  auto seen = t.stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 1u);
  auto body = boost::json::parse(seen[0].body).as_object();
  BOOST_CHECK_EQUAL(body.at("response_format").at("type").as_string(),
                    "json_object");
  BOOST_CHECK(seen[0].system.find("JSON schema") != std::string::npos);
  // Estimated from the text: about one token per four bytes.
  BOOST_CHECK_GT(r->usage.tokens_in, 50);
  BOOST_CHECK_EQUAL(
    r->usage.tokens_out,
    static_cast<int64_t>((std::string{route_oos}.size() + 3) / 4));
  auto calls = t.calls();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_CHECK(calls[0].at("tokensEstimated").as_bool());
}

BOOST_AUTO_TEST_CASE(a_400_to_json_schema_falls_back_to_json_mode) {
  openai_app t{[](const test::stub_request& req) {
    return req.body.find("\"json_schema\"") != std::string::npos
             ? status(400)
             : say(route_oos);
  }};
  auto r = t.ask();
  BOOST_REQUIRE(r.ok());
  BOOST_CHECK(!has(r->warnings, "router_fallback"));
  BOOST_CHECK(!r->usage.fallback_used);
  BOOST_CHECK_EQUAL(r->usage.retries, 0);
  auto seen = t.stub.seen();
  BOOST_REQUIRE_EQUAL(seen.size(), 2u);
  BOOST_CHECK_EQUAL(seen[1].model, "gpt-4o-mini");
  BOOST_CHECK(seen[1].body.find("\"json_object\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(tls_endpoint_needs_its_ca) {
  test::temp_dir certs{"candor-tls"};
  BOOST_REQUIRE(test::make_self_signed_cert(certs.path.string()));
  {
    openai_app t{[](const test::stub_request&) { return say(route_oos); },
                 {{"llm.caFile", certs.file("cert.pem")}},
                 {},
                 certs.path.string()};
    auto r = t.ask();
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.err().message));
    BOOST_CHECK_EQUAL(t.stub.requests(), 1);
  }
  {
    openai_app t{[](const test::stub_request&) { return say(route_oos); },
                 {{"llm.localFallback", "false"}},
                 {},
                 certs.path.string()};
    auto r = t.ask();
    BOOST_REQUIRE(!r.ok());
    BOOST_CHECK_EQUAL(r.err().code, domain::ec::llm_unavailable);
    BOOST_CHECK_EQUAL(t.stub.requests(), 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
