// The /ask response, written once (write_response) for three writers: the
// one-pass schema check finalize runs on every response
// (response_fits_schema), the boost::json value validate_response reads
// (to_json) and the body text the HTTP session sends (response_text).
// Declared in domain/api/api_json.hpp.

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "domain/api/api_json.hpp"
#include "domain/json_text.hpp"
#include "domain/api/response_check.hpp"

namespace json = boost::json;

namespace candor::domain {

namespace {

double round4(double x) {
  if (!std::isfinite(x))
    return 0;
  return std::round(x * 10000.0) / 10000.0;
}

/// Builds a boost::json value from the calls json_text_writer takes, on
/// `sp`; the other writer of `write_response`. Keys are kept as views: they
/// are the string literals of write_response.
class json_value_builder {
public:
  // root_ lives on `sp` too: assigning a value from another storage would
  // copy the whole response.
  explicit json_value_builder(json::storage_ptr sp)
      : sp_(std::move(sp)), root_(sp_) {
    open_.reserve(8);
  }

  void begin_object() {
    open(json::object(sp_));
  }
  void end_object() {
    close();
  }
  void begin_array() {
    open(json::array(sp_));
  }
  void end_array() {
    close();
  }
  void key(std::string_view k) {
    key_ = k;
  }
  void string(std::string_view s) {
    put(json::string_view{s.data(), s.size()});
  }
  void null() {
    put(nullptr);
  }
  void boolean(bool b) {
    put(b);
  }
  void integer(int64_t x) {
    put(x);
  }
  void real(double x) {
    put(x);
  }

  json::value take() {
    return std::move(root_);
  }

private:
  /// An open container and the key it goes under in its parent.
  struct level {
    json::value v;
    std::string_view key;
  };

  template <class T>
  void put(T&& x) {
    if (open_.empty()) {
      root_ = json::value(std::forward<T>(x), sp_);
    } else if (auto* o = open_.back().v.if_object()) {
      o->emplace(json::string_view{key_.data(), key_.size()},
                 std::forward<T>(x));
    } else {
      open_.back().v.get_array().emplace_back(std::forward<T>(x));
    }
  }

  void open(json::value v) {
    open_.push_back(level{std::move(v), key_});
  }

  void close() {
    auto done = std::move(open_.back());
    open_.pop_back();
    key_ = done.key;
    put(std::move(done.v));
  }

