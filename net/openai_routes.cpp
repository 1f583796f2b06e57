// The OpenAI-compatible routes (see net/session.hpp): GET /v1/models and
// POST /v1/chat/completions. The question goes through the same hand-off
// and the same graph as POST /ask; only the parsing and the rendering
// differ (domain/api/openai_json.hpp). Errors are sent by send_error,
// which gives /v1 paths OpenAI's error shape.

#include "net/session.hpp"

#include "domain/api/openai_json.hpp"

namespace candor::net::detail {

void session::handle_models(const std::string& id) {
  if (ctx_.route == route_id::v1_model && id != domain::openai::model_id) {
    auto e = domain::make_error(domain::ec::not_found,
                                "The model does not exist: this server serves "
                                "the model 'candor'");
    e.issues.push_back({"model", "must be \"candor\""});
    send_error(e);
    return;
  }
  log_read();
  send(http::status::ok,
       ctx_.route == route_id::v1_model
         ? domain::openai::model_body(srv_.started_s)
         : domain::openai::models_body(srv_.started_s),
       "application/json");
}

void session::handle_chat() {
  auto parsed = domain::openai::parse_chat_body(parser_->get().body());
  if (!parsed) {
    send_error(parsed.err());
    return;
  }
  auto chat = std::move(*parsed);
  chat_stream_ = chat.stream;
  chat_usage_ = chat.stream && chat.stream_usage;
  // The earlier user messages are the conversation: its newest
  // conversations.historyTurns (the chat client keeps it, not the ledger).
  auto& history = chat.ask.history;
  auto keep = static_cast<size_t>(srv_.cfg.conversations.history_turns);
  if (history.size() > keep)
    history.erase(history.begin(),
                  history.end() - static_cast<std::ptrdiff_t>(keep));
  submit_ask(std::move(chat.ask), &session::on_chat);
}

/// The answer of a chat completion: one JSON completion, or the same
/// content as OpenAI's SSE chunks in one buffered text/event-stream body
/// (the graph has finished by now; streaming node by node is item 2 of
/// issue 27).
void session::on_chat(domain::outcome<domain::ask_box> r) {
  auto self = std::move(pending_self_);
  if (!settle_ask(r))
    return;
  const auto& st = **r;
  auto created = ctx_.ts_us / 1'000'000;
  if (chat_stream_)
    send(http::status::ok,
         domain::openai::completion_stream(st, created, chat_usage_),
         "text/event-stream; charset=utf-8");
  else
    send(http::status::ok, domain::openai::completion_body(st, created),
         "application/json");
}

} // namespace candor::net::detail
