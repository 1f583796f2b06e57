// While a question runs (see net/session.hpp): the watch on the socket that
// cancels the question of a client that hung up, and the event stream of
// POST /ask with Accept: text/event-stream (progress events as the graph's
// nodes finish, then the same body as a plain POST /ask).

#include "net/session.hpp"

#include "domain/api/stream_json.hpp"

namespace candor::net::detail {

namespace {

/// Bytes of a pipelined request the watch reads ahead at most; past them
/// the watch stops (the question then runs to its end).
constexpr size_t watch_limit_bytes = 64 * 1024;

} // namespace

void session::start_watch() {
  if (watch_pending_ || buffer_.size() >= watch_limit_bytes) {
    watching_ = false;
    return;
  }
  watching_ = true;
  watch_pending_ = true;
  stream_.async_read_some(
    buffer_.prepare(4096),
    beast::bind_front_handler(&session::on_watch, shared_from_this()));
}

void session::on_watch(beast::error_code ec, size_t n) {
  watch_pending_ = false;
  buffer_.commit(n);
  if (!watching_ || phase_ == phase::closed) {
    // The outcome came first: the read was cancelled (or the connection
    // closed). A read for the next request may have waited for this one.
    if (std::exchange(read_after_watch_, false) && phase_ != phase::closed)
      do_read_request();
    return;
  }
  if (ec) {
    watching_ = false;
    on_hang_up();
    return;
  }
  start_watch(); // bytes of the next request: kept, and watched on
}

void session::stop_watch() {
  if (!watching_)
    return;
  watching_ = false;
  if (watch_pending_) {
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
  }
}

void session::on_hang_up() {
  if (hung_up_ || phase_ != phase::processing)
    return;
  hung_up_ = true;
  if (control_)
    control_->stop.cancel();
}

void session::begin_stream() {
  sse_ = true;
  ctx_.keep_alive = false;
  boost::container::small_vector<header_field, 6> fields;
  fields.emplace_back("Content-Type", "text/event-stream; charset=utf-8");
  fields.emplace_back("X-Request-Id", ctx_.request_id);
  fields.emplace_back("X-Content-Type-Options", "nosniff");
  fields.emplace_back("Cache-Control", "no-cache");
  fields.emplace_back("Connection", "close");
  std::string head;
  append_response_head(head, 200, http::obsolete_reason(http::status::ok),
                       fields);
  stream_push(std::move(head));
}

void session::on_progress(domain::progress_event ev) {
  if (!sse_ || hung_up_ || stream_closing_ || phase_ != phase::processing)
    return;
  std::string frame;
  domain::append_sse(frame, ev.event, ev.data);
  stream_push(std::move(frame));
}

void session::stream_push(std::string frame) {
  stream_out_.push_back(std::move(frame));
  if (!stream_writing_)
    stream_write_next();
}

void session::stream_write_next() {
  if (stream_out_.empty()) {
    if (stream_closing_)
      do_close(false); // the end of the stream is the end of the body
    return;
  }
  stream_writing_ = true;
  asio::async_write(
    stream_, asio::buffer(stream_out_.front()),
    beast::bind_front_handler(&session::on_stream_write, shared_from_this()));
}

void session::on_stream_write(beast::error_code ec, size_t) {
  stream_writing_ = false;
  if (phase_ == phase::closed)
    return;
  if (ec) {
    stream_out_.clear();
    if (phase_ == phase::processing)
      on_hang_up(); // the outcome then closes the connection
    else
      do_close(false);
    return;
  }
  stream_out_.pop_front();
  stream_write_next();
}

void session::stream_finish(std::string_view event, const std::string& data) {
  phase_ = phase::writing;
  stream_closing_ = true;
  std::string frame;
  domain::append_sse(frame, event, data);
  stream_push(std::move(frame));
}

} // namespace candor::net::detail
