// Personal-data detection for catalog drafts: the rules on column names,
// then the rules on sampled values (see personal_data.hpp).

#include "data/catalog/personal_data.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace candor::data {

namespace {

bool is_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool has(const std::vector<std::string>& words, std::string_view w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

template <size_t N>
bool has_any(const std::vector<std::string>& words,
             const std::array<std::string_view, N>& any) {
  for (auto w : any)
    if (has(words, w))
      return true;
  return false;
}

/// The name joined without separators: "date_of_birth" -> "dateofbirth".
std::string squashed(const std::vector<std::string>& words) {
  std::string out;
  for (auto& w : words)
    out += w;
  return out;
}

/// Nouns for people: a `name` column of a table called one of these (or
/// `<noun>_name`) names a person.
constexpr std::array<std::string_view, 30> person_nouns{
  "customer", "customers", "client",   "clients",   "contact",    "contacts",
  "user",     "users",     "employee", "employees", "member",     "members",
  "patient",  "patients",  "student",  "students",  "person",     "people",
  "persons",  "guest",     "guests",   "passenger", "passengers", "staff",
  "owner",    "owners",    "buyer",    "buyers",    "driver",     "drivers"};

/// The kind a column's name alone reveals, or empty.
std::string kind_by_name(const std::vector<std::string>& table,
                         const std::vector<std::string>& col) {
  auto joined = squashed(col);
  auto contains = [&](std::string_view part) {
    return joined.find(part) != std::string::npos;
  };
  if (has_any(col, std::array<std::string_view, 2>{"email", "mail"})
      || contains("emailaddress"))
    return "e-mail addresses";
  if (has_any(col, std::array<std::string_view, 7>{"phone", "telephone", "tel",
                                                   "mobile", "cell", "fax",
                                                   "msisdn"})
      || contains("phonenumber") || contains("phoneno"))
    return "telephone numbers";
  if (has_any(col, std::array<std::string_view, 8>{"address", "street", "addr",
                                                   "postcode", "zipcode", "zip",
                                                   "postal", "housenumber"})
      || contains("streetaddress") || contains("postalcode"))
    return "postal addresses";
  if (has(col, "iban") || contains("bankaccount") || contains("accountnumber")
      || contains("accountno"))
    return "IBANs";
  if (has_any(col, std::array<std::string_view, 4>{"birth", "dob", "birthday",
                                                   "birthdate"})
      || contains("dateofbirth") || contains("birthdate"))
    return "birth dates";
  if (has_any(col,
              std::array<std::string_view, 6>{"ssn", "bsn", "nin", "passport",
                                              "nationalid", "taxid"})
      || contains("nationalid") || contains("socialsecurity")
      || contains("passportnumber") || contains("taxnumber")
      || contains("idnumber") || contains("personalnumber"))
    return "national identity numbers";
  // Names: first/last/full/given/family/middle name, surname, and a name
  // column of a table of people or prefixed by a noun for a person.
  if (contains("firstname") || contains("lastname") || contains("fullname")
      || contains("givenname") || contains("familyname")
      || contains("middlename") || contains("maidenname") || has(col, "surname")
      || has(col, "forename"))
    return "people's names";
  if (has(col, "name")) {
    if (col.size() == 1 && !table.empty() && has_any(table, person_nouns))
      return "people's names";
    if (col.size() >= 2 && has_any(col, person_nouns))
      return "people's names";
  }
  return {};
}

bool looks_like_email(std::string_view v) {
  auto at = v.find('@');
  if (at == 0 || at == std::string_view::npos || v.find('@', at + 1) != v.npos)
    return false;
  if (std::any_of(v.begin(), v.end(),
                  [](char c) { return c == ' ' || c == '\t'; }))
    return false;
  auto domain = v.substr(at + 1);
  auto dot = domain.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || domain.size() - dot < 3)
    return false;
  return std::all_of(domain.begin() + static_cast<long>(dot) + 1, domain.end(),
                     is_alpha);
}

/// "+31 6 1234 5678", "(020) 555-0142", "0612345678": 8 to 15 digits with
/// only telephone punctuation, and a sign it is not just a number (a '+', a
/// separator or a leading 0).
bool looks_like_phone(std::string_view v) {
  // A date ("2025-03-14") has the digits and dashes of one.
  if (v.size() >= 10 && v[4] == '-' && v[7] == '-' && is_digit(v[0])
      && is_digit(v[5]) && is_digit(v[8]))
    return false;
  size_t digits = 0;
  bool separator = false;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (is_digit(c))
      ++digits;
    else if (c == ' ' || c == '-' || c == '.' || c == '(' || c == ')'
             || c == '/')
      separator = true;
    else if (!(c == '+' && i == 0))
      return false;
  }
  if (digits < 8 || digits > 15)
    return false;
  return v.front() == '+' || separator || v.front() == '0';
}

