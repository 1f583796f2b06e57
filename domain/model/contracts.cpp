// Parsing and checking the router's and rag_answer's model replies against
// their contracts.

#include "domain/model/contracts.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "domain/json_text.hpp"
#include "domain/records.hpp"
#include "domain/model/reply_json.hpp"
#include "domain/text.hpp"

namespace candor::domain {

namespace {

error parse_failed(std::string what) {
  return reply_parse_failed(std::move(what));
}

} // namespace

std::string_view unfence_reply(std::string_view text) {
  text = trim_ascii(text);
  if (text.substr(0, 3) != "```" || text.size() < 6
      || text.substr(text.size() - 3) != "```")
    return text;
  auto nl = text.find('\n');
  if (nl == std::string_view::npos)
    return text;
  return trim_ascii(text.substr(nl + 1, text.size() - 3 - nl - 1));
}

outcome<boost::json::object> parse_reply_object(std::string_view text,
                                                size_t max_bytes) {
  if (text.size() > max_bytes)
    return parse_failed("reply is longer than " + std::to_string(max_bytes)
                        + " bytes");
  text = unfence_reply(text);
  boost::system::error_code jec;
  auto v = boost::json::parse(text, jec);
  if (jec)
    return parse_failed("reply is not valid JSON: " + jec.message());
  if (!v.is_object())
    return parse_failed("reply must be a JSON object");
  if (auto dup = duplicate_member(text))
    return parse_failed("field '" + cut_utf8(*dup, 40)
                        + "' appears more than once");
  return std::move(v.as_object());
}

std::string unknown_field(std::string_view name) {
  return "unknown field '" + cut_utf8(std::string{name}, 40) + "'; ";
}

outcome<router_decision> parse_router_reply(std::string_view text) {
  auto parsed = parse_reply_object(text);
  if (!parsed)
    return parsed.err();
  auto& o = parsed.value();
  std::string problems;
  router_decision out;
  for (auto& kv : o)
    if (kv.key() != "route" && kv.key() != "reason"
        && kv.key() != "standalone")
      problems += unknown_field(kv.key());
  if (auto* r = o.if_contains("route"); r && r->is_string()) {
    out.route = parse_route(r->as_string());
    if (out.route == route_kind::none)
      problems += "'route' must be docs, data or out_of_scope; ";
  } else {
    problems += "'route' (string) is required; ";
  }
  if (auto* r = o.if_contains("reason"); r && r->is_string()) {
    out.reason = std::string{r->as_string()};
    auto n = count_code_points(out.reason);
    if (n < 3 || n > 200)
      problems += "'reason' must have 3 to 200 characters; ";
  } else {
    problems += "'reason' (string) is required; ";
  }
  if (auto* r = o.if_contains("standalone")) {
    auto n = r->is_string() ? count_code_points(r->as_string()) : 0;
    if (n < 1 || n > 500)
      problems += "'standalone' must be a string of 1 to 500 characters; ";
    else
      out.standalone = std::string{r->as_string()};
  }
  if (!problems.empty()) {
    problems.resize(problems.size() - 2);
    return parse_failed(problems);
  }
  return out;
}

outcome<rag_reply> parse_rag_reply(std::string_view text) {
  auto parsed = parse_reply_object(text, rag_reply_max_bytes);
  if (!parsed)
    return parsed.err();
  auto& o = parsed.value();
  std::string problems;
  rag_reply out;
  for (auto& kv : o)
    if (kv.key() != "refused" && kv.key() != "confident" && kv.key() != "answer"
        && kv.key() != "citedChunkIds")
      problems += unknown_field(kv.key());
  auto flag = [&](const char* name, bool& dst) {
    if (auto* f = o.if_contains(name); f && f->is_bool())
      dst = f->as_bool();
    else
      problems += std::string{"'"} + name + "' (boolean) is required; ";
  };
  flag("refused", out.refused);
  flag("confident", out.confident);
  if (auto* a = o.if_contains("answer"); a && a->is_string()) {
    out.answer = std::string{a->as_string()};
    auto n = count_code_points(out.answer);
    if (n > rag_answer_max_chars)
      problems += "'answer' must have at most "
                  + std::to_string(rag_answer_max_chars) + " characters; ";
    else if (n == 0 && !out.refused)
      problems += "'answer' must not be empty unless refused; ";
  } else {
    problems += "'answer' (string) is required; ";
  }
  if (auto* c = o.if_contains("citedChunkIds"); c && c->is_array()) {
    auto& arr = c->as_array();
    if (arr.size() > rag_max_cited_ids)
      problems += "'citedChunkIds' must have at most "
                  + std::to_string(rag_max_cited_ids) + " entries; ";
    else
      for (auto& id : arr) {
        if (!id.is_string()) {
          problems += "'citedChunkIds' entries must be strings; ";
          break;
        }
        auto n = count_code_points(id.as_string());
        if (n == 0 || n > rag_cited_id_max_chars) {
          problems += "'citedChunkIds' entries must have 1 to "
                      + std::to_string(rag_cited_id_max_chars)
                      + " characters; ";
          break;
        }
        out.cited_chunk_ids.emplace_back(id.as_string());
      }
  } else {
    problems += "'citedChunkIds' (array of strings) is required; ";
  }
  if (!problems.empty()) {
    problems.resize(problems.size() - 2);
    return parse_failed(problems);
  }
  return out;
}

} // namespace candor::domain
