#pragma once

// One HTTP connection of the server, internal to net/. The class is
// implemented in three files: net/session.cpp reads a request (deadlines,
// size limits, malformed input) and closes the connection; net/routes.cpp
// routes it, hands it to the service and renders the answer;
// net/response.cpp writes the response.

#include "net/server_impl.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
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
#include "domain/api/api_json.hpp"
#include "domain/api/mcp_json.hpp"
#include "data/log.hpp"
#include "domain/log_mask.hpp"
#include "domain/records.hpp"
#include "net/http_util.hpp"

namespace candor::net::detail {

namespace http = beast::http;

/// Largest request head accepted (request line and fields).
inline constexpr size_t header_limit_bytes = 8192;

/// A timeout from the configuration, at least 1 ms.
inline std::chrono::milliseconds ms(int64_t x) {
  return std::chrono::milliseconds{std::max<int64_t>(x, 1)};
}

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
  /// The API key's name once the gate admitted (or rate-limited) it.
  std::string key_name;
};

/// Extra response headers for errors.
struct error_opts {
  std::string_view allow;
  bool www_authenticate = false;
  bool retry_after = false;
  /// When > 0, Retry-After says this many seconds (an API key's 429).
  int64_t retry_after_seconds = 0;
  bool close = false;
};

inline error_opts closing() {
  error_opts o;
  o.close = true;
  return o;
}

inline error_opts retry_later() {
  error_opts o;
  o.retry_after = true;
  return o;
}

inline error_opts allowing(std::string_view methods) {
  error_opts o;
  o.allow = methods;
  return o;
}
class session : public std::enable_shared_from_this<session> {
public:
  session(server::impl& srv, std::shared_ptr<hub> h, uint64_t id,
          strand_socket&& socket, std::string peer);

  /// May run while the server is being destroyed (pending handlers are
  /// destroyed with the io_context): then `hub_->open` is false and `srv_`
  /// is not touched.
  ~session();

  void start();

  /// Graceful stop (on the session's strand): an idle connection closes now,
  /// a request being read or processed is answered with Connection: close.
  void shutdown();

  /// Server destruction (no Asio thread runs): breaks the self-reference of
  /// a request still waiting for the service.
  void abandon();

  /// Shedding at http.maxConnections (on the session's strand): closes the
  /// connection if it still waits for a whole request.
  void shed();

  /// Since when (steady clock, ms) the connection waits for a whole
  /// request; 0 while one is processed or answered, and once it is being
  /// shed. Thread-safe.
  int64_t waiting_since() const noexcept {
    return shed_.load(std::memory_order_relaxed)
             ? 0
             : waiting_since_.load(std::memory_order_relaxed);
  }

  /// Marks the connection as being shed; false when it already was.
  bool mark_shed() noexcept {
    return !shed_.exchange(true);
  }

  auto executor() {
    return stream_.get_executor();
  }

private:
  enum class phase { idle, reading, processing, writing, closed };

  // -- reading ----------------------------------------------------------------

  void do_read_request();

  /// Idle keep-alive: waits for the first byte of the next request.
  void wait_first_bytes();

  void on_first_bytes(beast::error_code ec, size_t n);

  /// RFC 9112 §2.2: empty lines before a request line are ignored. True
  /// when bytes of a request remain buffered. At most 64 bytes are skipped
  /// per request; the parser refuses the rest ("bad method").
  bool skip_empty_lines();

  /// Feeds the bytes already buffered to the parser, without waiting for
  /// more. False when the parser needs more bytes than there are; true when
  /// it stopped at the end of the header (or, eager, of the message) or on
  /// an error, which is then in `ec`.
  bool parse_buffered(beast::error_code& ec);

  void start_header();

  /// What the header parsed so far says about the request: method, path,
  /// version, keep-alive and the request id. Also called after a parse
  /// error, with the fields read before it.
  void note_header();

  void on_header(beast::error_code ec, size_t);

  void on_continue(beast::error_code ec, size_t);

  void read_body();

  void on_body(beast::error_code ec, size_t);

  /// Socket errors, timeouts and a client that went away close the
  /// connection; malformed or oversized requests get an error first.
  void on_read_error(beast::error_code ec);

  /// http.bodyLimitBytes, or http.chatBodyLimitBytes on
  /// /v1/chat/completions (the route is known once the header is read).
  int64_t body_limit() const;

