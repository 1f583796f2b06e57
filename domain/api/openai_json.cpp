// The JSON of the OpenAI-compatible endpoint (see openai_json.hpp).

#include "domain/api/openai_json.hpp"

#include "domain/conversation.hpp"
#include "domain/records.hpp"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>

#include "domain/api/stream_json.hpp"
#include "domain/json_text.hpp"
#include "domain/text.hpp"

namespace candor::domain::openai {

namespace json = boost::json;

namespace {

std::string not_a(std::string_view what, const json::value& v) {
  return "must be " + std::string{what} + ", not " + std::string{json_kind_name(v)};
}

bool valid_role(std::string_view r) noexcept {
  return r == "system" || r == "developer" || r == "user" || r == "assistant"
         || r == "tool";
}

/// Reads one message's text into `text` (parts joined by newlines);
/// problems go to `issues` under `path`.
void read_content(const json::value& content, std::string_view role,
                  const std::string& path, const chat_limits& lim,
                  std::string& text, std::vector<issue>& issues) {
  if (content.is_string()) {
    text = std::string{content.get_string()};
    return;
  }
  if (content.is_null()) {
    if (role != "assistant" && role != "tool")
      issues.push_back({path, "must be a string or an array of text parts"});
    return;
  }
  if (!content.is_array()) {
    issues.push_back(
      {path, not_a("a string or an array of text parts", content)});
    return;
  }
  const auto& parts = content.get_array();
  if (parts.size() > lim.max_parts) {
    issues.push_back(
      {path, "has more than " + std::to_string(lim.max_parts) + " parts"});
    return;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    auto p = path + "[" + std::to_string(i) + "]";
    const auto* part = parts[i].if_object();
    if (!part) {
      issues.push_back({p, not_a("an object", parts[i])});
      continue;
    }
    auto type = part->find("type");
    if (type == part->end() || !type->value().is_string()) {
      issues.push_back({p + ".type", "must be \"text\""});
      continue;
    }
    if (type->value().get_string() != "text") {
      issues.push_back(
        {p + ".type", "only text parts are supported, not \""
                        + std::string{type->value().get_string().subview(0, 40)}
                        + "\""});
      continue;
    }
    auto t = part->find("text");
    if (t == part->end() || !t->value().is_string()) {
      issues.push_back({p + ".text", "must be a string"});
      continue;
    }
    if (!text.empty())
      text += '\n';
    text += t->value().get_string();
  }
}

/// Checks `model`, `stream`, `stream_options` and `n` into `out`.
void read_options(const json::object& obj, chat_request& out, error& e) {
  if (auto it = obj.find("model"); it == obj.end()) {
    e.issues.push_back({"model", "is required (use \"candor\")"});
  } else if (!it->value().is_string()) {
    e.issues.push_back({"model", not_a("a string", it->value())});
  } else if (it->value().get_string() != model_id) {
    auto given = std::string{it->value().get_string().subview(
      0, std::min<size_t>(it->value().get_string().size(), 64))};
    e.code = ec::not_found;
    e.message = "The model '" + given
                + "' does not exist: this server serves the model 'candor'";
    e.issues.push_back({"model", "must be \"candor\""});
  }
  if (auto it = obj.find("stream"); it != obj.end() && !it->value().is_null()) {
    if (it->value().is_bool())
      out.stream = it->value().get_bool();
    else
      e.issues.push_back({"stream", not_a("a boolean", it->value())});
  }
  if (auto it = obj.find("stream_options");
      it != obj.end() && !it->value().is_null()) {
    if (const auto* so = it->value().if_object()) {
      if (auto u = so->find("include_usage");
          u != so->end() && !u->value().is_null()) {
        if (u->value().is_bool())
          out.stream_usage = u->value().get_bool();
        else
          e.issues.push_back(
            {"stream_options.include_usage", not_a("a boolean", u->value())});
      }
    } else {
      e.issues.push_back({"stream_options", not_a("an object", it->value())});
    }
  }
  if (auto it = obj.find("n"); it != obj.end() && !it->value().is_null()) {
    const auto& v = it->value();
    if (!(v.is_int64() && v.get_int64() == 1)
        && !(v.is_uint64() && v.get_uint64() == 1))
      e.issues.push_back({"n", "only 1 choice is supported"});
  }
}

} // namespace

outcome<chat_request> parse_chat_body(std::string_view body,
                                      const chat_limits& lim) {
  boost::system::error_code parse_ec;
  auto root = json::parse(body, parse_ec, {}, json::parse_options{});
  if (parse_ec) {
    error e = make_error(ec::invalid_request, "body is not valid JSON");
    e.issues.push_back({"", parse_ec.message()});
    return e;
  }
  error e = make_error(ec::invalid_request, "request body failed validation");
  if (!root.is_object()) {
    e.issues.push_back({"", not_a("a JSON object", root)});
    return e;
  }
  if (auto dup = duplicate_member(body)) {
    e.issues.push_back({*dup, "appears more than once"});
    return e;
  }
  const auto& obj = root.get_object();
  chat_request out;
  read_options(obj, out, e);
  if (e.code == ec::not_found)
    return e; // the model first, as OpenAI does
  auto it = obj.find("messages");
  if (it == obj.end()) {
    e.issues.push_back({"messages", "is required"});
    return e;
  }
  const auto* msgs = it->value().if_array();
  if (!msgs) {
    e.issues.push_back({"messages", not_a("an array", it->value())});
    return e;
  }
  if (msgs->empty() || msgs->size() > lim.max_messages) {
    e.issues.push_back(
      {"messages", "must hold 1 to " + std::to_string(lim.max_messages)
                     + " messages, got " + std::to_string(msgs->size())});
    return e;
  }
  size_t total = 0;
  std::optional<size_t> last_user;
  std::string question;
  for (size_t i = 0; i < msgs->size(); ++i) {
    auto path = "messages[" + std::to_string(i) + "]";
    const auto* m = (*msgs)[i].if_object();
    if (!m) {
      e.issues.push_back({path, not_a("an object", (*msgs)[i])});
      continue;
    }
    auto role = m->find("role");
    if (role == m->end() || !role->value().is_string()
        || !valid_role(role->value().get_string())) {
      e.issues.push_back({path + ".role", "must be one of system, developer, "
                                          "user, assistant, tool"});
      continue;
    }
    std::string_view r = role->value().get_string();
    auto content = m->find("content");
    std::string text;
    if (content == m->end()) {
      if (r != "assistant")
        e.issues.push_back({path + ".content", "is required"});
    } else {
      read_content(content->value(), r, path + ".content", lim, text, e.issues);
    }
    if (auto n = m->find("name"); n != m->end() && !n->value().is_string())
      e.issues.push_back({path + ".name", not_a("a string", n->value())});
    total += text.size();
    if (r == "user") {
      if (last_user && !trim_ascii(question).empty()) {
        turn t;
        // Bounded (turns, bytes) by the supervisor, as a conversation's.
        t.question = std::string{trim_ascii(question)};
        t.status = std::string{asked_status};
        out.ask.history.push_back(std::move(t));
      }
      last_user = i;
      question = std::move(text);
    }
  }
  if (total > lim.max_text_bytes)
    e.issues.push_back({"messages", "hold more than "
                                      + std::to_string(lim.max_text_bytes)
                                      + " bytes of text"});
  if (!e.issues.empty())
    return e;
  if (!last_user) {
    e.issues.push_back({"messages", "must contain a user message (the last "
                                    "one is the question)"});
    return e;
  }
  auto path = "messages[" + std::to_string(*last_user) + "].content";
  auto q = trim_ascii(question);
  auto n = count_code_points(q);
  if (n < lim.question.min_question) {
    e.issues.push_back({path, "the question must be at least "
                                + std::to_string(lim.question.min_question)
                                + " characters after trimming"});
    return e;
  }
  if (n > lim.question.max_question) {
    e.issues.push_back({path, "the question must be at most "
                                + std::to_string(lim.question.max_question)
                                + " characters, got " + std::to_string(n)});
    return e;
  }
  out.ask.question = std::string{q};
  out.earlier_messages = *last_user;
  return out;
}

// -- the answer as Markdown ---------------------------------------------------

namespace {

/// A table cell: one line, `|` and backslashes escaped, at most 200 bytes.
std::string table_cell(const cell& c) {
  std::string s;
  switch (c.kind) {
    case cell::null: return "";
    case cell::integer: return std::to_string(c.i);
    case cell::real: return json_text(json::value(c.r));
    default: s = c.s;
  }
  if (s.size() > 200) {
    size_t cut = 200;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
      --cut;
    s = s.substr(0, cut) + "\xE2\x80\xA6"; // …
  }
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (ch == '|' || ch == '\\')
      out += '\\';
    out += (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
  }
  return out;
}

/// Text on one line (titles and headings in the Sources list).
std::string one_line(std::string_view s) {
  std::string out{s};
  std::replace_if(
    out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return out;
}

std::string status_line(const ask_state& st) {
  switch (st.status) {
    case status_kind::answered: return {};
    case status_kind::blocked:
      return "**Blocked** by candor's " + std::string{to_string(st.blocked_by)}
             + " layer.";
    case status_kind::refused:
      return "**Refused**: candor will not answer "
             "this.";
    case status_kind::no_results: return "**No results.**";
    default: return "**Error**: candor could not answer.";
  }
}

void append_table(std::string& md, const sql_block& sql, size_t max_rows) {
  if (sql.columns.empty())
    return;
  md += "\n\n|";
  for (const auto& c : sql.columns)
    md += " " + table_cell(cell{cell::text, 0, 0, c}) + " |";
  md += "\n|";
  for (size_t i = 0; i < sql.columns.size(); ++i)
    md += " --- |";
  size_t shown = std::min(sql.rows.size(), max_rows);
  for (size_t r = 0; r < shown; ++r) {
    md += "\n|";
    for (const auto& c : sql.rows[r])
      md += " " + table_cell(c) + " |";
  }
  auto total
    = std::max<int64_t>(sql.row_count, static_cast<int64_t>(sql.rows.size()));
  if (static_cast<int64_t>(shown) < total || sql.truncated)
    md += "\n\n_" + std::to_string(shown) + " of " + std::to_string(total)
          + (sql.truncated ? "+" : "") + " rows shown._";
}

} // namespace

std::string render_markdown(const ask_state& st, size_t max_rows) {
  std::string md = status_line(st);
  if (!md.empty())
    md += "\n\n";
  md += st.answer;
  if (!st.citations.empty()) {
    md += "\n\n**Sources**\n";
    for (size_t i = 0; i < st.citations.size(); ++i) {
      const auto& c = st.citations[i];
      md += "\n" + std::to_string(i + 1) + ". " + one_line(c.doc_title);
      if (!c.heading.empty())
        md += " \xE2\x80\xBA " + one_line(c.heading); // ›
      md += " (`" + one_line(c.chunk_id) + "`)";
    }
  }
  if (st.has_sql && !st.sql.query.empty()) {
    md += "\n\n```sql\n" + st.sql.query + "\n```";
    append_table(md, st.sql, max_rows);
  }
  return md;
}

// -- completions --------------------------------------------------------------

namespace {

json::object candor_extra(const ask_state& st) {
  json::object o;
  o["status"] = to_string(st.status);
  if (st.route == route_kind::none)
    o["route"] = nullptr;
  else
    o["route"] = to_string(st.route);
  if (st.blocked_by == layer_kind::none)
    o["blockedBy"] = nullptr;
  else
    o["blockedBy"] = to_string(st.blocked_by);
  o["requestId"] = st.request.request_id;
  return o;
}

json::object usage(const ask_state& st) {
  json::object u;
  u["prompt_tokens"] = st.usage.tokens_in;
  u["completion_tokens"] = st.usage.tokens_out;
  u["total_tokens"] = st.usage.tokens_in + st.usage.tokens_out;
  return u;
}

json::object envelope(const ask_state& st, int64_t created,
                      std::string_view object) {
  json::object o;
  o["id"] = "chatcmpl-" + st.request.request_id;
  o["object"] = object;
  o["created"] = created;
  o["model"] = model_id;
  return o;
}

void append_event(std::string& out, const json::object& o) {
  append_sse(out, {}, json_text(o));
}

json::object chunk(const ask_state& st, int64_t created, json::object delta,
                   bool stop) {
  auto o = envelope(st, created, "chat.completion.chunk");
  json::object choice;
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  if (stop)
    choice["finish_reason"] = "stop";
  else
    choice["finish_reason"] = nullptr;
  o["choices"] = json::array{std::move(choice)};
  return o;
}

} // namespace

std::string completion_body(const ask_state& st, int64_t created) {
  auto o = envelope(st, created, "chat.completion");
  json::object msg;
  msg["role"] = "assistant";
  msg["content"] = render_markdown(st);
  json::object choice;
  choice["index"] = 0;
  choice["message"] = std::move(msg);
  choice["finish_reason"] = "stop";
  o["choices"] = json::array{std::move(choice)};
  o["usage"] = usage(st);
  o["candor"] = candor_extra(st);
  return json_text(o);
}

std::string completion_stream(const ask_state& st, int64_t created,
                              bool with_usage, size_t piece_bytes) {
  std::string out;
  piece_bytes = std::max<size_t>(piece_bytes, 8);
  append_event(out,
               chunk(st, created, json::object{{"role", "assistant"}}, false));
  auto md = render_markdown(st);
  for (size_t at = 0; at < md.size();) {
    size_t end = std::min(md.size(), at + piece_bytes);
    while (end < md.size()
           && (static_cast<unsigned char>(md[end]) & 0xC0) == 0x80)
      ++end; // never split a UTF-8 sequence
    append_event(out, chunk(st, created,
                            json::object{{"content", md.substr(at, end - at)}},
                            false));
    at = end;
  }
  auto last = chunk(st, created, json::object{}, true);
  last["candor"] = candor_extra(st);
  append_event(out, last);
  if (with_usage) {
    auto u = envelope(st, created, "chat.completion.chunk");
    u["choices"] = json::array{};
    u["usage"] = usage(st);
    append_event(out, u);
  }
  append_sse(out, {}, "[DONE]");
  return out;
}

namespace {

json::object model_object(int64_t created) {
  json::object m;
  m["id"] = model_id;
  m["object"] = "model";
  m["created"] = created;
  m["owned_by"] = "candor";
  return m;
}

} // namespace

std::string models_body(int64_t created) {
  json::object o;
  o["object"] = "list";
  o["data"] = json::array{model_object(created)};
  return json_text(o);
}

std::string model_body(int64_t created) {
  return json_text(model_object(created));
}

std::string error_body(const error& e) {
  auto status = http_status(e.code);
  std::string_view type = status == 401   ? "authentication_error"
                          : status >= 500 ? "server_error"
                                          : "invalid_request_error";
  std::string code{to_string(e.code)};
  if (e.code == ec::not_found && !e.issues.empty()
      && e.issues.front().path == "model")
    code = "model_not_found";
  std::string message = e.message;
  if (!e.issues.empty() && code != "model_not_found") {
    message += ":";
    size_t shown = std::min<size_t>(e.issues.size(), 8);
    for (size_t i = 0; i < shown; ++i) {
      const auto& is = e.issues[i];
      message += (i ? "; " : " ");
      if (!is.path.empty())
        message += is.path + ": ";
      message += is.message;
    }
    if (shown < e.issues.size())
      message += "; and " + std::to_string(e.issues.size() - shown) + " more";
  }
  json::object inner;
  inner["message"] = message;
  inner["type"] = type;
  if (e.issues.empty() || e.issues.front().path.empty())
    inner["param"] = nullptr;
  else
    inner["param"] = e.issues.front().path;
  inner["code"] = code;
  return json_text(json::object{{"error", std::move(inner)}});
}

} // namespace candor::domain::openai
