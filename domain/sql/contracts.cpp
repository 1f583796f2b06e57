// Parsing and checking the data branch's model replies (sql_generate,
// sql_correct, sql_answer) against their contracts.

#include "domain/sql/contracts.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "domain/model/reply_json.hpp"
#include "domain/text.hpp"

namespace candor::domain {

namespace {

error parse_failed(std::string what) {
  return reply_parse_failed(std::move(what));
}

/// Reads `followUps`; `min` is the fewest required when present.
void read_follow_ups(const boost::json::object& o, size_t min, bool required,
                     std::vector<std::string>& out, std::string& problems) {
  auto* f = o.if_contains("followUps");
  if (!f) {
    if (required)
      problems += "'followUps' (array of 1 to 3 strings) is required; ";
    return;
  }
  if (!f->is_array()) {
    problems += "'followUps' must be an array of strings; ";
    return;
  }
  auto& a = f->as_array();
  if (a.size() < min || a.size() > 3) {
    problems
      += "'followUps' must hold " + std::to_string(min) + " to 3 questions; ";
    return;
  }
  for (auto& x : a) {
    if (!x.is_string()) {
      problems += "'followUps' must hold strings only; ";
      return;
    }
    std::string q{trim_ascii(std::string_view{x.as_string()})};
    auto n = count_code_points(q);
    if (n < 3 || n > 200) {
      problems += "each follow-up question must have 3 to 200 characters; ";
      return;
    }
    out.push_back(std::move(q));
  }
}

outcome<boost::json::object> parse_object(std::string_view text) {
  return parse_reply_object(text);
}

error finish_problems(std::string& problems) {
  problems.resize(problems.size() - 2);
  return parse_failed(problems);
}

} // namespace

outcome<sql_reply> parse_sql_reply(std::string_view text) {
  text = unfence_reply(text);
  sql_reply out;
  if (text == no_answer_sentinel) {
    out.abstained = true;
    return out;
  }
  auto o = parse_object(text);
  if (!o)
    return o.err();
  std::string problems;
  for (auto& kv : *o)
    if (kv.key() != "sql" && kv.key() != "followUps" && kv.key() != "reason"
        && kv.key() != "plan")
      problems += unknown_field(kv.key());
  if (auto* pl = o->if_contains("plan")) {
    if (!pl->is_string() || pl->as_string().empty()
        || pl->as_string().size() > 400)
      problems += "'plan' must be a string of 1 to 400 characters; ";
    else
      out.plan = std::string{pl->as_string()};
  }
  if (auto* r = o->if_contains("reason")) {
    if (!r->is_string() || r->as_string().empty()
        || r->as_string().size() > 600)
      problems += "'reason' must be a string of 1 to 600 characters; ";
    else
      out.reason = std::string{r->as_string()};
  }
  if (auto* s = o->if_contains("sql"); s && s->is_string()) {
    std::string_view sql = trim_ascii(std::string_view{s->as_string()});
    if (sql == no_answer_sentinel)
      out.abstained = true;
    else if (sql.empty())
      problems += "'sql' must not be empty; ";
    else if (sql.size() > max_model_sql_bytes)
      problems += "'sql' must be at most " + std::to_string(max_model_sql_bytes)
                  + " bytes; ";
    else
      out.sql = std::string{sql};
  } else {
    problems += "'sql' (string) is required, or reply NO_ANSWER; ";
  }
  read_follow_ups(*o, 0, false, out.follow_ups, problems);
  if (!problems.empty())
    return finish_problems(problems);
  if (out.abstained)
    out.follow_ups.clear();
  else
    out.reason.clear(); // a reason goes only with an abstention
  return out;
}

outcome<sql_answer_reply> parse_sql_answer_reply(std::string_view text) {
  auto o = parse_object(unfence_reply(text));
  if (!o)
    return o.err();
  std::string problems;
  sql_answer_reply out;
  for (auto& kv : *o)
    if (kv.key() != "answer" && kv.key() != "followUps")
      problems += unknown_field(kv.key());
  if (auto* a = o->if_contains("answer"); a && a->is_string()) {
    out.answer = std::string{trim_ascii(std::string_view{a->as_string()})};
    auto n = count_code_points(out.answer);
    if (n < 1 || n > 2000)
      problems += "'answer' must have 1 to 2000 characters; ";
  } else {
    problems += "'answer' (string) is required; ";
  }
  read_follow_ups(*o, 1, true, out.follow_ups, problems);
  if (!problems.empty())
    return finish_problems(problems);
  return out;
}

} // namespace candor::domain
