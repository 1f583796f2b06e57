#pragma once

// Test helper: sample /ask states and citations for response tests.

#include <string>
#include <utility>

#include "domain/types.hpp"

namespace candor::test {

/// A citation of chunk `id`.
inline domain::citation citation_of(std::string id, std::string doc_title,
                                    std::string heading, double score,
                                    std::string snippet) {
  domain::citation c;
  c.chunk_id = std::move(id);
  c.doc_title = std::move(doc_title);
  c.heading = std::move(heading);
  c.score = score;
  c.snippet = std::move(snippet);
  return c;
}

/// A finished data answer that touches every part of the schema.
inline domain::ask_state sample_state() {
  domain::ask_state st;
  st.request.request_id = "req-12345678";
  st.request.question = "What was revenue in March?";
  st.request.warnings = {"request_id_replaced"};
  st.route = domain::route_kind::data;
  st.route_reason = "asks for a sales figure";
  st.status = domain::status_kind::answered;
  st.answer = "Revenue in March was 12,345.67.";
  st.citations = {citation_of("handbook#refunds-1", "Handbook", "Refunds",
                              0.123456789, "Refunds are...")};
  st.has_sql = true;
  st.sql.query = "SELECT 1 LIMIT 200";
  st.sql.columns = {"n", "name", "x", "nothing"};
  domain::cell i;
  i.kind = domain::cell::integer;
  i.i = 42;
  domain::cell t;
  t.kind = domain::cell::text;
  t.s = "Ada";
  domain::cell r;
  r.kind = domain::cell::real;
  r.r = 1.5;
  domain::cell n;
  st.sql.rows = {{i, t, r, n}};
  st.sql.row_count = 1;
  st.sql.limit_applied = true;
  st.follow_ups = {"And in April?"};
  st.warnings = {"limit_applied", "request_id_replaced"};
  st.usage.calls = 2;
  st.usage.tokens_in = 100;
  st.usage.tokens_out = 20;
  st.usage.cost_usd = 0.0001;
  st.usage.models = {"scripted-primary"};
  st.service.provider = "fake";
  st.service.models = {"scripted-primary", "scripted-fallback"};
  st.service.embedder = "tfidf-v1";
  st.service.guardrail_mode = "rules";
  st.trace = {{domain::node::guard_input, "pass", 12},
              {domain::node::router, "data", 40}};
  st.latency_ms = 7;
  return st;
}

} // namespace candor::test
