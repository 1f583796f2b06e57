// The expected-answer-type check: what kind of answer a question asks for,
// and whether a passage states an expression of that kind.

#include "data/retrieval/answer_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

namespace candor::data {

namespace {

using words = std::initializer_list<std::string_view>;

bool one_of(std::string_view x, words ws) {
  return std::find(ws.begin(), ws.end(), x) != ws.end();
}

template <size_t N>
bool one_of(std::string_view x, const std::array<std::string_view, N>& ws) {
  return std::find(ws.begin(), ws.end(), x) != ws.end();
}

bool is_number(std::string_view t) {
  return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0]));
}

bool is_number_word(std::string_view t) {
  return one_of(
    t, {"one",     "two",   "three", "four",   "five",   "six",     "seven",
        "eight",   "nine",  "ten",   "eleven", "twelve", "fifteen", "twenty",
        "thirty",  "forty", "fifty", "sixty",  "ninety", "hundred", "thousand",
        "million", "dozen", "half",  "single", "couple"});
}

bool is_quantity(std::string_view t) {
  return is_number(t) || is_number_word(t);
}

/// A quantity, or a word that counts one unit or a few ("a week", "a few
/// days", "several months", "the same day").
bool is_loose_quantity(std::string_view t) {
  return is_quantity(t)
         || one_of(t, {"a", "an", "few", "several", "same", "next", "each",
                       "every", "per"});
}

// -- the question's side ------------------------------------------------------

/// The question's tokens with a few sequence tests.
struct question_view {
  std::vector<std::string> t;

  bool has(std::string_view w) const {
    return std::find(t.begin(), t.end(), w) != t.end();
  }

  template <class Ws = words>
  bool has_any(const Ws& ws) const {
    return std::any_of(ws.begin(), ws.end(),
                       [&](std::string_view w) { return has(w); });
  }

  /// Position just after the first occurrence of the sequence `ws`, or 0.
  size_t after(words ws) const {
    auto n = ws.size();
    for (size_t i = 0; i + n <= t.size(); ++i)
      if (std::equal(ws.begin(), ws.end(), t.begin() + i))
        return i + n;
    return 0;
  }

  bool has_seq(words ws) const {
    return after(ws) > 0;
  }

  /// True when a word of `ws` occurs within `span` tokens after `ws0`.
  template <class Ws = words>
  bool followed_by(words first, const Ws& ws, size_t span) const {
    auto at = after(first);
    for (size_t i = at; at > 0 && i < t.size() && i < at + span; ++i)
      if (one_of(t[i], ws))
        return true;
    return false;
  }

  /// The first (`first`) or last word of the noun phrase after `wh`
  /// ("what is the recommended retail price of ..." gives "recommended"
  /// and "price"): an optional copula and determiner are skipped, and the
  /// phrase ends before a preposition or a verb of the question's frame,
  /// or after four words. Empty when `wh` is missing.
  std::string_view asked_noun(std::string_view wh, bool first) const {
    auto at = std::find(t.begin(), t.end(), wh);
    if (at == t.end())
      return {};
    ++at;
    if (at != t.end() && one_of(*at, {"is", "are", "was", "were"}))
      ++at;
    if (at != t.end() && one_of(*at, {"the", "a", "an", "your", "my"}))
      ++at;
    auto end = at;
    while (end != t.end() && end - at < 4
           && !one_of(*end, {"of", "for", "on", "in", "at", "to", "does", "do",
                             "did", "is", "are", "will", "would", "can",
                             "should", "with", "when", "if"}))
      ++end;
    if (end == at)
      return {};
    return first ? *at : *(end - 1);
  }

  /// A wh-question (what, which, how) rather than a yes/no one.
  bool asks() const {
    return has_any({"what", "which", "how"});
  }
};

constexpr std::array<std::string_view, 20> duration_units
  = {"second", "seconds", "minute", "minutes", "min",    "mins",   "hour",
     "hours",  "hr",      "hrs",    "day",     "days",   "week",   "weeks",
     "month",  "months",  "year",   "years",   "decade", "decades"};

