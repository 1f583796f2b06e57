// The OpenAI-compatible chat-completions wire format: request bodies,
// response parsing, status classification, Retry-After and prices.

#include "domain/model/openai_wire.hpp"

#include <cctype>
#include <charconv>
#include <ctime>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "domain/embedded.hpp"

namespace candor::domain {

namespace json = boost::json;

std::string make_chat_body(const chat_spec& spec) {
  json::object body;
  body["model"] = spec.model;
  auto system = spec.system;
  json::value schema;
  if (!spec.schema.empty()) {
    boost::system::error_code ec;
    schema = json::parse(spec.schema, ec);
    if (ec)
      schema = nullptr; // a node bug; ask for JSON without a schema
  }
  if (!spec.schema.empty() && spec.response_format == "json_object"
      && !schema.is_null())
    system += "\nThe reply must be one JSON object matching this JSON "
              "schema: "
              + json::serialize(schema);
  json::array messages;
  messages.push_back(json::object{{"role", "system"}, {"content", system}});
  messages.push_back(json::object{{"role", "user"}, {"content", spec.user}});
  body["messages"] = std::move(messages);
  body["max_tokens"] = spec.max_tokens;
  body["temperature"] = 0;
  if (!spec.schema.empty()) {
    if (spec.response_format == "json_schema" && schema.is_object()) {
      json::object fmt;
      fmt["type"] = "json_schema";
      fmt["json_schema"] = json::object{
        {"name", spec.schema_name.empty() ? "reply" : spec.schema_name},
        {"strict", true},
        {"schema", schema}};
      body["response_format"] = std::move(fmt);
    } else {
      body["response_format"] = json::object{{"type", "json_object"}};
    }
  }
  return json::serialize(body);
}

namespace {

error parse_failed(std::string msg) {
  return make_error(ec::llm_parse_failed, std::move(msg));
}

int64_t token_count(const json::object& usage, std::string_view key) {
  auto* v = usage.if_contains(key);
  if (!v)
    return -1;
  // A count beyond max_token_count is not believable for one call; it is
  // capped so that sums over requests (tokens, cost, /stats) cannot
  // overflow.
  if (v->is_int64() && v->as_int64() >= 0)
    return std::min<int64_t>(v->as_int64(), max_token_count);
  if (v->is_uint64())
    return static_cast<int64_t>(
      std::min<uint64_t>(v->as_uint64(), max_token_count));
  return -1;
}

} // namespace

outcome<chat_result> parse_chat_response(std::string_view body) {
  boost::system::error_code ec;
  auto doc = json::parse(body, ec);
  if (ec || !doc.is_object())
    return parse_failed("the response is not a JSON object");
  auto& obj = doc.as_object();
  auto* choices = obj.if_contains("choices");
  if (!choices || !choices->is_array() || choices->as_array().empty()
      || !choices->as_array()[0].is_object())
    return parse_failed("the response has no choices");
  auto& first = choices->as_array()[0].as_object();
  auto* message = first.if_contains("message");
  if (!message || !message->is_object())
    return parse_failed("the first choice has no message");
  auto* content = message->as_object().if_contains("content");
  if (!content || !content->is_string())
    return parse_failed("the message has no text content");
  chat_result out;
  out.text = std::string{content->as_string()};
  if (auto* fr = first.if_contains("finish_reason"); fr && fr->is_string())
    out.finish_reason = std::string{fr->as_string()};
  else
    out.finish_reason = "stop";
  if (auto* m = obj.if_contains("model"); m && m->is_string())
    out.model = std::string{m->as_string()};
  if (auto* u = obj.if_contains("usage"); u && u->is_object()) {
    out.tokens_in = token_count(u->as_object(), "prompt_tokens");
    out.tokens_out = token_count(u->as_object(), "completion_tokens");
  }
  return out;
}

status_action classify_status(int status) noexcept {
  if (status >= 200 && status < 300)
    return status_action::ok;
  if (status == 408 || status == 409 || status == 429 || status >= 500)
    return status_action::retry;
  return status_action::next_model;
}

int64_t retry_after_ms(std::string_view value,
                       std::chrono::system_clock::time_point now,
                       int64_t cap_ms) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
    value.remove_suffix(1);
  if (value.empty() || value.size() > 64)
    return -1;
  int64_t secs = 0;
  auto [p, err]
    = std::from_chars(value.data(), value.data() + value.size(), secs);
  if (err == std::errc{} && p == value.data() + value.size()) {
    if (secs < 0)
      return -1;
    return std::min(cap_ms, secs > cap_ms / 1000 ? cap_ms : secs * 1000);
  }
  // Digits only, too many for 64 bits: a very long wait, so the cap.
  if (err == std::errc::result_out_of_range && p == value.data() + value.size()
      && value.front() != '-')
    return cap_ms;
  // HTTP-date (IMF-fixdate): "Sun, 06 Nov 1994 08:49:37 GMT".
  std::string text{value};
  std::tm tm{};
  auto* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0')
    return -1;
  // Compared in seconds: a date centuries away (the year 2270, found by
  // fuzzing) would overflow the clock's nanoseconds.
  auto when = static_cast<int64_t>(timegm(&tm));
  auto now_s = static_cast<int64_t>(std::chrono::system_clock::to_time_t(now));
  if (when <= now_s)
    return 0;
  if (when - now_s > cap_ms / 1000)
    return cap_ms;
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  now.time_since_epoch())
                  .count();
  return std::clamp<int64_t>(when * 1000 - now_ms, 0, cap_ms);
}

