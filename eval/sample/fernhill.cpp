// The Fernhill Veterinary Group sample world (see fernhill.hpp): its
// database from a fixed seed and its documents.

#include "eval/sample/fernhill.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "data/sqlite.hpp"
#include "domain/build_info.hpp"
#include "eval/sample/pdf_writer.hpp"

namespace candor::eval {

namespace {

namespace fs = std::filesystem;
using domain::ec;

/// splitmix64: the same numbers on every platform and compiler, unlike the
/// standard distributions.
struct rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// 0 .. n-1
  int below(int n) {
    return static_cast<int>(next() % static_cast<uint64_t>(n));
  }
  /// Index into `weights` (percentages summing to 100).
  template <size_t N>
  size_t pick(const std::array<int, N>& weights) {
    int r = below(100);
    for (size_t i = 0; i < N; ++i) {
      if (r < weights[i])
        return i;
      r -= weights[i];
    }
    return N - 1;
  }
};

/// Days since 1970-01-01 -> "YYYY-MM-DD" (H. Hinnant's civil_from_days).
std::string date_of(int64_t days) {
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  auto doe = static_cast<unsigned>(days - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  unsigned d = doy - (153 * mp + 2) / 5 + 1;
  unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2 ? 1 : 0;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y),
                m, d);
  return buf;
}

constexpr int64_t day_2018 = 17532; // 2018-01-01
constexpr int64_t day_2024 = 19723; // 2024-01-01
constexpr int days_2024_2025 = 731; // to 2025-12-31

struct treatment {
  const char* code;
  const char* name;
  const char* category;
  int cents;
};

constexpr std::array<treatment, 16> treatments{{
  {"CONS", "Standard consultation", "consultation", 4500},
  {"CONS2", "Double consultation", "consultation", 8000},
  {"AFTH", "After-hours surcharge", "consultation", 6000},
  {"VDOG", "Dog vaccination", "vaccination", 5200},
  {"VCAT", "Cat vaccination", "vaccination", 4800},
  {"VRAB", "Rabbit vaccination", "vaccination", 3900},
  {"VRBS", "Rabies vaccination", "vaccination", 5500},
  {"DCHK", "Dental check", "dental", 3500},
  {"DSCL", "Scale and polish", "dental", 18000},
  {"DEXT", "Tooth extraction", "dental", 9500},
  {"SNEU", "Neutering", "surgery", 24000},
  {"SLMP", "Lump removal", "surgery", 32000},
  {"SFRC", "Fracture repair", "surgery", 95000},
  {"XRAY", "X-ray", "diagnostics", 11000},
  {"BLOD", "Blood test", "diagnostics", 7500},
  {"USND", "Ultrasound", "diagnostics", 13000},
}};

const char* const first_names[]
  = {"Anna",  "Bram",  "Chloe", "Daan",  "Eva",    "Finn", "Greta",   "Hugo",
     "Iris",  "Jonas", "Kim",   "Lotte", "Milan",  "Noor", "Olivier", "Puck",
     "Ruben", "Sanne", "Thijs", "Vera",  "Wouter", "Yara", "Zoe",     "Lars"};
const char* const last_names[]
  = {"de Vries", "Jansen",      "Bakker",   "Visser", "Smit", "Meijer",
     "de Boer",  "Mulder",      "de Groot", "Bos",    "Vos",  "Peters",
     "Hendriks", "van Leeuwen", "Dekker",   "Brouwer"};
const char* const pet_names[]
  = {"Bello", "Luna",  "Max",   "Pip",   "Bobby", "Tijger", "Saar", "Guus",
     "Moos",  "Nala",  "Rocky", "Kiki",  "Loki",  "Fleur",  "Snuf", "Bram",
     "Daisy", "Oscar", "Minou", "Pluto", "Sammy", "Tommie", "Kees", "Flip"};

struct clinic {
  const char* name;
  const char* city;
  const char* opened;
};
constexpr std::array<clinic, 4> clinics{{
  {"Fernhill Central", "Leiden", "2009-03-02"},
  {"Fernhill Dunes", "Katwijk", "2014-06-02"},
  {"Fernhill Riverside", "Alphen aan den Rijn", "2017-09-04"},
  {"Fernhill North", "Haarlem", "2021-02-01"},
}};

