#pragma once

// Declares the expected answer types of questions and the check that a
// passage holds an expression of the type asked for.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

/// Expected answer types, the classic question-answering check: a question
/// such as "How much does X weigh?" asks for a weight, so a passage can
/// only answer it if it states one ("12.4 kg"). The question side reads
/// the question's wording ("how much ... cost", "how long", "phone
/// number", a measured attribute such as "torque"); the passage side looks
/// for an expression of that type (an amount of money, a number with a
/// unit, a year, a time of day, ...). Pure, deterministic, English only.
namespace candor::data {

enum class answer_type : uint8_t {
  none,        ///< no specific type (yes/no, how-to, open questions)
  money,       ///< "how much does it cost": "EUR 12", "€89", "free"
  weight,      ///< "how much does it weigh": "12 kg"
  count,       ///< "how many ...": a number, in digits or words
  duration,    ///< "how long", "how many days": "30 days", "2 years"
  frequency,   ///< "how often": "every 3 months", "once a year"
  distance,    ///< "how far": "60 km"
  year,        ///< "which year": "2009"
  time_of_day, ///< "what time": "14:00", "2 pm", "noon"
  phone,       ///< "phone number": seven digits or more
  percentage,  ///< "what percentage": "5%", "5 percent"
  email,       ///< "email address": "x@y.example"
  temperature, ///< "what temperature": "20 °C", "20 degrees"
  pressure,    ///< "what pressure": "2.5 bar", "40 psi"
  torque,      ///< "how much torque": "5 Nm"
  ratio,       ///< "what ratio": "50:34", "1/2", "2x"
  energy,      ///< "what capacity": "500 Wh"
  discount,    ///< "what discount": a percentage or an amount of money
};

std::string_view to_string(answer_type x) noexcept;

/// The answer type `question` asks for, `answer_type::none` when its
/// wording names none. Case and punctuation do not matter.
answer_type expected_answer_type(std::string_view question);

/// True when `text` holds an expression of type `t`; always true for
/// `answer_type::none`.
bool holds_answer_of_type(std::string_view text, answer_type t);

/// Bit `1 << t` of the result is set for every type `t` that `text`
/// holds (`answer_type::none` included), computed in one pass.
uint32_t answer_type_mask(std::string_view text);

/// True when `mask` (from `answer_type_mask`) has type `t`.
constexpr bool mask_has(uint32_t mask, answer_type t) noexcept {
  return (mask >> static_cast<unsigned>(t)) & 1u;
}

/// Tokens of `text` for the checks above (exposed for tests): lower-case
/// ASCII words, numbers (digits with inner '.' or ','), and the symbols
/// that carry a type: "eur" for '€', "gbp" for '£', "usd" for '$', "deg"
/// for '°', and '%', ':', '/', '@', '+' as themselves. Everything else
/// separates tokens.
std::vector<std::string> answer_tokens(std::string_view text);

} // namespace candor::data
