// One HTTP connection of the server: reading with deadlines and limits,
// routing, the hand-off to the service and the error contract.

#include "net/server_impl.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/container/small_vector.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include "domain/api_json.hpp"
#include "domain/log.hpp"
#include "domain/log_mask.hpp"
#include "domain/records.hpp"
#include "net/http_util.hpp"

namespace candor::net {

namespace http = beast::http;

namespace {

constexpr size_t header_limit_bytes = 8192;
constexpr std::string_view continue_100 = "HTTP/1.1 100 Continue\r\n\r\n";

std::chrono::milliseconds ms(int64_t x) {
  return std::chrono::milliseconds{std::max<int64_t>(x, 1)};
}

const boost::system::error_category& http_category() {
  return http::make_error_code(http::error::end_of_stream).category();
}

} // namespace

namespace detail {

// -- one connection -----------------------------------------------------------

/// What is known about the request being served, for the response headers
/// and the ledger row.
struct request_ctx {
  std::string request_id;
  bool id_replaced = false;
  int64_t ts_us = 0;
  std::chrono::steady_clock::time_point start;
  std::string method;
  std::string path;
  std::string question;
  route_id route = route_id::unknown;
  unsigned version = 11;
  bool keep_alive = true;
  bool head = false; ///< HEAD: the response's head only
  bool recorded = false;
};

/// Extra response headers for errors.
struct error_opts {
  std::string_view allow;
  bool www_authenticate = false;
  bool retry_after = false;
  bool close = false;
};

error_opts closing() {
  error_opts o;
  o.close = true;
  return o;
}

error_opts retry_later() {
  error_opts o;
  o.retry_after = true;
  return o;
}

error_opts allowing(std::string_view methods) {
  error_opts o;
  o.allow = methods;
  return o;
}

class session : public std::enable_shared_from_this<session> {
public:
  session(server::impl& srv, std::shared_ptr<hub> h, uint64_t id,
          strand_socket&& socket)
    : srv_(srv), hub_(std::move(h)), id_(id), stream_(std::move(socket)) {
    // nop
  }

  /// May run while the server is being destroyed (pending handlers are
  /// destroyed with the io_context): then `hub_->open` is false and `srv_`
  /// is not touched.
  ~session() {
    bool notify = false;
    {
      std::lock_guard<std::mutex> guard{hub_->mtx};
      hub_->sessions.erase(id_);
      notify = hub_->open && hub_->stopping && hub_->sessions.empty();
    }
    if (notify) {
      auto* srv = &srv_;
      asio::post(srv_.control, [srv] { srv->maybe_finish(); });
    }
  }

  void start() {
    asio::dispatch(stream_.get_executor(),
                   beast::bind_front_handler(&session::do_read_request,
                                             shared_from_this()));
  }

  /// Graceful stop (on the session's strand): an idle connection closes now,
  /// a request being read or processed is answered with Connection: close.
  void shutdown() {
    stopping_ = true;
    if (phase_ == phase::idle)
      stream_.cancel();
  }

  /// Server destruction (no Asio thread runs): breaks the self-reference of
  /// a request still waiting for the service.
  void abandon() {
    beast::error_code ec;
    stream_.socket().close(ec);
    pending_self_.reset();
  }

  auto executor() {
    return stream_.get_executor();
  }

private:
  enum class phase { idle, reading, processing, writing, closed };

  // -- reading ----------------------------------------------------------------

  void do_read_request() {
    parser_.emplace();
    parser_->header_limit(header_limit_bytes);
    // No limit while the header is read: a Content-Length over the limit is
    // refused in on_header, which then knows the request's id; the limit
    // is set there for a chunked body.
    parser_->body_limit(boost::none);
    ctx_ = request_ctx{};
    refusal_.reset();
    run_id_.clear();
    skipped_ = 0;
    linger_ = false;
    phase_ = phase::idle;
    if (stopping_ || srv_.draining.load()) {
      do_close(false);
      return;
    }
    if (skip_empty_lines()) {
      start_header();
      return;
    }
    wait_first_bytes();
  }