constexpr std::array<std::string_view, 15> money_words
  = {"cost", "costs", "price", "prices",    "pay",   "paid",  "charge", "fee",
     "fees", "spend", "spent", "expensive", "cheap", "worth", "buy"};

} // namespace

std::string_view to_string(answer_type x) noexcept {
  switch (x) {
    case answer_type::none: return "none";
    case answer_type::money: return "money";
    case answer_type::weight: return "weight";
    case answer_type::count: return "count";
    case answer_type::duration: return "duration";
    case answer_type::frequency: return "frequency";
    case answer_type::distance: return "distance";
    case answer_type::year: return "year";
    case answer_type::time_of_day: return "time of day";
    case answer_type::phone: return "phone number";
    case answer_type::percentage: return "percentage";
    case answer_type::email: return "email address";
    case answer_type::temperature: return "temperature";
    case answer_type::pressure: return "pressure";
    case answer_type::torque: return "torque";
    case answer_type::ratio: return "ratio";
    case answer_type::energy: return "energy";
    case answer_type::discount: return "discount";
  }
  return "none";
}

std::vector<std::string> answer_tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool number = false;
  auto flush = [&] {
    if (!cur.empty())
      out.push_back(std::move(cur));
    cur.clear();
    number = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (std::isdigit(c)) {
      if (!number)
        flush();
      number = true;
      cur += static_cast<char>(c);
    } else if (std::isalpha(c)) {
      if (number)
        flush();
      cur += static_cast<char>(std::tolower(c));
    } else if (number && (c == '.' || c == ',') && i + 1 < text.size()
               && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      cur += static_cast<char>(c); // 1,500 and 6.95 stay one number
    } else {
      flush();
      auto rest = text.substr(i);
      auto symbol = [&](std::string_view utf8, const char* token) {
        if (rest.substr(0, utf8.size()) != utf8)
          return false;
        out.emplace_back(token);
        i += utf8.size() - 1;
        return true;
      };
      if (symbol("\xE2\x82\xAC", "eur") || symbol("\xC2\xA3", "gbp")
          || symbol("\xC2\xB0", "deg"))
        continue;
      if (c == '$')
        out.emplace_back("usd");
      else if (c == '%' || c == ':' || c == '/' || c == '@' || c == '+')
        out.emplace_back(1, static_cast<char>(c));
    }
  }
  flush();
  return out;
}

answer_type expected_answer_type(std::string_view question) {
  question_view q{answer_tokens(question)};
  if (!q.asks())
    return answer_type::none;
  if (q.has_seq({"email", "address"}) || q.has_seq({"mail", "address"}))
    return answer_type::email;
  if ((q.has_any({"phone", "telephone"}) && q.has("number"))
      || (q.has("number") && q.has_any({"call", "ring", "dial"})))
    return answer_type::phone;
  if (q.has("torque"))
    return answer_type::torque;
  if (q.has("pressure"))
    return answer_type::pressure;
  if (q.has("temperature"))
    return answer_type::temperature;
  if (q.has("ratio"))
    return answer_type::ratio;
  if (q.has_seq({"what", "capacity"}) || q.has_seq({"which", "capacity"}))
    return answer_type::energy;
  if (q.has_any({"weigh", "weighs", "weight", "heavy"}))
    return answer_type::weight;
  if (q.followed_by({"what"}, {"discount", "discounts"}, 2)
      || q.followed_by({"which"}, {"discount", "discounts"}, 2)
      || q.followed_by({"how", "much"}, {"discount"}, 1))
    return answer_type::discount;
  if (q.has_any({"percentage", "percent"}))
    return answer_type::percentage;
  if (q.has_seq({"what", "year"}) || q.has_seq({"which", "year"}))
    return answer_type::year;
  if (q.has_seq({"what", "time"}) || q.has_seq({"which", "time"})
      || q.has_seq({"latest", "time"}) || q.has_seq({"earliest", "time"}))
    return answer_type::time_of_day;
  if (q.has_seq({"how", "far"}) || q.has_seq({"what", "distance"})
      || q.has_seq({"which", "distance"}))
    return answer_type::distance;
  if (q.has_seq({"how", "often"}) || q.has_seq({"how", "frequently"}))
    return answer_type::frequency;
  if (q.has_seq({"how", "long"}) || q.has_seq({"how", "quickly"})
      || q.has_seq({"how", "soon"})
      || q.followed_by({"how", "many"}, duration_units, 2)
      || q.followed_by({"how", "much"}, {"time", "notice"}, 1))
    return answer_type::duration;
  if (q.has_seq({"by", "how", "much"}))
    return answer_type::count; // an amount or a percentage: some number
  if (q.has_seq({"how", "much"})
      && (q.has_any(money_words)
          || q.followed_by({"how", "much"},
                           {"is", "are", "was", "does", "do", "will"}, 1)))
    return answer_type::money;
  // "What does it cost", "what do I pay", "what is the price of": the
  // money word is what is asked, not a word elsewhere in the question
  // ("Which retailers qualify for a price match?").
  constexpr std::array<std::string_view, 6> asked_money
    = {"price", "prices", "cost", "costs", "fee", "fees"};
  if ((q.has("what") && q.has_any({"cost", "costs", "pay", "paid"}))
      || one_of(q.asked_noun("what", true), asked_money)
      || one_of(q.asked_noun("what", false), asked_money)
      || one_of(q.asked_noun("which", true), asked_money)
      || one_of(q.asked_noun("which", false), asked_money))
    return answer_type::money;
  if (q.has_seq({"how", "many"}) || q.has_seq({"how", "much"}))
    return answer_type::count;
  return answer_type::none;
}