const char* const schema = R"(
CREATE TABLE clinics (
  clinic_id INTEGER PRIMARY KEY,
  clinic_name TEXT NOT NULL,
  city TEXT NOT NULL,
  opened_on TEXT NOT NULL
);
CREATE TABLE vets (
  vet_id INTEGER PRIMARY KEY,
  clinic_id INTEGER NOT NULL REFERENCES clinics(clinic_id),
  vet_name TEXT NOT NULL,
  specialty TEXT NOT NULL
);
CREATE TABLE owners (
  owner_id INTEGER PRIMARY KEY,
  full_name TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  city TEXT NOT NULL,
  joined_on TEXT NOT NULL
);
CREATE TABLE pets (
  pet_id INTEGER PRIMARY KEY,
  owner_id INTEGER NOT NULL REFERENCES owners(owner_id),
  pet_name TEXT NOT NULL,
  species TEXT NOT NULL,
  birth_year INTEGER NOT NULL
);
CREATE TABLE treatments (
  treatment_code TEXT PRIMARY KEY,
  treatment_name TEXT NOT NULL,
  category TEXT NOT NULL,
  list_price_cents INTEGER NOT NULL
);
CREATE TABLE appointments (
  appointment_id INTEGER PRIMARY KEY,
  pet_id INTEGER NOT NULL REFERENCES pets(pet_id),
  clinic_id INTEGER NOT NULL REFERENCES clinics(clinic_id),
  vet_id INTEGER NOT NULL REFERENCES vets(vet_id),
  appointment_date TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL
);
CREATE TABLE appointment_items (
  item_id INTEGER PRIMARY KEY,
  appointment_id INTEGER NOT NULL REFERENCES appointments(appointment_id),
  treatment_code TEXT NOT NULL REFERENCES treatments(treatment_code),
  quantity INTEGER NOT NULL,
  price_cents INTEGER NOT NULL
);
CREATE TABLE payments (
  payment_id INTEGER PRIMARY KEY,
  appointment_id INTEGER NOT NULL REFERENCES appointments(appointment_id),
  paid_on TEXT NOT NULL,
  method TEXT NOT NULL,
  amount_cents INTEGER NOT NULL
);
)";

/// Runs `sql` with `values` bound as text or integers (a value starting
/// with '#' is the integer after it).
domain::error insert(data::database& db, const std::string& sql,
                     const std::vector<std::string>& values) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return stmt.err();
  for (size_t i = 0; i < values.size(); ++i) {
    auto& v = values[i];
    auto err
      = !v.empty() && v[0] == '#'
          ? stmt->bind_int64(static_cast<int>(i + 1), std::stoll(v.substr(1)))
          : stmt->bind_text(static_cast<int>(i + 1), v);
    if (err)
      return err;
  }
  return stmt->run();
}

std::string n(int64_t x) {
  return "#" + std::to_string(x);
}

