// Routing a request that was read, handing it to the service and
// rendering what comes back (see net/session.hpp). The service writes the
// row of every question it answers; the session writes only the rows of
// requests that end in an HTTP error here.

#include "net/session.hpp"

#include "data/clock.hpp"
#include "domain/conversation.hpp"
#include "domain/api/api_json.hpp"
#include "data/log.hpp"
#include "domain/records.hpp"

namespace candor::net::detail {

/// Routing as far as the header decides it: the target, the route, the
/// method and, for /ask, the media type. A refusal is kept in `refusal_`
/// and sent once the body is read (or at once, see on_header).
void session::route_from_header() {
  auto& req = parser_->get();
  auto refuse = [this](domain::error e, error_opts o = {}) {
    refusal_.emplace(refusal{std::move(e), o});
  };
  auto tgt = parse_target(req.target());
  if (!tgt) {
    refuse(tgt.err());
    return;
  }
  ctx_.route = match_route(tgt->path, run_id_);
  if (ctx_.route == route_id::unknown) {
    refuse(
      domain::make_error(domain::ec::not_found, "no route for " + tgt->path));
    return;
  }
  auto allow = allowed_methods(ctx_.route);
  if (!method_allowed(ctx_.route, req.method_string())) {
    refuse(domain::make_error(domain::ec::method_not_allowed,
                              "method " + ctx_.method + " is not allowed on "
                                + tgt->path),
           allowing(allow));
    return;
  }
  bool takes_json
    = ctx_.route == route_id::ask || ctx_.route == route_id::v1_chat
      || (ctx_.route == route_id::mcp && req.method() == http::verb::post);
  if (takes_json && !is_json_media_type(req[http::field::content_type])) {
    refuse(domain::make_error(domain::ec::unsupported_media_type,
                              "Content-Type must be application/json"));
    return;
  }
  if (takes_json && !tgt->query.empty()) {
    auto e
      = domain::make_error(domain::ec::invalid_request,
                           "POST " + tgt->path + " takes no query parameters");
    for (const auto& kv : tgt->query)
      e.issues.push_back({kv.first, "unknown parameter"});
    refuse(std::move(e));
    return;
  }
  target_ = std::move(*tgt);
}

void session::send_refusal() {
  auto r = std::move(*refusal_);
  refusal_.reset();
  send_error(r.err, r.opts);
}

void session::handle_request() {
  waiting_since_.store(0, std::memory_order_relaxed); // a whole request
  if (refusal_) {
    send_refusal();
    return;
  }
  std::string id = std::move(run_id_);
  if ((ctx_.route == route_id::stats || ctx_.route == route_id::metrics
       || ctx_.route == route_id::runs)
      && !operator_allowed())
    return;
  // What answers questions needs a key once keys exist: /ask, the
  // OpenAI-compatible endpoint (whose clients send the key as their API
  // key) and the demo questions.
  if ((ctx_.route == route_id::ask || ctx_.route == route_id::demo_questions
       || ctx_.route == route_id::v1_chat || ctx_.route == route_id::v1_models
       || ctx_.route == route_id::v1_model || ctx_.route == route_id::mcp
       || ctx_.route == route_id::conversations)
      && !key_allowed())
    return;
  switch (ctx_.route) {
    case route_id::ask: handle_ask(); return;
    case route_id::stats: handle_stats(target_); return;
    case route_id::metrics:
      log_read();
      send(http::status::ok, srv_.svc.metrics() + srv_.keys.metrics(),
           "text/plain; version=0.0.4; charset=utf-8");
      return;
    case route_id::health:
      begin_service_call(false);
      srv_.svc.health(text_callback());
      return;
    case route_id::runs:
      if (!valid_request_id(id)) {
        send_error(
          domain::make_error(domain::ec::not_found, "no run with that id"));
        return;
      }
      if (!try_begin_service_call())
        return;
      srv_.svc.run(std::move(id), text_callback());
      return;
    case route_id::conversations:
      // The key's own conversations only: another key's is a 404, like
      // one that never was or has expired.
      if (!domain::valid_conversation_id(id)) {
        send_error(domain::make_error(domain::ec::not_found,
                                      "no conversation with that id"));
        return;
      }
      if (!try_begin_service_call())
        return;
      srv_.svc.conversation(std::move(id), ctx_.key_name, text_callback());
      return;
    case route_id::demo_questions:
      if (!try_begin_service_call())
        return;
      srv_.svc.demo_questions(text_callback());
      return;
    case route_id::admin_reindex: handle_reindex(); return;
    case route_id::page: handle_page(); return;
    case route_id::v1_models:
    case route_id::v1_model: handle_models(id); return;
    case route_id::v1_chat: handle_chat(); return;
    case route_id::mcp: handle_mcp(); return;
    case route_id::unknown: break;
  }
}

/// GET / and the page's assets: compiled-in bytes, sent with the CSP
/// (a read: a log line, no ledger row).
void session::handle_page() {
  auto asset = find_page_asset(target_.path);
  if (!asset) {
    send_error(domain::make_error(domain::ec::not_found,
                                  "no route for " + target_.path));
    return;
  }
  log_read();
  error_fields fields;
  fields.emplace_back("Content-Security-Policy", page_csp);
  write(http::status::ok, std::string{asset->body}, asset->content_type,
        fields);
}

/// X-Candor-Chaos, when llm.allowChaos is on: false (and a 400 sent) for
/// an unknown mode.
bool session::read_chaos(domain::ask_request& ask) {
  if (!srv_.cfg.llm.allow_chaos)
    return true;
  auto& req = parser_->get();
  auto it = req.find("X-Candor-Chaos");
  if (it == req.end()
      || domain::parse_chaos(std::string_view{it->value()}, ask.chaos))
    return true;
  auto e
    = domain::make_error(domain::ec::invalid_request, "unknown chaos mode");
  e.issues.push_back(
    {"headers.X-Candor-Chaos",
     "must be primary_timeout_once, primary_down or all_down"});
  send_error(std::move(e));
  return false;
}

void session::handle_ask() {
  auto parsed = domain::parse_ask_body(parser_->get().body());
  if (!parsed) {
    send_error(parsed.err());
    return;
  }
  // Accept: text/event-stream: progress events, then the same body.
  sse_ = accepts_event_stream(parser_->get()[http::field::accept]);
  submit_ask(std::move(*parsed), &session::on_ask);
}

void session::submit_ask(
  domain::ask_request ask,
  void (session::*done)(domain::outcome<domain::ask_box>)) {
  ctx_.question = ask.question;
  if (!read_chaos(ask))
    return;
  ask.request_id = ctx_.request_id;
  ask.received_us = ctx_.ts_us;
  ask.method = ctx_.method;
  ask.path = ctx_.path;
  ask.key_name = ctx_.key_name;
  // Every question on /ask is a turn of a conversation: a new one unless
  // the client named one.
  if (ctx_.route == route_id::ask && ask.conversation_id.empty())
    ask.conversation_id = data::new_conversation_id();
  if (ctx_.id_replaced)
    ask.warnings.emplace_back("request_id_replaced");
  if (!try_begin_service_call()) {
    sse_ = false;
    return;
  }
  // From here on a client that hangs up cancels the question (net/stream).
  control_ = std::make_shared<domain::request_control>();
  if (sse_) {
    control_->progress
      = make_callback<domain::progress_event>(&session::on_progress);
    begin_stream();
  }
  using ask_result = domain::outcome<domain::ask_box>;
  srv_.svc.ask_controlled(std::move(ask), make_callback<ask_result>(done),
                          control_);
  start_watch();
}

/// POST /admin/reindex: reloads the retrieval index. Disabled (404)
/// unless CANDOR_RETRIEVAL_ADMIN_TOKEN is set; the bearer token is
/// compared in constant time.
void session::handle_reindex() {
  const auto& expected = srv_.cfg.retrieval.admin_token;
  if (expected.empty()) {
    send_error(domain::make_error(
      domain::ec::not_found,
      "re-indexing over HTTP is disabled: set "
      "CANDOR_RETRIEVAL_ADMIN_TOKEN to enable POST /admin/reindex"));
    return;
  }
  auto& req = parser_->get();
  auto given = bearer_token(req[http::field::authorization]);
  if (given.empty() || !constant_time_equal(given, expected)) {
    error_opts o;
    o.www_authenticate = true;
    send_error(domain::make_error(domain::ec::unauthorized,
                                  "a valid bearer token is required"),
               o);
    return;
  }
  data::log_event(data::log_level::info, "reindex_requested",
                  {{"requestId", ctx_.request_id}, {"via", "http"}});
  if (!try_begin_service_call())
    return;
  srv_.svc.reindex(text_callback());
}

bool session::operator_allowed() {
  const auto& expected = srv_.cfg.http.operator_token;
  if (expected.empty())
    return true; // bound to loopback (checked at startup)
  auto given = bearer_token(parser_->get()[http::field::authorization]);
  if (!given.empty() && constant_time_equal(given, expected))
    return true;
  error_opts o;
  o.www_authenticate = true;
  send_error(domain::make_error(domain::ec::unauthorized,
                                "this read needs the operator's bearer token "
                                "(http.operatorToken)"),
             o);
  return false;
}

bool session::key_allowed() {
  auto& gate = srv_.keys;
  if (!gate.enabled())
    return true; // no keys: the open behaviour (loopback, see app/main)
  auto token = bearer_token(parser_->get()[http::field::authorization]);
  auto v = gate.admit(token, std::chrono::steady_clock::now(), data::wall_us());
  using kind = key_verdict::kind;
  if (v.result == kind::ok) {
    ctx_.key_name = std::move(v.name);
    return true;
  }
  error_opts o;
  if (v.result == kind::missing || v.result == kind::invalid) {
    o.www_authenticate = true;
    send_error(domain::make_error(
                 domain::ec::unauthorized,
                 v.result == kind::missing
                   ? "an API key is required: 'Authorization: Bearer <key>' "
                     "(candor keys add)"
                   : "the API key is not valid (unknown or revoked)"),
               o);
    return false;
  }
  ctx_.key_name = std::move(v.name);
  o.retry_after_seconds = v.retry_after_s;
  send_error(domain::make_error(
               domain::ec::rate_limited,
               v.result == kind::rate_limited
                 ? "this API key's request rate is exceeded; retry after "
                     + std::to_string(v.retry_after_s) + " s"
                 : "this API key's model tokens for today are spent; retry "
                   "after UTC midnight"),
             o);
  return false;
}

void session::handle_stats(const target& tgt) {
  std::string since = "24h";
  auto e = domain::make_error(domain::ec::invalid_request,
                              "invalid query parameters");
  bool seen = false;
  for (const auto& [key, value] : tgt.query) {
    if (key != "since") {
      e.issues.push_back({key, "unknown parameter"});
    } else if (seen) {
      e.issues.push_back({"since", "given more than once"});
    } else {
      seen = true;
      since = value;
      if (!valid_stats_window(since))
        e.issues.push_back({"since", "must be one of 15m, 1h, 24h, 7d"});
    }
  }
  if (!e.issues.empty()) {
    send_error(std::move(e));
    return;
  }
  if (!try_begin_service_call())
    return;
  srv_.svc.stats(std::move(since), text_callback());
}

/// Takes an in-flight slot or answers 503 overloaded.
bool session::try_begin_service_call() {
  if (!srv_.acquire_slot()) {
    send_error(domain::make_error(domain::ec::overloaded,
                                  "too many requests in flight, retry "
                                  "later"),
               retry_later());
    return false;
  }
  begin_service_call(true);
  return true;
}

void session::begin_service_call(bool holds_slot) {
  slot_held_ = holds_slot;
  phase_ = phase::processing;
  pending_self_ = shared_from_this();
}

domain::service::text_callback session::text_callback() {
  return make_callback<domain::outcome<std::string>>(&session::on_text);
}

void session::end_service_call() {
  if (slot_held_) {
    slot_held_ = false;
    srv_.release_slot();
  }
}

/// The answer (or error) of /ask. The service wrote the request's row
/// and the finalize node validated the response: this only renders.
void session::charge_key(const domain::outcome<domain::ask_box>& r) {
  if (ctx_.key_name.empty())
    return;
  // The key's day: the model tokens the request spent, answered or not.
  int64_t tokens = 0;
  if (r)
    tokens = (**r).usage.tokens_in + (**r).usage.tokens_out;
  else if (r.err().spent)
    tokens = r.err().spent->tokens;
  srv_.keys.spent(ctx_.key_name, tokens, data::wall_us());
}

bool session::end_ask(const domain::outcome<domain::ask_box>& r) {
  stop_watch();
  control_.reset();
  end_service_call();
  ctx_.recorded = true;
  charge_key(r);
  if (hung_up_) {
    do_close(false); // nobody to answer: the row says `cancelled`
    return false;
  }
  return true;
}

bool session::settle_ask(const domain::outcome<domain::ask_box>& r) {
  if (!end_ask(r))
    return false;
  if (!r) {
    if (sse_)
      stream_finish("error", domain::error_body(r.err(), ctx_.request_id));
    else
      send_error(r.err());
  }
  return r.ok();
}

void session::on_ask(domain::outcome<domain::ask_box> r) {
  auto self = std::move(pending_self_);
  if (!settle_ask(r))
    return;
  if (sse_)
    stream_finish("result", domain::response_text(**r));
  else
    send(http::status::ok, domain::response_text(**r), "application/json");
}

void session::on_text(domain::outcome<std::string> r) {
  auto self = std::move(pending_self_);
  end_service_call();
  if (!r) {
    send_error(r.err());
    return;
  }
  log_read();
  send(http::status::ok, std::move(*r), "application/json");
}

/// The row of a request that ended in an HTTP error here, before or
/// outside the graph (the graph's requests are recorded by the service).
void session::record_error(int status, std::string_view error) {
  if (ctx_.recorded)
    return;
  ctx_.recorded = true;
  srv_.svc.record_error(make_record(status, error));
}

/// A successful answer on the other routes (/stats, /metrics, /health,
/// /runs, /demo/questions, /admin/reindex) gets the log line every
/// request gets, but no ledger row and no request metric: /stats and the
/// request counters are about the API's work (/ask) and every error, not
/// about scrapes of them.
void session::log_read() {
  if (ctx_.recorded)
    return;
  ctx_.recorded = true;
  data::log_request(make_record(200, {}));
}

domain::request_record session::make_record(int status,
                                            std::string_view error) const {
  domain::ask_request req;
  req.request_id = ctx_.request_id;
  req.received_us = ctx_.ts_us != 0 ? ctx_.ts_us : data::wall_us();
  req.method = ctx_.method;
  req.path = ctx_.path;
  req.question = ctx_.question;
  if (ctx_.id_replaced)
    req.warnings.emplace_back("request_id_replaced");
  int64_t latency_us = 0;
  if (ctx_.start != std::chrono::steady_clock::time_point{})
    latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - ctx_.start)
                   .count();
  req.key_name = ctx_.key_name;
  auto rec = domain::request_row(req, status, latency_us);
  rec.error = std::string{error};
  return rec;
}

} // namespace candor::net::detail