  /// Idle keep-alive: waits for the first byte of the next request.
  void wait_first_bytes() {
    stream_.expires_after(ms(srv_.cfg.http.idle_timeout_ms));
    stream_.async_read_some(buffer_.prepare(4096),
                            beast::bind_front_handler(&session::on_first_bytes,
                                                      shared_from_this()));
  }

  void on_first_bytes(beast::error_code ec, size_t n) {
    if (ec) {
      do_close(false);
      return;
    }
    buffer_.commit(n);
    if (skip_empty_lines())
      start_header();
    else
      wait_first_bytes();
  }

  /// RFC 9112 §2.2: empty lines before a request line are ignored. True
  /// when bytes of a request remain buffered. At most 64 bytes are skipped
  /// per request; the parser refuses the rest ("bad method").
  bool skip_empty_lines() {
    auto bytes = buffer_.data();
    auto* data = static_cast<const char*>(bytes.data());
    size_t n = 0;
    while (n < bytes.size() && skipped_ + n < 64
           && (data[n] == '\r' || data[n] == '\n'))
      ++n;
    buffer_.consume(n);
    skipped_ += n;
    return buffer_.size() > 0;
  }

  /// Feeds the bytes already buffered to the parser, without waiting for
  /// more. False when the parser needs more bytes than there are; true when
  /// it stopped at the end of the header (or, eager, of the message) or on
  /// an error, which is then in `ec`.
  bool parse_buffered(beast::error_code& ec) {
    if (buffer_.size() == 0)
      return false;
    auto n = parser_->put(buffer_.data(), ec);
    buffer_.consume(n);
    if (ec == http::error::need_more) {
      ec = {};
      return false;
    }
    return true;
  }

  void start_header() {
    phase_ = phase::reading;
    ctx_.ts_us = domain::wall_us();
    ctx_.start = std::chrono::steady_clock::now();
    // A request nearly always arrives whole with its first bytes: what is
    // buffered is parsed here, and only a header still incomplete is read
    // asynchronously (an asynchronous read completes through a post to the
    // strand even when the bytes are already in the buffer).
    beast::error_code ec;
    if (parse_buffered(ec) && (ec || parser_->is_header_done())) {
      on_header(ec, 0);
      return;
    }
    // The header must be complete within header_timeout_ms of its first
    // byte; a client that trickles bytes is cut off.
    stream_.expires_after(ms(srv_.cfg.http.header_timeout_ms));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&session::on_header,
                                                      shared_from_this()));
  }

  /// What the header parsed so far says about the request: method, path,
  /// version, keep-alive and the request id. Also called after a parse
  /// error, with the fields read before it.
  void note_header() {
    auto& req = parser_->get();
    ctx_.method = std::string{req.method_string()};
    ctx_.head = req.method() == http::verb::head;
    auto raw = std::string_view{req.target()};
    ctx_.path = std::string{raw.substr(0, raw.find('?'))};
    ctx_.version = req.version() >= 11 ? 11 : 10;
    // Every Connection field counts (Beast's keep_alive() reads the first
    // only, and in HTTP/1.0 ignores "close" beside "keep-alive").
    boost::container::small_vector<std::string_view, 2> connection;
    for (auto [it, end] = req.equal_range(http::field::connection); it != end;
         ++it)
      connection.push_back(it->value());
    ctx_.keep_alive = wants_keep_alive(ctx_.version, connection);
    if (auto it = req.find("X-Request-Id"); it != req.end()) {
      auto given = std::string_view{it->value()};
      if (valid_request_id(given)) {
        ctx_.request_id = std::string{given};
      } else {
        ctx_.request_id = domain::new_request_id();
        ctx_.id_replaced = true;
      }
    } else {
      ctx_.request_id = domain::new_request_id();
    }
  }

