// The output guard applied to a whole /ask response, with the product's
// guard configuration and the removal of control characters.

#include "domain/guard/response_guard.hpp"

#include <utility>

#include "domain/model/contracts.hpp"
#include "domain/text.hpp"

namespace candor::domain {

output_guard_config
product_output_guard_config(std::string canary,
                            std::vector<std::string> prompt_texts) {
  output_guard_config og;
  og.canary = std::move(canary);
  og.protected_texts = std::move(prompt_texts);
  og.allowed_echoes = {
    std::string{texts::out_of_scope}, std::string{texts::input_blocked},
    std::string{texts::weak_evidence}, std::string{texts::unsupported_answer},
    std::string{texts::unusable_answer}};
  return og;
}

size_t remove_model_controls(ask_state& st) {
  size_t removed = remove_control_characters(st.route_reason)
                   + remove_control_characters(st.answer);
  for (auto& f : st.follow_ups)
    removed += remove_control_characters(f);
  if (st.has_sql) {
    removed += remove_control_characters(st.sql.query)
               + remove_control_characters(st.sql.original_query)
               + remove_control_characters(st.sql.last_error);
    for (auto& c : st.sql.columns)
      removed += remove_control_characters(c);
    for (auto& row : st.sql.rows)
      for (auto& c : row)
        removed += remove_control_characters(c.s);
  }
  return removed;
}

std::string guard_response(const output_guard& guard, ask_state& st) {
  // What leaves is what gets checked: control and bidi characters go
  // first, so no check looks at text the client never receives.
  if (remove_model_controls(st) > 0)
    add_warning(st, "control_characters_removed");
  const auto& spans = st.redacted_spans;
  // The route reason is model text too: withhold it on a leak.
  if (auto r = guard.check(st.route_reason, spans); !r.empty()) {
    st.route_reason = std::string{texts::route_reason_withheld};
    return r;
  }
  if (st.has_sql) {
    std::string joined
      = st.sql.query + "\n" + st.sql.original_query + "\n" + st.sql.last_error;
    for (auto& c : st.sql.columns)
      joined += "\n" + c;
    for (auto& row : st.sql.rows)
      for (auto& c : row)
        joined += "\n" + c.s;
    if (auto r = guard.check(joined, spans); !r.empty()) {
      st.sql.query = "(withheld by the output guard)";
      st.sql.original_query.clear();
      st.sql.columns.clear();
      st.sql.rows.clear();
      st.sql.last_error.clear();
      return r;
    }
  }
  if (auto r = guard.check(st.answer, spans); !r.empty())
    return r;
  for (auto& f : st.follow_ups)
    if (auto r = guard.check(f, spans); !r.empty())
      return r;
  return {};
}

} // namespace candor::domain