  domain::error too_large() const;

  // -- routing ----------------------------------------------------------------

  /// Routing as far as the header decides it: the target, the route, the
  /// method and, for /ask, the media type. A refusal is kept in `refusal_`
  /// and sent once the body is read (or at once, see on_header).
  void route_from_header();

  void send_refusal();

  void handle_request();

  /// GET / and the page's assets: compiled-in bytes, sent with the CSP
  /// (a read: a log line, no ledger row).
  void handle_page();

  void handle_ask();

  /// X-Candor-Chaos, when llm.allowChaos is on: false (and a 400 sent) for
  /// an unknown mode.
  bool read_chaos(domain::ask_request& ask);

  /// POST /admin/reindex: reloads the retrieval index. Disabled (404)
  /// unless CANDOR_RETRIEVAL_ADMIN_TOKEN is set; the bearer token is
  /// compared in constant time.
  void handle_reindex();

  void handle_stats(const target& tgt);

  /// GET /v1/models and /v1/models/{id} (net/openai_routes.cpp).
  void handle_models(const std::string& id);

  /// POST /v1/chat/completions: the last user message goes through the
  /// same graph as /ask; the answer is rendered as an OpenAI completion.
  void handle_chat();

  void on_chat(domain::outcome<domain::ask_box> r);

  // -- MCP: POST and DELETE /mcp (net/mcp_routes.cpp) ---------------------------

  void handle_mcp();

  /// A request (or notification) of a session that `initialize` opened.
  void mcp_dispatch(domain::mcp::message m);

  void mcp_call_tool(domain::mcp::message m);

  void mcp_read_resource(const domain::mcp::message& m);

  /// A JSON-RPC answer with `status`; `session_id` goes out as
  /// Mcp-Session-Id when set.
  void send_rpc(http::status status, std::string body,
                std::string_view session_id = {});

  /// A JSON-RPC error (an HTTP error status is recorded like any other).
  void send_rpc_error(http::status status, domain::mcp::rpc_error e,
                      std::string_view error_kind = "invalid_request");

  void on_mcp_ask(domain::outcome<domain::ask_box> r);
  void on_mcp_sql(domain::outcome<domain::ask_box> r);
  void answer_mcp_graph(const domain::outcome<domain::ask_box>& r,
                        boost::json::object (*render)(const domain::ask_state&));
  void on_mcp_search(domain::outcome<std::vector<domain::passage>> r);
  void on_mcp_text(domain::outcome<std::string> r);
  /// False (and a 401 sent) when http.operatorToken is set and the request
  /// does not carry it as a bearer token.
  bool operator_allowed();

  /// With API keys loaded, /ask and /demo/questions need an active key
  /// with room in its bucket and its daily budget: otherwise answers 401
  /// or 429 and returns false (net/key_gate.hpp).
  bool key_allowed();

  // -- the hand-off to the service --------------------------------------------

  /// Takes an in-flight slot or answers 503 overloaded.
  bool try_begin_service_call();

  void begin_service_call(bool holds_slot);

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

  domain::service::text_callback text_callback();

  void end_service_call();

  /// Stamps a parsed question with this request's identity (id, time,
  /// path, key, chaos header) and hands it to the service; `done` gets the
  /// outcome. Sends the error itself when the question cannot go.
  void submit_ask(domain::ask_request ask,
                  void (session::*done)(domain::outcome<domain::ask_box>));

  /// Counts the model tokens a request spent against its API key's day.
  void charge_key(const domain::outcome<domain::ask_box>& r);

  /// What /ask and /v1/chat/completions do first with the graph's outcome:
  /// the slot is freed, the key charged, an error sent. True when there is
  /// an answer to render.
  bool settle_ask(const domain::outcome<domain::ask_box>& r);
  /// What every question's callback does first: stops watching the
  /// socket, ends the service call, charges the key; false (the
  /// connection closed) when the client hung up meanwhile.
  bool end_ask(const domain::outcome<domain::ask_box>& r);

  /// The answer (or error) of /ask. The service wrote the request's row
  /// and the finalize node validated the response: this only renders.
  void on_ask(domain::outcome<domain::ask_box> r);

  void on_text(domain::outcome<std::string> r);

  // -- while a question runs (net/stream.cpp) ---------------------------------