// -- the passage's side -------------------------------------------------------

namespace {

/// True when a token of `units` follows a quantity, at most `gap` tokens
/// after it ("30 working days", "5-year").
template <class Ws = words>
bool quantity_then(const std::vector<std::string>& t, const Ws& units,
                   size_t gap = 2, bool loose = false) {
  for (size_t i = 0; i < t.size(); ++i) {
    if (!one_of(t[i], units))
      continue;
    for (size_t j = i; j > 0 && i - j < gap + 1; --j)
      if (loose ? is_loose_quantity(t[j - 1]) : is_quantity(t[j - 1]))
        return true;
  }
  return false;
}

bool has_any_token(const std::vector<std::string>& t, words ws) {
  return std::any_of(t.begin(), t.end(),
                     [&](const std::string& x) { return one_of(x, ws); });
}

bool has_pair(const std::vector<std::string>& t, std::string_view a,
              std::string_view b) {
  for (size_t i = 0; i + 1 < t.size(); ++i)
    if (t[i] == a && t[i + 1] == b)
      return true;
  return false;
}

bool is_money(const std::vector<std::string>& t) {
  constexpr std::array<std::string_view, 5> currency
    = {"eur", "euro", "euros", "gbp", "usd"};
  for (size_t i = 0; i < t.size(); ++i)
    if (one_of(t[i], currency)
        && ((i > 0 && is_number(t[i - 1]))
            || (i + 1 < t.size() && is_number(t[i + 1]))))
      return true;
  // "free", but not "free to" (permission: "free to set their prices").
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] == "free" && (i + 1 == t.size() || t[i + 1] != "to"))
      return true;
  return has_pair(t, "no", "charge") || has_pair(t, "no", "cost")
         || has_pair(t, "our", "expense") || has_pair(t, "our", "cost")
         || has_pair(t, "costs", "nothing") || has_pair(t, "pay", "nothing")
         || has_pair(t, "we", "pay") || has_pair(t, "we", "cover");
}

/// A digit run of seven digits or more, allowing spaces, '-', '.', '(',
/// ')' and a leading '+' between the digits.
bool is_phone(std::string_view text) {
  size_t digits = 0;
  for (auto c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (++digits >= 7)
        return true;
    } else if (!(c == ' ' || c == '-' || c == '.' || c == '(' || c == ')'
                 || c == '+')) {
      digits = 0;
    }
  }
  return false;
}

