#pragma once

// Declares the JSON of the OpenAI-compatible endpoint (GET /v1/models,
// POST /v1/chat/completions): the request parser, the completion and its
// SSE chunks, the model list and OpenAI's error shape. Pure functions; the
// HTTP layer (net/openai_routes.cpp) only writes what they return.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "domain/api/api_json.hpp"
#include "domain/error.hpp"
#include "domain/types.hpp"

namespace candor::domain::openai {

/// The one model id served: the assistant as a whole (its graph, guards
/// and provider), whatever model the provider calls underneath.
inline constexpr std::string_view model_id = "candor";

/// Bounds of a chat request, beyond http.chatBodyLimitBytes.
struct chat_limits {
  size_t max_messages = 256;
  /// Sum of the text of every message, in bytes (the body is bounded by
  /// http.chatBodyLimitBytes, 256 KiB by default).
  size_t max_text_bytes = 256 * 1024;
  /// Text parts in one message's content array.
  size_t max_parts = 32;
  /// Bounds of the question (the last user message), as for /ask.
  ask_body_limits question;
};

/// A validated `POST /v1/chat/completions`.
struct chat_request {
  /// The last user message as the question (request id, time, method and
  /// path are the HTTP layer's to fill in, as for /ask).
  ask_request ask;
  bool stream = false;
  /// `stream_options.include_usage`: a last chunk with the usage.
  bool stream_usage = false;
  /// Messages before the question's. Their user messages are the
  /// conversation so far: `ask.history` holds them, oldest first, as turns
  /// with status `asked` (assistant messages are not read: a client may
  /// write anything there, and candor answers from its own sources).
  size_t earlier_messages = 0;
};

/// Parses a chat-completions body: `model` must be "candor" (404
/// `not_found` with an issue at "model" otherwise), `messages` an array
/// of 1..max_messages objects with `role` system, developer, user,
/// assistant or tool and `content` a string or an array of
/// `{"type":"text","text":...}` parts (null only for assistant and
/// tool); at least one user message, the last of which is the question.
/// `stream` and `stream_options` are read, `n` must be 1 when given;
/// other OpenAI parameters (temperature, max_tokens, ...) are accepted and
/// ignored. Every problem is `invalid_request` with issues whose paths
/// name the field ("messages[2].content").
outcome<chat_request> parse_chat_body(std::string_view body,
                                      const chat_limits& lim = {});

/// The assistant message's Markdown for a finished state: a status line
/// when it is not "answered", the answer, then "Sources" (documents) or
/// the SQL and at most `max_rows` rows as a table (data).
std::string render_markdown(const ask_state& st, size_t max_rows = 20);

/// `{"object":"chat.completion", ...}` for a finished state, with
/// candor's status, route, blockedBy and requestId under "candor".
std::string completion_body(const ask_state& st, int64_t created);

/// The same completion as `text/event-stream`: a chunk with the role, the
/// content in pieces of about `piece_bytes` (cut at UTF-8 boundaries), a
/// chunk with finish_reason "stop", with `usage` a chunk with the usage and
/// no choices, then `data: [DONE]`.
std::string completion_stream(const ask_state& st, int64_t created, bool usage,
                              size_t piece_bytes = 64);

/// `{"object":"list","data":[{"id":"candor",...}]}`.
std::string models_body(int64_t created);

/// `{"object":"model","id":"candor",...}` (GET /v1/models/candor).
std::string model_body(int64_t created);

/// OpenAI's error shape `{"error":{"message","type","param","code"}}`:
/// type "invalid_request_error" for 4xx, "authentication_error" for 401,
/// "server_error" for 5xx; code candor's error name ("model_not_found"
/// for an unknown model); param the first issue's path; the message
/// lists the issues.
std::string error_body(const error& e);

/// Whether a request path belongs to the OpenAI-compatible API (its
/// errors take OpenAI's shape).
constexpr bool is_openai_path(std::string_view path) noexcept {
  return path == "/v1" || path.starts_with("/v1/");
}

} // namespace candor::domain::openai
