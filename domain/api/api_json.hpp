#pragma once

// Declares the JSON of the public HTTP API: the POST /ask body parser, the
// /ask response's schema check and the error body.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>
#include <boost/json/object.hpp>

#include "domain/error.hpp"
#include "domain/types.hpp"

/// The JSON of the public HTTP API (DESIGN.md §3): the `POST /ask` body, the
/// `/ask` response, its schema check, and the error body. Pure functions.
namespace candor::domain {

/// Length bounds of the question, in code points after trimming.
struct ask_body_limits {
  size_t min_question = 3;
  size_t max_question = 500;
};

/// Parses a `POST /ask` body: `{"question": string, "forceRoute"?: "docs" |
/// "data"}`. The question is trimmed (ASCII whitespace) and measured in code
/// points. Unknown fields are issues; `forceRoute: null` counts as absent.
/// Invalid JSON (including invalid UTF-8, nesting deeper than 32) gives
/// `invalid_request` with the message "body is not valid JSON" and one issue
/// at path "" carrying the parser's reason. Every other problem is one issue
/// `{path, message}` ("question", "forceRoute", or "" for the root). On
/// success only `question` and `force_route` are set.
outcome<ask_request> parse_ask_body(std::string_view body,
                                    const ask_body_limits& lim = {});

/// The `/ask` response body for a finished state (field names of DESIGN.md
/// §3). Warnings are the request's (raised before the graph ran) followed by
/// the state's, without duplicates. Citation scores are rounded to 4 decimal
/// places; `meta.models` lists the models that were called (the configured
/// ones when none was). Every value is allocated from `sp` (e.g. a
/// monotonic_resource over a stack buffer for a body that is written and
/// dropped).
boost::json::object to_json(const ask_state& st,
                            boost::json::storage_ptr sp = {});

/// The JSON text of `to_json(st)`, written directly (the same fields in the
/// same order, the numbers as json_text writes them), for the HTTP layer,
/// which only writes the body out.
std::string response_text(const ask_state& st);

/// Checks a response object against the `/ask` schema: every field present
/// with its type, enumerations within their sets, at most 3 citations, 50
/// rows and 3 follow-up questions, `blockedBy` non-null iff status is
/// "blocked", status never "pending". Returns the problems (empty = valid).
std::vector<issue> validate_response(const boost::json::value& v);

/// Whether `to_json(st)` would pass `validate_response`, decided in one
/// pass over the response's fields without building the value
/// (domain/api/response_check.hpp). Finalize asks this first and builds the
/// value for `validate_response`'s issues only when it says no.
bool response_fits_schema(const ask_state& st);

/// The error body `{error, message, requestId, issues?}`; `issues` only when
/// there are some.
std::string error_body(const error& e, std::string_view request_id);

} // namespace candor::domain