bool is_year(const std::string& x) {
  if (x.size() != 4 || !std::all_of(x.begin(), x.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return false;
  return x >= "1900" && x <= "2099";
}

bool is_time_of_day(const std::vector<std::string>& t) {
  for (size_t i = 0; i < t.size(); ++i) {
    if (one_of(t[i], {"noon", "midday", "midnight"}))
      return true;
    if (!is_number(t[i]))
      continue;
    if (i + 2 < t.size() && t[i + 1] == ":" && is_number(t[i + 2]))
      return true;
    if (i + 1 < t.size() && one_of(t[i + 1], {"am", "pm", "clock"}))
      return true;
    // "2 p.m." and "9 a.m."
    if (i + 2 < t.size() && one_of(t[i + 1], {"a", "p"}) && t[i + 2] == "m")
      return true;
    // "14.00": hours and two-digit minutes.
    auto dot = t[i].find('.');
    if (dot != std::string::npos && dot <= 2 && t[i].size() == dot + 3
        && std::stoi(t[i].substr(0, dot)) <= 24
        && std::stoi(t[i].substr(dot + 1)) <= 59)
      return true;
  }
  return false;
}

bool is_ratio(const std::vector<std::string>& t) {
  for (size_t i = 0; i + 2 < t.size(); ++i)
    if (is_number(t[i]) && one_of(t[i + 1], {":", "/", "x"})
        && is_number(t[i + 2]))
      return true;
  return false;
}

/// `holds_answer_of_type` on text already cut into tokens.
bool holds(std::string_view text, const std::vector<std::string>& t,
           answer_type type) {
  switch (type) {
    case answer_type::none: return true;
    case answer_type::money: return is_money(t);
    case answer_type::weight:
      return quantity_then(t, {"kg", "g", "gram", "grams", "kilo", "kilos",
                               "kilogram", "kilograms", "lb", "lbs", "tonne",
                               "tonnes"});
    case answer_type::count:
      return std::any_of(t.begin(), t.end(),
                         [](const std::string& x) { return is_quantity(x); });
    case answer_type::duration:
      return quantity_then(t, duration_units, 3, true)
             || has_any_token(t, {"lifetime", "immediately", "overnight",
                                  "indefinitely", "instantly"});
    case answer_type::frequency:
      return has_any_token(t, {"every", "once", "twice", "daily", "weekly",
                               "monthly", "yearly", "annually", "annual", "per",
                               "each", "times"});
    case answer_type::distance:
      return quantity_then(t, {"km", "kilometre", "kilometres", "kilometer",
                               "kilometers", "metre", "metres", "meter",
                               "meters", "mile", "miles"});
    case answer_type::year: return std::any_of(t.begin(), t.end(), is_year);
    case answer_type::time_of_day: return is_time_of_day(t);
    case answer_type::phone: return is_phone(text);
    case answer_type::percentage:
      return quantity_then(t, {"%", "percent"}, 1)
             || has_pair(t, "per", "cent");
    case answer_type::email:
      for (size_t i = 1; i + 1 < t.size(); ++i)
        if (t[i] == "@")
          return true;
      return false;
    case answer_type::temperature:
      return quantity_then(t, {"deg", "degree", "degrees", "celsius"}, 1);
    case answer_type::pressure:
      return quantity_then(t, {"bar", "psi", "kpa"}, 1);
    case answer_type::torque: return quantity_then(t, {"nm"}, 1);
    case answer_type::ratio: return is_ratio(t);
    case answer_type::energy:
      return quantity_then(t, {"wh", "kwh", "mah", "ah"}, 1);
    case answer_type::discount:
      return holds(text, t, answer_type::percentage)
             || holds(text, t, answer_type::money);
  }
  return true;
}

constexpr auto last_type = answer_type::discount;

} // namespace

bool holds_answer_of_type(std::string_view text, answer_type type) {
  return type == answer_type::none || holds(text, answer_tokens(text), type);
}

uint32_t answer_type_mask(std::string_view text) {
  auto t = answer_tokens(text);
  uint32_t mask = 0;
  for (unsigned i = 0; i <= static_cast<unsigned>(last_type); ++i)
    if (holds(text, t, static_cast<answer_type>(i)))
      mask |= 1u << i;
  return mask;
}

} // namespace candor::data