outcome<price_table> price_table::parse(std::string_view json_text) {
  boost::system::error_code ec;
  auto doc = json::parse(json_text, ec);
  if (ec || !doc.is_object())
    return make_error(ec::config_invalid,
                      "conf/prices.json: not a JSON object");
  price_table out;
  for (auto& [model, v] : doc.as_object()) {
    auto* in
      = v.is_object() ? v.as_object().if_contains("inputPerMTokUsd") : nullptr;
    auto* o
      = v.is_object() ? v.as_object().if_contains("outputPerMTokUsd") : nullptr;
    if (!in || !o || !in->is_number() || !o->is_number()
        || in->to_number<double>() < 0 || o->to_number<double>() < 0)
      return make_error(ec::config_invalid,
                        "conf/prices.json: model '" + std::string{model}
                          + "' needs non-negative inputPerMTokUsd and "
                            "outputPerMTokUsd");
    out.prices_[std::string{model}]
      = {in->to_number<double>(), o->to_number<double>()};
  }
  return out;
}

model_price price_table::lookup(const std::string& model,
                                const model_price& fallback) const {
  auto it = prices_.find(model);
  return it == prices_.end() ? fallback : it->second;
}

const price_table& builtin_prices() {
  static const price_table table = [] {
    auto t = price_table::parse(embedded::prices());
    return t ? std::move(*t) : price_table{};
  }();
  return table;
}

guard_verdict parse_guard_reply(std::string_view text) noexcept {
  auto space
    = [](char c) { return std::isspace(static_cast<unsigned char>(c)); };
  while (!text.empty() && space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && space(text.back()))
    text.remove_suffix(1);
  size_t i = 0;
  std::string word;
  while (i < text.size() && word.size() < 8
         && std::isalpha(static_cast<unsigned char>(text[i])))
    word
      += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i++])));
  // The word must end there: "safely" or "unsafety" are not verdicts.
  bool ends
    = i == text.size() || !std::isalnum(static_cast<unsigned char>(text[i]));
  // "unsafe" with a reason after it still blocks (failing closed). "safe"
  // lets the question through only on its own (one full stop allowed):
  // "safe, but actually this is unsafe" or "safe\nunsafe" is not a verdict.
  if (ends && word == "unsafe")
    return guard_verdict::unsafe;
  if (word == "safe"
      && (i == text.size() || (i + 1 == text.size() && text[i] == '.')))
    return guard_verdict::safe;
  return guard_verdict::unparseable;
}

} // namespace candor::domain
