// Reading a request with deadlines and limits, and closing the connection
// (see net/session.hpp; routing is in net/routes.cpp, writing in
// net/response.cpp).

#include "net/session.hpp"

#include "data/clock.hpp"
#include "domain/api/api_json.hpp"
#include "data/log.hpp"

namespace candor::net::detail {

namespace {

constexpr std::string_view continue_100 = "HTTP/1.1 100 Continue\r\n\r\n";

const boost::system::error_category& http_category() {
  return http::make_error_code(http::error::end_of_stream).category();
}

/// The steady clock in milliseconds (never 0 on a running system).
int64_t steady_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

} // namespace

session::session(server::impl& srv, std::shared_ptr<hub> h, uint64_t id,
                 strand_socket&& socket, std::string peer)
    : srv_(srv), hub_(std::move(h)), id_(id), peer_(std::move(peer)),
      stream_(std::move(socket)) {
  // nop
}

/// May run while the server is being destroyed (pending handlers are
/// destroyed with the io_context): then `hub_->open` is false and `srv_`
/// is not touched.
session::~session() {
  bool notify = false;
  {
    std::lock_guard<std::mutex> guard{hub_->mtx};
    hub_->sessions.erase(id_);
    if (auto it = hub_->per_address.find(peer_);
        it != hub_->per_address.end() && --it->second <= 0)
      hub_->per_address.erase(it);
    if (shed_.load())
      --hub_->shedding;
    notify = hub_->open && hub_->stopping && hub_->sessions.empty();
  }
  if (notify) {
    auto* srv = &srv_;
    asio::post(srv_.control, [srv] { srv->maybe_finish(); });
  }
}

void session::start() {
  asio::dispatch(
    stream_.get_executor(),
    beast::bind_front_handler(&session::do_read_request, shared_from_this()));
}

/// Graceful stop (on the session's strand): an idle connection closes now,
/// a request being read or processed is answered with Connection: close.
void session::shutdown() {
  stopping_ = true;
  if (phase_ == phase::idle)
    stream_.cancel();
}

void session::shed() {
  if (phase_ != phase::idle && phase_ != phase::reading)
    return; // busy with a request by now: it finishes normally
  srv_.dropped("shed", peer_);
  beast::error_code ec;
  stream_.socket().close(ec); // the pending read ends, and with it the session
}

/// Server destruction (no Asio thread runs): breaks the self-reference of
/// a request still waiting for the service.
void session::abandon() {
  beast::error_code ec;
  stream_.socket().close(ec);
  pending_self_.reset();
}

void session::do_read_request() {
  if (watch_pending_) {
    // The watch of the last question still has its read outstanding (its
    // cancelled completion is on the way): this read waits for it.
    read_after_watch_ = true;
    return;
  }
  hung_up_ = false;
  sse_ = false;
  stream_closing_ = false;
  stream_out_.clear();
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
  waiting_since_.store(steady_ms(), std::memory_order_relaxed);
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
void session::wait_first_bytes() {
  stream_.expires_after(ms(srv_.cfg.http.idle_timeout_ms));
  stream_.async_read_some(
    buffer_.prepare(4096),
    beast::bind_front_handler(&session::on_first_bytes, shared_from_this()));
}

void session::on_first_bytes(beast::error_code ec, size_t n) {
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
bool session::skip_empty_lines() {
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
bool session::parse_buffered(beast::error_code& ec) {
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

void session::start_header() {
  phase_ = phase::reading;
  ctx_.ts_us = data::wall_us();
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
  http::async_read_header(
    stream_, buffer_, *parser_,
    beast::bind_front_handler(&session::on_header, shared_from_this()));
}

/// What the header parsed so far says about the request: method, path,
/// version, keep-alive and the request id. Also called after a parse
/// error, with the fields read before it.
void session::note_header() {
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
      ctx_.request_id = data::new_request_id();
      ctx_.id_replaced = true;
    }
  } else {
    ctx_.request_id = data::new_request_id();
  }
}

void session::on_header(beast::error_code ec, size_t) {
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
  if (auto bad
      = check_framing(ctx_.version, codings, req.count(http::field::host))) {
    linger_ = true;
    send_error(*bad, closing());
    return;
  }
  route_from_header();
  // Refuse an oversized body before reading it.
  auto limit = static_cast<uint64_t>(std::max<int64_t>(body_limit(), 0));
  auto len = parser_->content_length();
  if (len && *len > limit) {
    linger_ = true;
    send_error(too_large(), closing());
    return;
  }
  parser_->body_limit(limit);
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
    asio::async_write(
      stream_, asio::buffer(continue_100),
      beast::bind_front_handler(&session::on_continue, shared_from_this()));
    return;
  }
  read_body();
}

void session::on_continue(beast::error_code ec, size_t) {
  if (ec) {
    do_close(false);
    return;
  }
  read_body();
}

void session::read_body() {
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
  http::async_read(
    stream_, buffer_, *parser_,
    beast::bind_front_handler(&session::on_body, shared_from_this()));
}

void session::on_body(beast::error_code ec, size_t) {
  if (ec) {
    on_read_error(ec);
    return;
  }
  stream_.expires_never();
  handle_request();
}

/// Socket errors, timeouts and a client that went away close the
/// connection; malformed or oversized requests get an error first.
void session::on_read_error(beast::error_code ec) {
  if (ec.category() != http_category() || ec == http::error::end_of_stream
      || ec == http::error::partial_message) {
    if (ec == beast::error::timeout)
      srv_.dropped(
        parser_->is_header_done() ? "body_timeout" : "header_timeout", peer_);
    do_close(false);
    return;
  }
  // The start line and the fields before the error are in the message:
  // the answer carries the client's request id when it gave one.
  if (ctx_.request_id.empty() && !parser_->get().method_string().empty())
    note_header();
  if (ctx_.request_id.empty())
    ctx_.request_id = data::new_request_id();
  linger_ = true;
  if (ec == http::error::body_limit) {
    send_error(too_large(), closing());
  } else if (ec == http::error::header_limit) {
    // The request line is too long when the parser did not get past it
    // and the buffered bytes (then still the whole request) hold no line
    // end; otherwise the fields are.
    auto bytes = buffer_.data();
    std::string_view seen{static_cast<const char*>(bytes.data()), bytes.size()};
    bool line_ended = !parser_->get().method_string().empty()
                      || seen.find('\n') != std::string_view::npos;
    send_error(
      domain::make_error(line_ended ? domain::ec::header_too_large
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

int64_t session::body_limit() const {
  return ctx_.route == route_id::v1_chat || ctx_.route == route_id::mcp
           ? srv_.cfg.http.chat_body_limit_bytes
           : srv_.cfg.http.body_limit_bytes;
}

domain::error session::too_large() const {
  return domain::make_error(domain::ec::payload_too_large,
                            "request body exceeds "
                              + std::to_string(body_limit()) + " bytes");
}

/// Half-closes; with `linger`, drains what the client still sends for a
/// moment so that it reads the error instead of a reset.
void session::do_close(bool linger) {
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

void session::do_drain() {
  stream_.async_read_some(
    asio::buffer(drain_),
    beast::bind_front_handler(&session::on_drain, shared_from_this()));
}

void session::on_drain(beast::error_code ec, size_t n) {
  drained_ += n;
  if (ec || drained_ > (1u << 20)) {
    beast::error_code ignored;
    stream_.socket().close(ignored);
    return;
  }
  do_drain();
}

std::shared_ptr<session> make_session(server::impl& srv, std::shared_ptr<hub> h,
                                      uint64_t id, strand_socket&& socket,
                                      std::string peer) {
  return std::make_shared<session>(srv, std::move(h), id, std::move(socket),
                                   std::move(peer));
}

void shed_session(std::shared_ptr<session> s) {
  auto ex = s->executor();
  asio::post(ex, [s = std::move(s)] { s->shed(); });
}

int64_t waiting_since(const session& s) {
  return s.waiting_since();
}

bool mark_shed(session& s) {
  return s.mark_shed();
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

} // namespace candor::net::detail
