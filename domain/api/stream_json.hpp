#pragma once

// Declares the Server-Sent Events framing shared by the streaming routes
// (POST /ask with Accept: text/event-stream, and the OpenAI-compatible
// chat completions) and the progress events of /ask.

#include <string>
#include <string_view>
#include <vector>

#include "domain/request_control.hpp"
#include "domain/types.hpp"

namespace candor::domain {

/// Appends one Server-Sent Events frame: `event: <name>` (none when
/// `event` is empty), one `data:` line per line of `data`, and the empty
/// line that ends the frame.
void append_sse(std::string& out, std::string_view event,
                std::string_view data);

/// What a streaming client of POST /ask is told once node `n` has finished
/// with state `st` (usually nothing or one event, in this order):
/// - `route` {route, routeReason, overridden}, once, after the step that
///   chose the route (`route_told` remembers it);
/// - `retrieval` {chunks: [{chunkId, docTitle, score}]} after retrieve;
/// - `sql` {verdict: allowed|correctable|blocked|refused, query, ...} after
///   each validation (blocked: the layer and its rules; correctable: the
///   error sent back to the model);
/// - `rows` {rowCount, columns, truncated} after a query ran;
/// - `answer` {status, blockedBy} after finalize.
/// The final `result` (or `error`) event is the HTTP layer's.
std::vector<progress_event> progress_after(node n, const ask_state& st,
                                           bool& route_told);

} // namespace candor::domain
