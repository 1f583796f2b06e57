#pragma once

// Declares the OpenAI-compatible chat-completions wire format as pure
// functions, with no I/O.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "domain/error.hpp"

/// The OpenAI-compatible chat-completions wire format as pure functions:
/// request bodies, response parsing, status classification, Retry-After,
/// the price table and the guard classifier's verdict. No I/O here.
namespace candor::domain {

/// What one chat-completions request asks for.
struct chat_spec {
  std::string model;
  std::string system;
  std::string user;
  int32_t max_tokens = 512;
  /// Name and JSON schema (as text) of the expected reply; an empty schema
  /// asks for plain text.
  std::string schema_name;
  std::string schema;
  /// "json_schema" (structured output) or "json_object" (JSON mode; the
  /// schema is then appended to the system message).
  std::string response_format = "json_schema";
};

/// The JSON body of POST {base}/chat/completions.
std::string make_chat_body(const chat_spec& spec);

/// The largest token count taken from a response's `usage` (2^30, far
/// beyond any context window); larger reported counts are cut to it.
inline constexpr int64_t max_token_count = int64_t{1} << 30;

/// The useful part of a chat-completions response.
struct chat_result {
  std::string text;
  std::string finish_reason; ///< "stop", "length", ...
  std::string model;         ///< as reported by the endpoint
  int64_t tokens_in = -1;    ///< -1: the endpoint reported no usage
  int64_t tokens_out = -1;
};

/// Parses a 200 response body; an error (llm_parse_failed) when it is not a
/// chat completion with a text message.
outcome<chat_result> parse_chat_response(std::string_view body);

/// What to do after an HTTP status.
enum class status_action : uint8_t {
  ok,         ///< 2xx
  retry,      ///< 408, 409, 429, 5xx: back off and try the same model
  next_model, ///< 400, 401, 403, 404, 422 and other 4xx
};

status_action classify_status(int status) noexcept;

/// Milliseconds a Retry-After value asks for (delta-seconds or HTTP-date),
/// capped at `cap`; -1 when absent or unparseable.
int64_t retry_after_ms(std::string_view value,
                       std::chrono::system_clock::time_point now,
                       int64_t cap_ms = 60000);

/// Prices per million tokens.
struct model_price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

/// conf/prices.json: {"<model>": {"inputPerMTokUsd": x,
/// "outputPerMTokUsd": y}, ...}.
class price_table {
public:
  static outcome<price_table> parse(std::string_view json_text);

  /// The price of `model`, or `fallback` when the table does not know it.
  model_price lookup(const std::string& model,
                     const model_price& fallback) const;

  size_t size() const noexcept {
    return prices_.size();
  }

private:
  std::map<std::string, model_price> prices_;
};

/// The embedded conf/prices.json, parsed once (empty on a parse error, which
/// a unit test rules out).
const price_table& builtin_prices();

/// The guard classifier's reply: "unsafe" as its first word (whatever
/// follows), or "safe" alone (case-insensitive, surrounding white space and
/// one full stop allowed); anything else, "safe" with more after it
/// included, is unparseable, which blocks the question.
enum class guard_verdict : uint8_t { safe, unsafe, unparseable };

guard_verdict parse_guard_reply(std::string_view text) noexcept;

} // namespace candor::domain