domain::outcome<long> write_database(const std::string& path) {
  std::error_code ec_fs;
  fs::remove(path, ec_fs);
  auto opened = data::database::open(path);
  if (!opened)
    return opened.err();
  auto& db = *opened;
  if (auto e = db.exec(schema))
    return e;
  if (auto e = db.exec("BEGIN"))
    return e;
  rng r{20261207};
  long rows = 0;
  auto add = [&](const std::string& sql,
                 const std::vector<std::string>& v) -> domain::error {
    ++rows;
    return insert(db, sql, v);
  };
  for (size_t i = 0; i < clinics.size(); ++i)
    if (auto e = add("INSERT INTO clinics VALUES (?1, ?2, ?3, ?4)",
                     {n(static_cast<int64_t>(i + 1)), clinics[i].name,
                      clinics[i].city, clinics[i].opened}))
      return e;
  static const char* const specialties[4][3]
    = {{"surgery", "general", "exotics"},
       {"general", "dental", "general"},
       {"general", "general", "dental"},
       {"general", "exotics", "general"}};
  for (int c = 0; c < 4; ++c)
    for (int k = 0; k < 3; ++k) {
      auto name = std::string{"Dr. "} + first_names[r.below(24)] + " "
                  + last_names[r.below(16)];
      if (auto e = add("INSERT INTO vets VALUES (?1, ?2, ?3, ?4)",
                       {n(c * 3 + k + 1), n(c + 1), name, specialties[c][k]}))
        return e;
    }
  constexpr int owners = 900;
  std::vector<int> owner_clinic(owners + 1);
  for (int o = 1; o <= owners; ++o) {
    int c = static_cast<int>(r.pick(std::array<int, 4>{34, 22, 20, 24}));
    owner_clinic[static_cast<size_t>(o)] = c + 1;
    auto name
      = std::string{first_names[r.below(24)]} + " " + last_names[r.below(16)];
    auto mail = "owner" + std::to_string(o) + "@mail.example";
    auto phone = "+31 6 " + std::to_string(10000000 + r.below(89999999));
    auto joined = date_of(day_2018 + r.below(8 * 365));
    if (auto e = add("INSERT INTO owners VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                     {n(o), name, mail, phone,
                      clinics[static_cast<size_t>(c)].city, joined}))
      return e;
  }
  static const char* const species[]
    = {"dog", "cat", "rabbit", "bird", "reptile"};
  constexpr int pets = 1200;
  std::vector<int> pet_owner(pets + 1);
  std::vector<int> pet_species(pets + 1);
  for (int p = 1; p <= pets; ++p) {
    int o = 1 + r.below(owners);
    int s = static_cast<int>(r.pick(std::array<int, 5>{45, 35, 10, 5, 5}));
    pet_owner[static_cast<size_t>(p)] = o;
    pet_species[static_cast<size_t>(p)] = s;
    if (auto e = add("INSERT INTO pets VALUES (?1, ?2, ?3, ?4, ?5)",
                     {n(p), n(o), pet_names[r.below(24)], species[s],
                      n(2008 + r.below(18))}))
      return e;
  }
  for (auto& t : treatments)
    if (auto e = add("INSERT INTO treatments VALUES (?1, ?2, ?3, ?4)",
                     {t.code, t.name, t.category, n(t.cents)}))
      return e;
  auto price = [](const char* code) {
    for (auto& t : treatments)
      if (std::string_view{t.code} == code)
        return t.cents;
    return 0;
  };
  static const char* const kinds[] = {"routine", "urgent", "follow_up"};
  static const char* const statuses[] = {"completed", "cancelled", "no_show"};
  static const char* const methods[] = {"card", "cash", "insurance"};
  static const char* const vaccine[]
    = {"VDOG", "VCAT", "VRAB", nullptr, nullptr};
  int item = 0;
  int payment = 0;
  for (int a = 1; a <= 3600; ++a) {
    int p = 1 + r.below(pets);
    int clinic_id
      = r.below(100) < 85
          ? owner_clinic[static_cast<size_t>(pet_owner[static_cast<size_t>(p)])]
          : 1 + r.below(4);
    int vet = (clinic_id - 1) * 3 + 1 + r.below(3);
    int64_t day = day_2024 + r.below(days_2024_2025);
    auto date = date_of(day);
    int kind = static_cast<int>(r.pick(std::array<int, 3>{70, 20, 10}));
    int status = static_cast<int>(r.pick(std::array<int, 3>{86, 9, 5}));
    if (auto e = add("INSERT INTO appointments VALUES (?1, ?2, ?3, ?4, ?5, "
                     "?6, ?7)",
                     {n(a), n(p), n(clinic_id), n(vet), date, kinds[kind],
                      statuses[status]}))
      return e;
    int64_t amount = 0;
    auto line = [&](const char* code, int cents) -> domain::error {
      amount += cents;
      return add("INSERT INTO appointment_items VALUES (?1, ?2, ?3, 1, ?4)",
                 {n(++item), n(a), code, n(cents)});
    };
    if (status == 2) { // a missed appointment: the fee
      if (auto e = add("INSERT INTO payments VALUES (?1, ?2, ?3, 'card', 2000)",
                       {n(++payment), n(a), date}))
        return e;
      continue;
    }
    if (status != 0)
      continue;
    bool february = date.substr(5, 2) == "02";
    domain::error e;
    if (kind == 2) {
      e = line("CONS", 0); // a follow-up within 10 days is free
    } else if (kind == 0) {
      e = line("CONS", price("CONS"));
      auto* v = vaccine[pet_species[static_cast<size_t>(p)]];
      int roll = r.below(100);
      if (!e && v != nullptr && roll < 40)
        e = line(v, price(v));
      else if (!e && roll < 55)
        e = line("DCHK", february ? 2800 : price("DCHK"));
      else if (!e && roll < 60)
        e = line("DSCL", price("DSCL"));
      else if (!e && roll < 64)
        e = line("VRBS", price("VRBS"));
    } else {
      bool late = r.below(100) < 30;
      e = line(late ? "AFTH" : "CONS", price(late ? "AFTH" : "CONS"));
      int roll = r.below(100);
      static const char* const tests[] = {"XRAY", "BLOD", "USND"};
      if (!e && roll < 50) {
        auto* test = tests[r.below(3)];
        e = line(test, price(test));
      }
      roll = r.below(100);
      if (!e && roll < 15) {
        const char* op = clinic_id == 1 && r.below(3) == 0
                           ? "SFRC"
                           : (r.below(2) == 0 ? "SLMP" : "SNEU");
        e = line(op, price(op));
      } else if (!e && roll < 20) {
        e = line("DEXT", price("DEXT"));
      }
    }
    if (e)
      return e;
    if (amount == 0)
      continue;
    int m = static_cast<int>(r.pick(std::array<int, 3>{55, 10, 35}));
    auto paid = m == 2 ? date_of(day + 5 + r.below(16)) : date;
    if (auto err = add("INSERT INTO payments VALUES (?1, ?2, ?3, ?4, ?5)",
                       {n(++payment), n(a), paid, methods[m], n(amount)}))
      return err;
  }
  if (auto e = db.exec("COMMIT"))
    return e;
  return rows;
}