/// A street line: a token ending in a street word and a house number, in
/// either order ("12 Baker Street", "Keizersgracht 124", "Hauptstrasse 5").
bool looks_like_street(std::string_view v) {
  static constexpr std::array<std::string_view, 12> whole{
    "street", "st", "road",  "rd",        "avenue", "ave",
    "lane",   "ln", "drive", "boulevard", "blvd",   "way"};
  static constexpr std::array<std::string_view, 11> endings{
    "straat", "weg",   "laan", "plein",  "gracht", "strasse",
    "straße", "gasse", "kade", "singel", "dijk"};
  bool number = false;
  bool street = false;
  std::string word;
  auto flush = [&] {
    if (word.empty())
      return;
    if (std::all_of(word.begin(), word.end(), is_digit)
        || (word.size() >= 2 && is_digit(word.front())))
      number = true;
    for (auto w : whole)
      if (word == w)
        street = true;
    for (auto e : endings)
      if (word.size() > e.size() && word.ends_with(e))
        street = true;
    word.clear();
  };
  for (char c : v) {
    if (c == ' ' || c == ',' || c == '.')
      flush();
    else
      word += lower(c);
  }
  flush();
  return number && street;
}

/// "Anna de Vries", "John O'Neill", "Marie-Claire Dubois": two to four
/// words of letters, each capitalised except lower-case particles.
bool looks_like_person(std::string_view v) {
  static constexpr std::array<std::string_view, 12> particles{
    "van", "de", "der", "den", "von", "da",
    "di",  "le", "la",  "du",  "del", "ter"};
  size_t words = 0;
  size_t capitalised = 0;
  std::string word;
  bool ok = true;
  auto flush = [&] {
    if (word.empty())
      return;
    ++words;
    if (is_upper(word.front())) {
      ++capitalised;
      for (size_t i = 1; i < word.size(); ++i)
        if (is_upper(word[i]) && word[i - 1] != '-' && word[i - 1] != '\'')
          ok = false; // "AL", "XL": not how names are written
    } else if (std::find(particles.begin(), particles.end(), word)
               == particles.end()) {
      ok = false;
    }
    word.clear();
  };
  for (char c : v) {
    if (c == ' ')
      flush();
    else if (is_alpha(c) || c == '-' || c == '\'' || c == '.'
             || static_cast<unsigned char>(c) >= 0x80)
      word += c;
    else
      return false; // digits and symbols: not a name
  }
  flush();
  return ok && words >= 2 && words <= 4 && capitalised >= 2;
}

struct content_rule {
  const char* kind;
  const char* looks;
  bool (*test)(std::string_view);
};

constexpr std::array<content_rule, 5> content_rules{{
  {"e-mail addresses", "e-mail addresses", looks_like_email},
  {"IBANs", "IBANs", looks_like_iban},
  {"telephone numbers", "telephone numbers", looks_like_phone},
  {"postal addresses", "street addresses", looks_like_street},
  {"people's names", "people's names", looks_like_person},
}};

} // namespace

std::vector<std::string> name_words(std::string_view name) {
  std::vector<std::string> out;
  std::string word;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (!is_alpha(c) && !is_digit(c)) {
      if (!word.empty())
        out.push_back(std::move(word));
      word.clear();
      continue;
    }
    // camelCase: a capital after a lower-case letter starts a word.
    if (is_upper(c) && !word.empty() && i > 0 && !is_upper(name[i - 1])) {
      out.push_back(std::move(word));
      word.clear();
    }
    word += lower(c);
  }
  if (!word.empty())
    out.push_back(std::move(word));
  return out;
}

bool looks_like_iban(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ' ')
      s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.size() < 15 || s.size() > 34 || !is_upper(s[0]) || !is_upper(s[1])
      || !is_digit(s[2]) || !is_digit(s[3]))
    return false;
  // Move the first four characters to the end, letters as 10..35, mod 97.
  auto moved = s.substr(4) + s.substr(0, 4);
  unsigned rem = 0;
  for (char c : moved) {
    if (is_digit(c)) {
      rem = (rem * 10 + static_cast<unsigned>(c - '0')) % 97;
    } else if (is_upper(c)) {
      unsigned v = static_cast<unsigned>(c - 'A') + 10;
      rem = (rem * 100 + v) % 97;
    } else {
      return false;
    }
  }
  return rem == 1;
}

std::optional<personal_verdict> personal_data_in(const column_sample& c) {
  auto col = name_words(c.column);
  auto table = name_words(c.table);
  personal_verdict v;
  if (auto kind = kind_by_name(table, col); !kind.empty()) {
    v.kind = kind;
    v.evidence = "its name '" + c.column + "'";
  }
  // Contents: only text values count, and most of the sample must match
  // (at least 3 values), so a stray e-mail in a notes column is not enough.
  if (c.text_values >= 3) {
    for (auto& rule : content_rules) {
      size_t hits = 0;
      for (auto& x : c.values)
        if (!x.empty() && x.size() <= 200 && rule.test(x))
          ++hits;
      // Names: also most values distinct, as people's names are.
      if (rule.test == looks_like_person) {
        std::set<std::string_view> distinct(c.values.begin(), c.values.end());
        if (distinct.size() * 2 < c.values.size() || distinct.size() < 5)
          continue;
      }
      if (hits >= 3 && hits * 10 >= c.values.size() * 6) {
        auto seen = std::to_string(hits) + " of "
                    + std::to_string(c.values.size())
                    + " sampled values look like " + rule.looks;
        if (v.kind.empty()) {
          v.kind = rule.kind;
          v.evidence = seen;
        } else {
          v.evidence += "; " + seen;
        }
        break;
      }
    }
  }
  if (v.kind.empty())
    return std::nullopt;
  return v;
}

} // namespace candor::data