  json::storage_ptr sp_;
  json::value root_;
  std::vector<level> open_;
  std::string_view key_;
};

template <class W>
void string_or_null(W& w, const std::string& s) {
  if (s.empty())
    w.null();
  else
    w.string(s);
}

template <class W>
void strings(W& w, const std::vector<std::string>& xs) {
  w.begin_array();
  for (const auto& x : xs)
    w.string(x);
  w.end_array();
}

template <class W>
void write_cell(W& w, const cell& c) {
  switch (c.kind) {
    case cell::integer: w.integer(c.i); return;
    case cell::real:
      if (std::isfinite(c.r))
        w.real(c.r);
      else
        w.null();
      return;
    case cell::text:
    case cell::blob: w.string(c.s); return;
    default: w.null();
  }
}

template <class W>
void write_sql(W& w, const sql_block& sql) {
  w.begin_object();
  w.key("query");
  w.string(sql.query);
  w.key("originalQuery");
  string_or_null(w, sql.original_query);
  w.key("corrections");
  w.integer(sql.corrections);
  w.key("limitApplied");
  w.boolean(sql.limit_applied);
  w.key("columns");
  strings(w, sql.columns);
  w.key("rows");
  w.begin_array();
  for (const auto& row : sql.rows) {
    w.begin_array();
    for (const auto& c : row)
      write_cell(w, c);
    w.end_array();
  }
  w.end_array();
  w.key("rowCount");
  w.integer(sql.row_count);
  w.key("truncated");
  w.boolean(sql.truncated);
  w.key("lastError");
  string_or_null(w, sql.last_error);
  w.key("plan");
  string_or_null(w, sql.plan);
  w.end_object();
}

/// The /ask response, once, for both writers: to_json (a value to
/// validate) and response_text (the body).
template <class W>
void write_response(W& w, const ask_state& st) {
  w.begin_object();
  w.key("requestId");
  w.string(st.request.request_id);
  w.key("conversationId");
  string_or_null(w, st.request.conversation_id);
  w.key("route");
  if (st.route == route_kind::none)
    w.null();
  else
    w.string(to_string(st.route));
  w.key("routeReason");
  string_or_null(w, st.route_reason);
  w.key("standaloneQuestion");
  string_or_null(w, st.standalone);
  w.key("overridden");
  w.boolean(st.overridden);
  w.key("status");
  w.string(to_string(st.status));
  w.key("blockedBy");
  if (st.blocked_by == layer_kind::none)
    w.null();
  else
    w.string(to_string(st.blocked_by));
  w.key("answer");
  w.string(st.answer);
  w.key("citations");
  w.begin_array();
  for (const auto& c : st.citations) {
    w.begin_object();
    w.key("chunkId");
    w.string(c.chunk_id);
    w.key("docTitle");
    w.string(c.doc_title);
    w.key("heading");
    w.string(c.heading);
    w.key("score");
    w.real(round4(c.score));
    w.key("snippet");
    w.string(c.snippet);
    w.key("sanitized");
    w.boolean(c.sanitized);
    w.end_object();
  }
  w.end_array();
  w.key("sql");
  if (st.has_sql)
    write_sql(w, st.sql);
  else
    w.null();
  w.key("followUpQuestions");
  strings(w, st.follow_ups);
  w.key("guardrail");
  w.begin_object();
  w.key("verdict");
  w.string(st.guardrail.verdict);
  w.key("layer");
  if (st.guardrail.layer == layer_kind::none)
    w.null();
  else
    w.string(to_string(st.guardrail.layer));
  w.key("reasons");
  strings(w, st.guardrail.reasons);
  w.end_object();
  w.key("warnings");
  w.begin_array();
  for (const auto& x : st.request.warnings)
    w.string(x);
  for (const auto& x : st.warnings)
    if (std::find(st.request.warnings.begin(), st.request.warnings.end(), x)
        == st.request.warnings.end())
      w.string(x);
  w.end_array();
  w.key("meta");
  w.begin_object();
  w.key("provider");
  w.string(st.service.provider);
  w.key("models");
  strings(w, st.usage.models.empty() ? st.service.models : st.usage.models);
  w.key("embedder");
  w.string(st.service.embedder);
  w.key("guardrailMode");
  w.string(st.service.guardrail_mode);
  w.key("llmCalls");
  w.integer(st.usage.calls);
  w.key("fallbackUsed");
  w.boolean(st.usage.fallback_used);
  w.key("tokens");
  w.begin_object();
  w.key("input");
  w.integer(st.usage.tokens_in);
  w.key("output");
  w.integer(st.usage.tokens_out);
  w.key("total");
  w.integer(st.usage.tokens_in + st.usage.tokens_out);
  w.end_object();
  w.key("costUsd");
  w.real(std::isfinite(st.usage.cost_usd) ? st.usage.cost_usd : 0.0);
  w.key("costIsFictional");
  w.boolean(st.service.cost_is_fictional);
  w.key("latencyMs");
  w.integer(st.latency_ms);
  w.key("trace");
  w.begin_array();
  for (const auto& t : st.trace) {
    w.begin_object();
    w.key("node");
    w.string(to_string(t.step));
    w.key("outcome");
    w.string(t.outcome);
    w.key("micros");
    w.integer(t.micros);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.end_object();
}

} // namespace

json::object to_json(const ask_state& st, json::storage_ptr sp) {
  json_value_builder b{sp};
  write_response(b, st);
  return std::move(b.take().get_object());
}

bool response_fits_schema(const ask_state& st) {
  response_stream_check check;
  write_response(check, st);
  return check.valid();
}

std::string response_text(const ask_state& st) {
  std::string out;
  out.reserve(1024);
  json_text_writer w{out};
  write_response(w, st);
  return out;
}

} // namespace candor::domain
