#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "domain/error.hpp"

/// Shared by the parsers of model replies (domain/contracts.cpp,
/// domain/sql_contracts.cpp): every failure is `llm_parse_failed` with a
/// message the re-ask can quote to the model.
namespace candor::domain {

/// A `llm_parse_failed` error saying `what`.
inline error reply_parse_failed(std::string what) {
  return make_error(ec::llm_parse_failed, std::move(what));
}

/// Parses a model reply that must be exactly one JSON object of at most
/// `max_bytes` bytes.
outcome<boost::json::object>
parse_reply_object(std::string_view text,
                   size_t max_bytes = std::numeric_limits<size_t>::max());

} // namespace candor::domain