/// Word-wraps `text` at `width` characters.
std::vector<std::string> wrapped(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::istringstream words{text};
  std::string w;
  std::string line;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty())
    out.push_back(line);
  return out;
}

/// "# Title", "## Heading" and paragraphs -> PDF pages.
std::string pdf_of(const std::string& source) {
  std::vector<std::vector<pdf_line>> pages(1);
  double used = 0;
  auto put = [&](double size, const std::string& text) {
    if (used + size * 1.6 > 640) {
      pages.emplace_back();
      used = 0;
    }
    used += size * 1.6;
    pages.back().push_back({size, text, false});
  };
  std::istringstream in{source};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0)
      put(18, line.substr(2));
    else if (line.rfind("## ", 0) == 0)
      put(14, line.substr(3));
    else if (!line.empty())
      for (auto& l : wrapped(line, 90))
        put(10.5, l);
  }
  return make_pdf(pages);
}

std::string slurp(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

std::string fernhill_dir() {
  return std::string{CANDOR_SOURCE_DIR} + "/eval/worlds/fernhill";
}

domain::outcome<long> make_fernhill(const std::string& out) {
  std::error_code ec_fs;
  fs::create_directories(fs::path{out} / "docs", ec_fs);
  if (ec_fs)
    return domain::make_error(
      ec::storage_failed, "cannot create " + out + "/docs: " + ec_fs.message());
  auto rows = write_database(out + "/fernhill.db");
  if (!rows)
    return rows.err();
  auto src = fs::path{fernhill_dir()};
  for (auto& e : fs::directory_iterator(src / "docs"))
    if (e.path().extension() == ".html")
      fs::copy_file(e.path(), fs::path{out} / "docs" / e.path().filename(),
                    fs::copy_options::overwrite_existing, ec_fs);
  for (auto& e : fs::directory_iterator(src / "pdf"))
    if (e.path().extension() == ".txt") {
      auto name = e.path().stem().string() + ".pdf";
      std::ofstream pdf{fs::path{out} / "docs" / name, std::ios::binary};
      pdf << pdf_of(slurp(e.path()));
      if (!pdf)
        return domain::make_error(ec::storage_failed,
                                  "cannot write " + out + "/docs/" + name);
    }
  if (ec_fs)
    return domain::make_error(ec::storage_failed,
                              "cannot copy the documents: " + ec_fs.message());
  return rows;
}

} // namespace candor::eval