  void on_header(beast::error_code ec, size_t) {
    if (ec) {
      on_read_error(ec);
      return;
    }
    note_header();
    auto& req = parser_->get();
    // A framing that cannot be trusted is answered with the connection
    // closed, before a byte of the body is read.
    boost::container::small_vector<std::string_view, 2> codings;
    for (auto [it, end] = req.equal_range(http::field::transfer_encoding);
         it != end; ++it)
      codings.push_back(it->value());
    if (auto bad = check_framing(ctx_.version, codings,
                                 req.count(http::field::host))) {
      linger_ = true;
      send_error(*bad, closing());
      return;
    }
    // Refuse an oversized body before reading it.
    auto limit = static_cast<uint64_t>(
      std::max<int64_t>(srv_.cfg.http.body_limit_bytes, 0));
    auto len = parser_->content_length();
    if (len && *len > limit) {
      linger_ = true;
      send_error(too_large(), closing());
      return;
    }
    parser_->body_limit(limit);
    route_from_header();
    // An HTTP/1.0 client is never sent "100 Continue" (RFC 9110 §10.1.1).
    if (ctx_.version >= 11
        && beast::iequals(req[http::field::expect], "100-continue")) {
      // The client waits for "100 Continue" before sending the body: a
      // request the header already refuses is answered now (and the
      // connection closed, as the body may follow anyway).
      if (refusal_) {
        linger_ = true;
        refusal_->opts.close = true;
        send_refusal();
        return;
      }
      stream_.expires_after(ms(srv_.cfg.http.body_timeout_ms));
      asio::async_write(stream_, asio::buffer(continue_100),
                        beast::bind_front_handler(&session::on_continue,
                                                  shared_from_this()));
      return;
    }
    read_body();
  }

  void on_continue(beast::error_code ec, size_t) {
    if (ec) {
      do_close(false);
      return;
    }
    read_body();
  }

