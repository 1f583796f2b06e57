#pragma once

// Spotting columns that hold personal data, by their name and by a sample of
// their contents, for `candor catalog draft`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// A column is personal when its name says so (`email`, `phone_number`,
/// `date_of_birth`, `first_name`, a `name` column of a table of people...)
/// or when most of a sample of its text values look like e-mail addresses,
/// telephone numbers, IBANs, postal addresses or people's names. The
/// verdict names the kind and the evidence, so the draft can say why a
/// column was restricted; a reader can follow every rule here. It errs on
/// the side of restricting: a wrongly restricted column costs an edit, a
/// missed one leaks.
namespace candor::data {

/// One column as the draft sees it.
struct column_sample {
  std::string table;
  std::string column;
  /// Non-null values read as text (at most a few hundred), and how many of
  /// them SQLite stored as TEXT (numbers stored as numbers are never
  /// telephone numbers here).
  std::vector<std::string> values;
  size_t text_values = 0;
};

/// Why a column counts as personal data.
struct personal_verdict {
  /// "e-mail addresses", "telephone numbers", "postal addresses", "IBANs",
  /// "birth dates", "national identity numbers", "people's names".
  std::string kind;
  /// "its name 'email'" or "41 of 50 sampled values look like e-mail
  /// addresses", or both joined by "; ".
  std::string evidence;
};

/// The verdict for `c`, or nothing when neither its name nor its values
/// look personal.
std::optional<personal_verdict> personal_data_in(const column_sample& c);

/// The words a column or table name is made of, lower case: `firstName`,
/// `first_name` and `FIRST-NAME` all give {"first", "name"}.
std::vector<std::string> name_words(std::string_view name);

/// True for a valid IBAN (country code, check digits, mod 97), spaces
/// allowed.
bool looks_like_iban(std::string_view text);

} // namespace candor::data
