#pragma once

// Declares the helpers shared by the parsers of model replies: the parse
// error, fence removal and single-object parsing.

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "domain/error.hpp"

/// Shared by the parsers of model replies (domain/model/contracts.cpp,
/// domain/sql/contracts.cpp): every failure is `llm_parse_failed` with a
/// message the re-ask can quote to the model.
namespace candor::domain {

/// A `llm_parse_failed` error saying `what`.
inline error reply_parse_failed(std::string what) {
  return make_error(ec::llm_parse_failed, std::move(what));
}

/// Drops a surrounding Markdown code fence (```json ... ```) and the white
/// space around the reply; models add them even when asked for JSON only.
std::string_view unfence_reply(std::string_view text);

/// Parses a model reply that must be exactly one JSON object of at most
/// `max_bytes` bytes (fence and white space aside), each member named
/// once (the JSON parser would keep the last of two silently).
outcome<boost::json::object>
parse_reply_object(std::string_view text,
                   size_t max_bytes = std::numeric_limits<size_t>::max());

/// "unknown field '<name>'; " for a re-ask, the name cut to 40 characters
/// (a model's 40 KB key is not sent back to it whole).
std::string unknown_field(std::string_view name);

} // namespace candor::domain
