// Writing a response: an error with the headers its status calls for, and
// any response's head and body in one gather write (see net/session.hpp).

#include "net/session.hpp"

#include "data/clock.hpp"
#include "domain/api/api_json.hpp"
#include "domain/api/openai_json.hpp"

namespace candor::net::detail {

void session::send_error(const domain::error& e, error_opts opts) {
  if (ctx_.request_id.empty())
    ctx_.request_id = data::new_request_id();
  auto status = domain::http_status(e.code);
  record_error(status, domain::to_string(e.code));
  error_fields fields;
  if (!opts.allow.empty())
    fields.emplace_back("Allow", opts.allow);
  if (opts.www_authenticate)
    fields.emplace_back("WWW-Authenticate", "Bearer realm=\"candor\"");
  std::string retry_after;
  // Every 503 says when to come back: overloaded, or no model reachable;
  // an API key's 429 says when its bucket or its day has room again.
  if (opts.retry_after_seconds > 0) {
    retry_after = std::to_string(opts.retry_after_seconds);
    fields.emplace_back("Retry-After", retry_after);
  } else if (opts.retry_after || status == 503) {
    retry_after = std::to_string(srv_.cfg.http.retry_after_seconds);
    fields.emplace_back("Retry-After", retry_after);
  }
  if (opts.close)
    ctx_.keep_alive = false;
  // The OpenAI-compatible routes answer in OpenAI's error shape (the
  // status is the same; the request id is in X-Request-Id).
  auto body = domain::openai::is_openai_path(ctx_.path)
                ? domain::openai::error_body(e)
                : domain::error_body(e, ctx_.request_id);
  write(static_cast<http::status>(status), std::move(body), "application/json",
        fields);
}

void session::send(http::status status, std::string body,
                   std::string_view content_type) {
  write(status, std::move(body), content_type, {});
}

/// Writes the response: `extra` fields (an error's), then the fields
/// every response has. The head is written here, in the order and bytes
/// Beast's serializer gives the same message (net/http_util), and sent
/// with the body in one gather write; a Beast response object cost an
/// allocation per field and its serializer about 20k instructions.
void session::write(http::status status, std::string body,
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
  asio::async_write(
    stream_, bufs,
    beast::bind_front_handler(&session::on_write, shared_from_this()));
}

void session::on_write(beast::error_code ec, size_t) {
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

} // namespace candor::net::detail