  void read_body() {
    // As for the header: a body already buffered (or no body at all) needs
    // no asynchronous read. Eager: parse past chunk boundaries to the end.
    parser_->eager(true);
    beast::error_code ec;
    if (parser_->is_done()
        || (parse_buffered(ec) && (ec || parser_->is_done()))) {
      on_body(ec, 0);
      return;
    }
    stream_.expires_after(ms(srv_.cfg.http.body_timeout_ms));
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&session::on_body,
                                               shared_from_this()));
  }

  void on_body(beast::error_code ec, size_t) {
    if (ec) {
      on_read_error(ec);
      return;
    }
    stream_.expires_never();
    handle_request();
  }

  /// Socket errors, timeouts and a client that went away close the
  /// connection; malformed or oversized requests get an error first.
  void on_read_error(beast::error_code ec) {
    if (ec.category() != http_category() || ec == http::error::end_of_stream
        || ec == http::error::partial_message) {
      if (ec == beast::error::timeout) {
        bool body = parser_->is_header_done();
        boost::json::object fields{{"phase", body ? "body" : "header"}};
        if (body)
          fields["requestId"] = ctx_.request_id;
        domain::log_event(domain::log_level::info, "http_read_timeout",
                          std::move(fields));
      }
      do_close(false);
      return;
    }
    // The start line and the fields before the error are in the message:
    // the answer carries the client's request id when it gave one.
    if (ctx_.request_id.empty() && !parser_->get().method_string().empty())
      note_header();
    if (ctx_.request_id.empty())
      ctx_.request_id = domain::new_request_id();
    linger_ = true;
    if (ec == http::error::body_limit) {
      send_error(too_large(), closing());
    } else if (ec == http::error::header_limit) {
      // The request line is too long when the parser did not get past it
      // and the buffered bytes (then still the whole request) hold no line
      // end; otherwise the fields are.
      auto bytes = buffer_.data();
      std::string_view seen{static_cast<const char*>(bytes.data()),
                            bytes.size()};
      bool line_ended = !parser_->get().method_string().empty()
                        || seen.find('\n') != std::string_view::npos;
      send_error(domain::make_error(
                   line_ended ? domain::ec::header_too_large
                              : domain::ec::uri_too_long,
                   std::string{line_ended ? "request header fields are"
                                          : "request line is"}
                     + " too large (the header's limit is "
                     + std::to_string(header_limit_bytes) + " bytes)"),
                 closing());
    } else {
      send_error(domain::make_error(domain::ec::invalid_request,
                                    "malformed HTTP request: " + ec.message()),
                 closing());
    }
  }

  domain::error too_large() const {
    return domain::make_error(domain::ec::payload_too_large,
                              "request body exceeds "
                                + std::to_string(
                                  srv_.cfg.http.body_limit_bytes)
                                + " bytes");
  }

  // -- routing ----------------------------------------------------------------

  /// Routing as far as the header decides it: the target, the route, the
  /// method and, for /ask, the media type. A refusal is kept in `refusal_`
  /// and sent once the body is read (or at once, see on_header).
  void route_from_header() {
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
      refuse(domain::make_error(domain::ec::not_found,
                                "no route for " + tgt->path));
      return;
    }
    auto allow = allowed_methods(ctx_.route);
    if (!method_allowed(ctx_.route, req.method_string())) {
      refuse(domain::make_error(domain::ec::method_not_allowed,
                                "method " + ctx_.method
                                  + " is not allowed on " + tgt->path),
             allowing(allow));
      return;
    }
    if (ctx_.route == route_id::ask
        && !is_json_media_type(req[http::field::content_type])) {
      refuse(domain::make_error(domain::ec::unsupported_media_type,
                                "Content-Type must be application/json"));
      return;
    }
    if (ctx_.route == route_id::ask && !tgt->query.empty()) {
      auto e = domain::make_error(domain::ec::invalid_request,
                                  "POST /ask takes no query parameters");
      for (const auto& kv : tgt->query)
        e.issues.push_back({kv.first, "unknown parameter"});
      refuse(std::move(e));
      return;
    }
    target_ = std::move(*tgt);
  }

  void send_refusal() {
    auto r = std::move(*refusal_);
    refusal_.reset();
    send_error(r.err, r.opts);
  }

  void handle_request() {
    if (refusal_) {
      send_refusal();
      return;
    }
    std::string id = std::move(run_id_);
    switch (ctx_.route) {
      case route_id::ask:
        handle_ask();
        return;
      case route_id::stats:
        handle_stats(target_);
        return;
      case route_id::metrics:
        log_read();
        send(http::status::ok, srv_.svc.metrics(),
             "text/plain; version=0.0.4; charset=utf-8");
        return;
      case route_id::health:
        begin_service_call(false);
        srv_.svc.health(text_callback());
        return;
      case route_id::runs:
        if (!valid_request_id(id)) {
          send_error(domain::make_error(domain::ec::not_found,
                                        "no run with that id"));
          return;
        }
        if (!try_begin_service_call())
          return;
        srv_.svc.run(std::move(id), text_callback());
        return;
      case route_id::demo_questions:
        if (!try_begin_service_call())
          return;
        srv_.svc.demo_questions(text_callback());
        return;
      case route_id::admin_reindex:
        handle_reindex();
        return;
      case route_id::page:
        handle_page();
        return;
      case route_id::unknown:
        break;
    }
  }

  /// GET / and the page's assets: compiled-in bytes, sent with the CSP
  /// (a read: a log line, no ledger row).
  void handle_page() {
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

  void handle_ask() {
    auto& req = parser_->get();
    auto parsed = domain::parse_ask_body(req.body());
    if (!parsed) {
      send_error(parsed.err());
      return;
    }
    auto ask = std::move(*parsed);
    ctx_.question = ask.question;
    if (srv_.cfg.llm.allow_chaos) {
      if (auto it = req.find("X-Candor-Chaos"); it != req.end()
          && !domain::parse_chaos(std::string_view{it->value()}, ask.chaos)) {
        auto e = domain::make_error(domain::ec::invalid_request,
                                    "unknown chaos mode");
        e.issues.push_back(
          {"headers.X-Candor-Chaos",
           "must be primary_timeout_once, primary_down or all_down"});
        send_error(std::move(e));
        return;
      }
    }
    ask.request_id = ctx_.request_id;
    ask.received_us = ctx_.ts_us;
    if (ctx_.id_replaced)
      ask.warnings.emplace_back("request_id_replaced");
    if (!try_begin_service_call())
      return;
    using ask_result = domain::outcome<domain::ask_box>;
    srv_.svc.ask(std::move(ask), make_callback<ask_result>(&session::on_ask));
  }

  /// POST /admin/reindex: reloads the retrieval index. Disabled (404)
  /// unless CANDOR_RETRIEVAL_ADMIN_TOKEN is set; the bearer token is
  /// compared in constant time.
  void handle_reindex() {
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
    domain::log_event(domain::log_level::info, "reindex_requested",
                      {{"requestId", ctx_.request_id}, {"via", "http"}});
    if (!try_begin_service_call())
      return;
    srv_.svc.reindex(text_callback());
  }

  void handle_stats(const target& tgt) {
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

  // -- the hand-off to the service --------------------------------------------

  /// Takes an in-flight slot or answers 503 overloaded.
  bool try_begin_service_call() {
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

  void begin_service_call(bool holds_slot) {
    slot_held_ = holds_slot;
    phase_ = phase::processing;
    pending_self_ = shared_from_this();
  }

  /// A service callback: from whatever thread it runs on, it only posts the
  /// result to this session's strand, and only while the server exists.
  template <class Result>
  std::function<void(Result)> make_callback(void (session::*fn)(Result)) {
    return [h = hub_, w = weak_from_this(), fn](Result r) {
      std::lock_guard<std::mutex> guard{h->mtx};
      if (!h->open)
        return;
      auto s = w.lock();
      if (!s)
        return;
      auto ex = s->executor();
      asio::post(ex, [s = std::move(s), r = std::move(r), fn]() mutable {
        ((*s).*fn)(std::move(r));
      });
    };
  }

  domain::service::text_callback text_callback() {
    return make_callback<domain::outcome<std::string>>(&session::on_text);
  }

  void end_service_call() {
    if (slot_held_) {
      slot_held_ = false;
      srv_.release_slot();
    }
  }

  void on_ask(domain::outcome<domain::ask_box> r) {
    auto self = std::move(pending_self_);
    end_service_call();
    if (!r) {
      send_error(r.err());
      return;
    }
    auto& st = **r;
    // The finalize node validated the state already (`validated`); a state
    // that did not pass through it is checked here before it is written.
    if (!st.validated) {
      auto issues = domain::validate_response(domain::to_json(st));
      if (!issues.empty()) {
        boost::json::array list;
        for (const auto& i : issues)
          list.emplace_back(i.path + ": " + i.message);
        domain::log_event(domain::log_level::error, "response_invalid",
                          {{"requestId", ctx_.request_id},
                           {"issues", std::move(list)}});
        send_error(domain::make_error(domain::ec::internal,
                                      "the response failed validation"));
        return;
      }
    }
    record(200, &st, {});
    send(http::status::ok, domain::response_text(st), "application/json");
  }

  void on_text(domain::outcome<std::string> r) {
    auto self = std::move(pending_self_);
    end_service_call();
    if (!r) {
      send_error(r.err());
      return;
    }
    log_read();
    send(http::status::ok, std::move(*r), "application/json");
  }

  // -- writing ----------------------------------------------------------------

  /// One ledger row per /ask and per HTTP error.
  void record(int status, const domain::ask_state* st,
              std::string_view error,
              const domain::spent_so_far* spent = nullptr) {
    if (ctx_.recorded)
      return;
    ctx_.recorded = true;
    auto rec = make_record(status, st, error);
    if (spent != nullptr) {
      rec.route = spent->route;
      rec.llm_calls = static_cast<int32_t>(spent->llm_calls);
      rec.tokens = spent->tokens;
      rec.cost_usd = spent->cost_usd;
    }
    srv_.svc.completed(std::move(rec));
  }

  /// A successful answer on the other routes (/stats, /metrics, /health,
  /// /runs, /demo/questions, /admin/reindex) gets the log line every
  /// request gets, but no ledger row and no request metric: /stats and the
  /// request counters are about the API's work (/ask) and every error, not
  /// about scrapes of them.
  void log_read() {
    if (ctx_.recorded)
      return;
    ctx_.recorded = true;
    domain::log_request(make_record(200, nullptr, {}));
  }

  domain::request_record make_record(int status, const domain::ask_state* st,
                                     std::string_view error) const {
    domain::request_record rec;
    rec.request_id = ctx_.request_id;
    rec.ts_us = ctx_.ts_us != 0 ? ctx_.ts_us : domain::wall_us();
    rec.method = ctx_.method;
    rec.path = ctx_.path;
    rec.http_status = status;
    rec.error = std::string{error};
    if (ctx_.start != std::chrono::steady_clock::time_point{})
      rec.latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                         std::chrono::steady_clock::now() - ctx_.start)
                         .count();
    // Masked like the log line: /runs serves the ledger's copy.
    rec.question = domain::cut_utf8(ctx_.question, 200);
    if (domain::may_hold_secret(rec.question)) // a copy only when needed
      rec.question = domain::mask_secrets(rec.question);
    if (st != nullptr) {
      domain::record_outcome(rec, *st);
    } else if (ctx_.id_replaced) {
      rec.warnings.emplace_back("request_id_replaced");
    }
    return rec;
  }

  void send_error(const domain::error& e, error_opts opts = {}) {
    if (ctx_.request_id.empty())
      ctx_.request_id = domain::new_request_id();
    auto status = http_status(e.code);
    record(status, nullptr, domain::to_string(e.code),
           e.spent ? &*e.spent : nullptr);
    error_fields fields;
    if (!opts.allow.empty())
      fields.emplace_back("Allow", opts.allow);
    if (opts.www_authenticate)
      fields.emplace_back("WWW-Authenticate", "Bearer realm=\"candor\"");
    std::string retry_after;
    // Every 503 says when to come back: overloaded, or no model reachable.
    if (opts.retry_after || status == 503) {
      retry_after = std::to_string(srv_.cfg.http.retry_after_seconds);
      fields.emplace_back("Retry-After", retry_after);
    }
    if (opts.close)
      ctx_.keep_alive = false;
    write(static_cast<http::status>(status),
          domain::error_body(e, ctx_.request_id), "application/json", fields);
  }

  void send(http::status status, std::string body,
            std::string_view content_type) {
    write(status, std::move(body), content_type, {});
  }

  using error_fields = boost::container::small_vector<header_field, 3>;

  /// Writes the response: `extra` fields (an error's), then the fields
  /// every response has. The head is written here, in the order and bytes
  /// Beast's serializer gives the same message (net/http_util), and sent
  /// with the body in one gather write; a Beast response object cost an
  /// allocation per field and its serializer about 20k instructions.
  void write(http::status status, std::string body,
             std::string_view content_type, const error_fields& extra) {
    keep_alive_ = ctx_.keep_alive && !stopping_ && !srv_.draining.load();
    body_ = std::move(body);
    phase_ = phase::writing;
    stream_.expires_after(ms(srv_.cfg.http.body_timeout_ms));
    auto length = std::to_string(body_.size());
    boost::container::small_vector<header_field, 12> fields(extra.begin(),
                                                            extra.end());
    fields.emplace_back("Content-Type", content_type);
    fields.emplace_back("X-Request-Id", ctx_.request_id);
    fields.emplace_back("X-Content-Type-Options", "nosniff");
    fields.emplace_back("Cache-Control", "no-store");
    if (!keep_alive_)
      fields.emplace_back("Connection", "close");
    else if (ctx_.version < 11)
      fields.emplace_back("Connection", "keep-alive");
    fields.emplace_back("Content-Length", length);
    head_.clear();
    append_response_head(head_, static_cast<unsigned>(status),
                         http::obsolete_reason(status), fields);
    // HEAD: the head a GET would get, Content-Length included, no body.
    if (ctx_.head)
      body_.clear();
    std::array<asio::const_buffer, 2> bufs{asio::buffer(head_),
                                           asio::buffer(body_)};
    asio::async_write(stream_, bufs,
                      beast::bind_front_handler(&session::on_write,
                                                shared_from_this()));
  }

  void on_write(beast::error_code ec, size_t) {
    if (ec) {
      do_close(false);
      return;
    }
    if (!keep_alive_ || stopping_) {
      do_close(linger_);
      return;
    }
    do_read_request();
  }

  // -- closing ----------------------------------------------------------------

  /// Half-closes; with `linger`, drains what the client still sends for a
  /// moment so that it reads the error instead of a reset.
  void do_close(bool linger) {
    phase_ = phase::closed;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (!linger || ec) {
      stream_.socket().close(ec);
      return;
    }
    drained_ = 0;
    stream_.expires_after(std::chrono::milliseconds{500});
    do_drain();
  }

  void do_drain() {
    stream_.async_read_some(asio::buffer(drain_),
                            beast::bind_front_handler(&session::on_drain,
                                                      shared_from_this()));
  }

  void on_drain(beast::error_code ec, size_t n) {
    drained_ += n;
    if (ec || drained_ > (1u << 20)) {
      beast::error_code ignored;
      stream_.socket().close(ignored);
      return;
    }
    do_drain();
  }

  server::impl& srv_;
  std::shared_ptr<hub> hub_;
  uint64_t id_;
  beast::basic_stream<tcp, strand_t> stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  /// The response being written: status line and fields, body, and
  /// whether the connection stays open after it (see write()).
  std::string head_;
  std::string body_;
  bool keep_alive_ = true;
  request_ctx ctx_;
  /// The request's target and /runs id, and the error the header already
  /// decided (see route_from_header).
  target target_;
  std::string run_id_;
  struct refusal {
    domain::error err;
    error_opts opts;
  };
  std::optional<refusal> refusal_;
  /// Empty-line bytes skipped before this request (skip_empty_lines).
  size_t skipped_ = 0;
  phase phase_ = phase::idle;
  bool stopping_ = false;
  bool linger_ = false;
  bool slot_held_ = false;
  /// Keeps the session alive while the service works on its request (no
  /// Asio operation is pending then).
  std::shared_ptr<session> pending_self_;
  std::array<char, 4096> drain_{};
  size_t drained_ = 0;
};

} // namespace detail

namespace detail {

std::shared_ptr<session> make_session(server::impl& srv,
                                      std::shared_ptr<hub> h, uint64_t id,
                                      strand_socket&& socket) {
  return std::make_shared<session>(srv, std::move(h), id, std::move(socket));
}

void start_session(const std::shared_ptr<session>& s) {
  s->start();
}

void shutdown_session(std::shared_ptr<session> s) {
  auto ex = s->executor();
  asio::post(ex, [s = std::move(s)] { s->shutdown(); });
}

void abandon_session(const std::shared_ptr<session>& s) {
  s->abandon();
}

} // namespace detail

} // namespace candor::net
