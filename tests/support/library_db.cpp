// Test helper: the lending-library database (see library_db.hpp).

#include "tests/support/library_db.hpp"

#include <cstdio>
#include <stdexcept>

#include "data/sqlite.hpp"

namespace candor::test {

namespace {

void run(data::database& db, const std::string& sql) {
  if (auto err = db.exec(sql))
    throw std::runtime_error("library db: " + err.message + " in " + sql);
}

std::string q(const std::string& s) {
  return data::quote_literal(s);
}

} // namespace

long make_library_db(const std::string& path) {
  auto opened = data::database::open(path);
  if (!opened)
    throw std::runtime_error("library db: " + opened.err().message);
  auto& db = *opened;
  run(db, "PRAGMA foreign_keys = ON");
  run(db, R"(
CREATE TABLE members (
  member_id INTEGER PRIMARY KEY,
  full_name TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT,
  city TEXT NOT NULL,
  tier TEXT NOT NULL,
  joined_on TEXT NOT NULL
);
CREATE TABLE member_addresses (
  member_id INTEGER PRIMARY KEY REFERENCES members(member_id),
  street TEXT NOT NULL,
  postcode TEXT NOT NULL,
  iban TEXT
);
CREATE TABLE books (
  book_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  genre TEXT NOT NULL,
  published_year INTEGER NOT NULL,
  price_cents INTEGER NOT NULL
);
CREATE TABLE loans (
  loan_id INTEGER PRIMARY KEY,
  member_id INTEGER NOT NULL REFERENCES members(member_id),
  book_id INTEGER NOT NULL REFERENCES books(book_id),
  loaned_on TEXT NOT NULL,
  days INTEGER NOT NULL,
  fee_cents INTEGER NOT NULL,
  status TEXT NOT NULL
);)");
  static const char* first[]
    = {"Anna", "Bram", "Chloe", "Daan", "Eva", "Finn", "Greta", "Hugo"};
  static const char* last[]
    = {"de Vries", "Jansen", "Peeters", "Moreau", "Schmidt"};
  static const char* cities[] = {"Leiden", "Delft", "Haarlem"};
  static const char* genres[]
    = {"crime", "fantasy", "history", "poetry", "science"};
  static const char* statuses[] = {"returned", "returned", "open", "late"};
  // Valid IBANs (mod 97) for the addresses.
  static const char* ibans[] = {"NL91ABNA0417164300", "DE89370400440532013000",
                                "GB82WEST12345698765432"};
  run(db, "BEGIN");
  for (int i = 1; i <= 40; ++i) {
    std::string name = std::string{first[i % 8]} + " " + last[i % 5];
    std::string mail = "reader" + std::to_string(i) + "@example.org";
    std::string phone = "+31 6 " + std::to_string(10000000 + i * 7919);
    std::string joined = "2024-" + std::string{i % 12 < 9 ? "0" : ""}
                         + std::to_string(i % 12 + 1) + "-1"
                         + std::to_string(i % 9);
    run(db, "INSERT INTO members VALUES (" + std::to_string(i) + ", " + q(name)
              + ", " + q(mail) + ", " + q(phone) + ", " + q(cities[i % 3])
              + ", " + q(i % 4 == 0 ? "plus" : "basic") + ", " + q(joined)
              + ")");
    run(db, "INSERT INTO member_addresses VALUES (" + std::to_string(i) + ", "
              + q(std::to_string(i) + " Breestraat") + ", "
              + q("23" + std::to_string(10 + i) + " AB") + ", "
              + q(ibans[i % 3]) + ")");
  }
  for (int i = 1; i <= 30; ++i)
    run(db, "INSERT INTO books VALUES (" + std::to_string(i) + ", "
              + q("Volume " + std::to_string(i)) + ", " + q(genres[i % 5])
              + ", " + std::to_string(1950 + i * 2) + ", "
              + std::to_string(900 + i * 50) + ")");
  long in_2025 = 0;
  for (int i = 1; i <= 400; ++i) {
    int year = i % 3 == 0 ? 2024 : 2025;
    int month = i % 12 + 1;
    int day = i % 28 + 1;
    char date[16];
    std::snprintf(date, sizeof date, "%04d-%02d-%02d", year, month, day);
    in_2025 += year == 2025 ? 1 : 0;
    run(db, "INSERT INTO loans VALUES (" + std::to_string(i) + ", "
              + std::to_string(i % 40 + 1) + ", " + std::to_string(i % 30 + 1)
              + ", " + q(date) + ", " + std::to_string(7 + i % 21) + ", "
              + std::to_string(i % 4 == 3 ? 150 : 0) + ", " + q(statuses[i % 4])
              + ")");
  }
  run(db, "COMMIT");
  return in_2025;
}

} // namespace candor::test
