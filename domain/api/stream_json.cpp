// The Server-Sent Events framing and the progress events of a streamed
// POST /ask (see domain/api/stream_json.hpp).

#include "domain/api/stream_json.hpp"

#include <cmath>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "domain/json_text.hpp"

namespace candor::domain {

namespace json = boost::json;

void append_sse(std::string& out, std::string_view event,
                std::string_view data) {
  if (!event.empty()) {
    out += "event: ";
    out += event;
    out += '\n';
  }
  // A line break inside the data would end the field: each line is a
  // `data:` line of its own, which the client joins with "\n" again.
  for (;;) {
    auto nl = data.find('\n');
    out += "data: ";
    out += data.substr(0, nl);
    out += '\n';
    if (nl == std::string_view::npos)
      break;
    data.remove_prefix(nl + 1);
  }
  out += '\n';
}

namespace {

progress_event make(std::string_view name, const json::object& o) {
  return {std::string{name}, json_text(o)};
}

json::value layer_or_null(layer_kind l) {
  if (l == layer_kind::none)
    return nullptr;
  return json::string{to_string(l)};
}

json::object sql_event(const ask_state& st) {
  json::object o;
  if (st.status == status_kind::blocked) {
    o["verdict"] = "blocked";
    o["layer"] = layer_or_null(st.blocked_by);
    json::array rules;
    for (const auto& r : st.guardrail.reasons)
      rules.emplace_back(r);
    o["rules"] = std::move(rules);
  } else if (st.finished()) {
    o["verdict"] = "refused";
  } else if (!st.pending_error.empty()) {
    o["verdict"] = "correctable";
    o["error"] = st.pending_error;
  } else {
    o["verdict"] = "allowed";
    o["limitApplied"] = st.sql.limit_applied;
  }
  o["query"] = st.sql.query;
  return o;
}

} // namespace

std::vector<progress_event> progress_after(node n, const ask_state& st,
                                           bool& route_told) {
  std::vector<progress_event> out;
  if (!route_told && st.route != route_kind::none) {
    route_told = true;
    json::object o;
    o["route"] = to_string(st.route);
    o["routeReason"] = st.route_reason;
    o["overridden"] = st.overridden;
    // A follow-up: the question the rest of the graph answers.
    if (!st.standalone.empty())
      o["standaloneQuestion"] = st.standalone;
    out.push_back(make("route", o));
  }
  switch (n) {
    case node::retrieve: {
      json::array chunks;
      for (const auto& p : st.passages) {
        json::object c;
        c["chunkId"] = p.chunk_id;
        c["docTitle"] = p.doc_title;
        c["score"] = std::round(p.score * 1e4) / 1e4;
        chunks.push_back(std::move(c));
      }
      json::object o;
      o["chunks"] = std::move(chunks);
      out.push_back(make("retrieval", o));
      break;
    }
    case node::sql_validate:
      if (st.has_sql)
        out.push_back(make("sql", sql_event(st)));
      break;
    case node::sql_execute:
      if (!st.finished() && st.pending_error.empty()) {
        json::object o;
        o["rowCount"] = st.sql.row_count;
        json::array cols;
        for (const auto& c : st.sql.columns)
          cols.emplace_back(c);
        o["columns"] = std::move(cols);
        o["truncated"] = st.sql.truncated;
        out.push_back(make("rows", o));
      }
      break;
    case node::finalize: {
      json::object o;
      o["status"] = to_string(st.status);
      o["blockedBy"] = layer_or_null(st.blocked_by);
      out.push_back(make("answer", o));
      break;
    }
    default: break;
  }
  return out;
}

} // namespace candor::domain
