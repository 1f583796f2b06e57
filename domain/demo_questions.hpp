#pragma once

// Declares the page's demo questions (conf/demo_questions.json) and the
// GET /demo/questions body made from them.

#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// The demo questions the page offers as buttons, one list per provider:
/// the scripted provider's scenarios, and questions the local provider
/// answers or refuses as labelled. Data, not code: conf/demo_questions.json,
/// compiled into the binary.
namespace candor::domain {

/// One demo question.
struct demo_question {
  std::string question;
  /// What to expect, for the local list: "docs" (answered by quoting the
  /// documents), "refusal" (a documents question they do not answer) or
  /// "out_of_scope". Empty for a scripted scenario.
  std::string kind;
  /// What asking it shows.
  std::string shows;
  /// For a local "docs" sample: text its quoted answer contains (checked by
  /// the end-to-end test, not served).
  std::string answer_has;
};

/// Both lists of conf/demo_questions.json.
struct demo_question_sets {
  std::vector<demo_question> scripted;
  std::vector<demo_question> local;
};

/// Parses conf/demo_questions.json: each list non-empty, each question 3 to
/// 500 characters with a non-empty `shows`, a local one with a known kind
/// and, when its kind is "docs", an `answerHas`.
outcome<demo_question_sets> parse_demo_questions(std::string_view json_text);

/// The embedded conf/demo_questions.json, parsed once. Throws
/// std::logic_error if it does not parse (a unit test rules that out).
const demo_question_sets& builtin_demo_questions();

/// The GET /demo/questions body for a server running `provider`:
/// `{"provider": p, "questions": [{"question", "shows", "kind"?}...]}`,
/// where `p` names whom the samples were chosen for: "fake" (the scripted
/// scenarios) under the scripted provider, "local" otherwise (under openai
/// the local samples, which are questions about the documents, stand).
std::string demo_questions_json(const demo_question_sets& sets,
                                std::string_view provider);

} // namespace candor::domain