  /// Watches the socket while the service works on a question: a read
  /// into `buffer_` (bytes of a pipelined request are kept there), so that
  /// a client that hangs up (EOF or error) is seen at once.
  void start_watch();

  void on_watch(beast::error_code ec, size_t n);

  /// Ends the watch (the outcome is here); its handler may still run.
  void stop_watch();

  /// The client hung up while its question ran: the question is cancelled
  /// (its outcome, `cancelled`, arrives as usual and nothing is written).
  void on_hang_up();

  /// POST /ask with Accept: text/event-stream: writes the head of the
  /// event stream (200, no Content-Length, Connection: close).
  void begin_stream();

  /// A progress event of the question (posted from the service's thread).
  void on_progress(domain::progress_event ev);

  /// Queues one frame of the event stream and writes it when the ones
  /// before it are out.
  void stream_push(std::string frame);

  void stream_write_next();

  void on_stream_write(beast::error_code ec, size_t);

  /// The last event (`result` or `error`); the connection closes once it
  /// is written.
  void stream_finish(std::string_view event, const std::string& data);

  // -- writing ----------------------------------------------------------------

  /// The row of a request that ended in an HTTP error here, before or
  /// outside the graph (the graph's requests are recorded by the service).
  void record_error(int status, std::string_view error);

  /// A successful answer on the other routes (/stats, /metrics, /health,
  /// /runs, /demo/questions, /admin/reindex) gets the log line every
  /// request gets, but no ledger row and no request metric: /stats and the
  /// request counters are about the API's work (/ask) and every error, not
  /// about scrapes of them.
  void log_read();

  domain::request_record make_record(int status, std::string_view error) const;

  void send_error(const domain::error& e, error_opts opts = {});

  void send(http::status status, std::string body,
            std::string_view content_type);

  using error_fields = boost::container::small_vector<header_field, 3>;

  /// Writes the response: `extra` fields (an error's), then the fields
  /// every response has. The head is written here, in the order and bytes
  /// Beast's serializer gives the same message (net/http_util), and sent
  /// with the body in one gather write; a Beast response object cost an
  /// allocation per field and its serializer about 20k instructions.
  void write(http::status status, std::string body,
             std::string_view content_type, const error_fields& extra);

  void on_write(beast::error_code ec, size_t);

  // -- closing ----------------------------------------------------------------

  /// Half-closes; with `linger`, drains what the client still sends for a
  /// moment so that it reads the error instead of a reset.
  void do_close(bool linger);

  void do_drain();

  void on_drain(beast::error_code ec, size_t n);

  server::impl& srv_;
  std::shared_ptr<hub> hub_;
  uint64_t id_;
  /// The client's address, for the per-address limit and the log.
  std::string peer_;
  std::atomic<int64_t> waiting_since_{0};
  std::atomic<bool> shed_{false};
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
  /// POST /v1/chat/completions: `stream: true` and
  /// `stream_options.include_usage` of the request being answered.
  bool chat_stream_ = false;
  bool chat_usage_ = false;
  /// /mcp: the id of the request being answered, its session's revision,
  /// and what a text callback answers (a tool or a resource URI).
  boost::json::value mcp_id_;
  std::string mcp_version_;
  std::string mcp_target_;
  /// Empty-line bytes skipped before this request (skip_empty_lines).
  size_t skipped_ = 0;
  phase phase_ = phase::idle;
  bool stopping_ = false;
  bool linger_ = false;
  bool slot_held_ = false;
  /// Keeps the session alive while the service works on its request (no
  /// Asio operation is pending then).
  std::shared_ptr<session> pending_self_;
  /// The question in flight's control (cancel, progress); null otherwise.
  domain::request_control_ptr control_;
  /// The watch's read is wanted (watching_) and outstanding
  /// (watch_pending_); a read for the next request waits for it to end.
  bool watching_ = false;
  bool watch_pending_ = false;
  bool read_after_watch_ = false;
  /// The client hung up while its question ran.
  bool hung_up_ = false;
  /// This /ask answers as an event stream; its frames not written yet.
  bool sse_ = false;
  bool stream_writing_ = false;
  bool stream_closing_ = false;
  std::deque<std::string> stream_out_;
  std::array<char, 4096> drain_{};
  size_t drained_ = 0;
};

} // namespace candor::net::detail
