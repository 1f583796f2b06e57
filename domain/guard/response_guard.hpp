#pragma once

// Declares the output guard as finalize applies it to a whole response,
// and the product's guard configuration.

#include <string>
#include <vector>

#include "domain/guard/output_guard.hpp"
#include "domain/types.hpp"

/// The output guard as the `finalize` node applies it to a whole response,
/// and the guard configuration the product uses. Shared by the actor graph
/// and by `candor layers`, which runs this layer on its own.
namespace candor::domain {

/// The product's output guard configuration: `canary`, every prompt text as
/// a protected text, and the fixed refusal and block messages as allowed
/// echoes (they share wording with no prompt but may always be said).
output_guard_config
product_output_guard_config(std::string canary,
                            std::vector<std::string> prompt_texts);

/// Removes control and bidirectional-override characters
/// (`remove_control_characters`: NUL, ESC, \r, DEL, C1, U+202A..U+202E,
/// U+2066..U+2069; \t and \n stay) from every model-written text of `st`:
/// the route reason, the answer, the follow-up questions and the SQL block
/// (query, original query, last error, column names and text cells, which
/// the model's SELECT can spell). Returns how many it removed.
size_t remove_model_controls(ask_state& st);

/// Applies `remove_model_controls` (a removal adds the warning
/// `control_characters_removed`), then checks everything of `st` that
/// leaves the server against `guard` with `st.redacted_spans`: the route
/// reason (withheld on a leak), the SQL block (query, original query, last
/// error, columns and rows; withheld on a leak), the answer and the
/// follow-up questions. Returns the reason of the first leak ("canary",
/// "redacted_span", "prompt_leak", "remote_image"), or an empty string.
/// The caller decides what a leak does to the response.
std::string guard_response(const output_guard& guard, ask_state& st);

} // namespace candor::domain
