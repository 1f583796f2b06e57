// The page's demo questions: parsing conf/demo_questions.json and writing
// the GET /demo/questions body.

#include "domain/demo_questions.hpp"

#include <stdexcept>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "domain/embedded.hpp"
#include "domain/json_text.hpp"

namespace candor::domain {

namespace json = boost::json;

namespace {

constexpr auto file = "conf/demo_questions.json";

outcome<std::vector<demo_question>>
parse_list(const json::object& doc, std::string_view name, bool with_kind) {
  auto bad = [&](const std::string& why) {
    return make_error(ec::config_invalid,
                      std::string{file} + ": " + std::string{name} + why);
  };
  auto* list = doc.if_contains(name);
  if (!list || !list->is_array() || list->as_array().empty())
    return bad(": needs a non-empty array");
  std::vector<demo_question> out;
  for (auto& item : list->as_array()) {
    auto at = "[" + std::to_string(out.size()) + "]";
    auto* o = item.if_object();
    auto text = [&](std::string_view key) -> std::string {
      auto* v = o ? o->if_contains(key) : nullptr;
      return v && v->is_string() ? std::string{v->as_string()} : std::string{};
    };
    demo_question q{text("question"), text("kind"), text("shows"),
                    text("answerHas")};
    if (q.question.size() < 3 || q.question.size() > 500)
      return bad(at + ".question: needs 3 to 500 characters");
    if (q.shows.empty())
      return bad(at + ".shows: needs a text");
    if (with_kind && q.kind != "docs" && q.kind != "refusal"
        && q.kind != "out_of_scope")
      return bad(at + ".kind: must be docs, refusal or out_of_scope");
    if (!with_kind && !q.kind.empty())
      return bad(at + ".kind: only the local list has kinds");
    if ((q.kind == "docs") == q.answer_has.empty())
      return bad(at + ".answerHas: needed by a docs sample, and only there");
    out.push_back(std::move(q));
  }
  return out;
}

} // namespace

outcome<demo_question_sets> parse_demo_questions(std::string_view json_text) {
  boost::system::error_code ec;
  auto doc = json::parse(json_text, ec);
  if (ec || !doc.is_object())
    return make_error(ec::config_invalid,
                      std::string{file} + ": not a JSON object");
  auto scripted = parse_list(doc.as_object(), "scripted", false);
  if (!scripted)
    return scripted.err();
  auto local = parse_list(doc.as_object(), "local", true);
  if (!local)
    return local.err();
  return demo_question_sets{std::move(*scripted), std::move(*local)};
}

const demo_question_sets& builtin_demo_questions() {
  static const demo_question_sets sets = [] {
    auto parsed = parse_demo_questions(embedded::demo_questions());
    if (!parsed)
      throw std::logic_error("candor: embedded " + parsed.err().message);
    return std::move(*parsed);
  }();
  return sets;
}

std::string demo_questions_json(const demo_question_sets& sets,
                                std::string_view provider) {
  auto scripted = provider == "fake";
  json::array out;
  for (auto& q : scripted ? sets.scripted : sets.local) {
    json::object o{{"question", q.question}, {"shows", q.shows}};
    if (!q.kind.empty())
      o["kind"] = q.kind;
    out.push_back(std::move(o));
  }
  return json_text(json::object{{"provider", scripted ? "fake" : "local"},
                                {"questions", std::move(out)}});
}

} // namespace candor::domain
