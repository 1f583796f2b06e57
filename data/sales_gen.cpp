// Generating the fictional sales database: reference data, the schema and
// a seeded generator (checks and fingerprint: sales_check.cpp).

#include "data/sales_gen.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

#include "data/sqlite.hpp"

namespace candor::data {

namespace {

using domain::ec;
using domain::make_error;

// -- deterministic random numbers ---------------------------------------------

/// splitmix64: expands the seed into the xoshiro state (never all zero).
uint64_t splitmix64(uint64_t& x) noexcept {
  auto z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// xoshiro256** with small helpers built only on integer arithmetic and
/// IEEE basic operations, so every platform draws the same values.
class rng {
public:
  explicit rng(uint64_t seed) noexcept {
    for (auto& word : s_)
      word = splitmix64(seed);
  }

  uint64_t next() noexcept {
    auto result = rotl(s_[1] * 5, 7) * 9;
    auto t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, n) for n > 0 (modulo bias below 2^-40 for our n).
  uint64_t below(uint64_t n) noexcept {
    return next() % n;
  }

  /// Uniform in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) noexcept {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo + 1)));
  }

  /// Uniform in [0, 1) with 53 random bits.
  double unit() noexcept {
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

  bool chance(double p) noexcept {
    return unit() < p;
  }

  /// An index drawn with probability proportional to `weights[i]`.
  /// At least one weight must be positive.
  size_t pick(std::span<const double> weights) noexcept {
    double total = 0;
    for (auto w : weights)
      total += w;
    auto x = unit() * total;
    size_t last = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (weights[i] <= 0)
        continue;
      last = i;
      if (x < weights[i])
        return i;
      x -= weights[i];
    }
    return last;
  }

private:
  static uint64_t rotl(uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }

  std::array<uint64_t, 4> s_{};
};

// -- dates --------------------------------------------------------------------

/// Days since 1970-01-01.
int day_number(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return static_cast<int>(
    sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count());
}

struct civil {
  int y;
  unsigned m;
  unsigned d;
};

civil civil_of(int day) {
  using namespace std::chrono;
  year_month_day ymd{sys_days{days{day}}};
  return {static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
          static_cast<unsigned>(ymd.day())};
}

/// 0 = Sunday ... 6 = Saturday.
unsigned weekday_of(int day) {
  using namespace std::chrono;
  return weekday{sys_days{days{day}}}.c_encoding();
}

std::string iso_date(int day) {
  auto c = civil_of(day);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", c.y, c.m, c.d);
  return buf;
}

/// A timestamp as seconds since midnight of day 0; printed in UTC.
std::string iso_time(int day, int second_of_day) {
  day += second_of_day / 86400;
  second_of_day %= 86400;
  auto c = civil_of(day);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d", c.y, c.m, c.d,
                second_of_day / 3600, second_of_day / 60 % 60,
                second_of_day % 60);
  return buf;
}

int parse_day(std::string_view iso) {
  auto num = [&](size_t pos, size_t len) {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i)
      v = v * 10 + (iso[i] - '0');
    return v;
  };
  return day_number(num(0, 4), static_cast<unsigned>(num(5, 2)),
                    static_cast<unsigned>(num(8, 2)));
}

// -- reference data -----------------------------------------------------------

enum category_id : uint8_t {
  bikes,
  components,
  apparel,
  accessories,
  nutrition,
  service,
  category_count,
};

struct category_def {
  const char* code;
  const char* display;
  const char* description;
  int cost_percent; ///< unit cost as a share of the list price
};

constexpr std::array<category_def, category_count> categories{{
  {"bikes", "Bikes",
   "Kestrel bicycles: road (Strada), gravel (Ridgeline), city (Canal), "
   "e-bikes (Volt City, Volt Trek) and kids bikes (Fledgling).",
   58},
  {"components", "Components",
   "Drivetrain parts, brakes, wheels, tyres and e-bike parts.", 52},
  {"apparel", "Apparel", "Jerseys, jackets, gloves and helmets.", 42},
  {"accessories", "Accessories", "Lights, locks, bags, pumps and bottles.",
   46},
  {"nutrition", "Nutrition", "Energy gels, bars and drink mix.", 38},
  {"service", "Service",
   "Workshop plans, bike fitting sessions and workshop jobs.", 60},
}};

enum channel_id : uint8_t { web, marketplace, retail, partner, channel_count };

struct channel_def {
  const char* code;
  const char* display;
  const char* description;
};

constexpr std::array<channel_def, channel_count> channels{{
  {"web", "Web shop", "Orders placed in the Kestrel web shop."},
  {"marketplace", "Marketplace",
   "Orders placed through the online marketplace (order numbers MP-...)."},
  {"retail", "Retail stores",
   "Sales in the flagship stores in Utrecht and Ghent."},
  {"partner", "Partner dealers",
   "Wholesale orders placed by partner dealer accounts."},
}};

struct region_def {
  const char* code;
  const char* country;
  const char* zone;
  int in_eu;
  double weight; ///< share of customers
  std::array<const char*, 3> cities;
  const char* phone_prefix;
};

constexpr std::array<region_def, 18> regions{{
  {"NL", "Netherlands", "A", 1, 300, {"Utrecht", "Amsterdam", "Rotterdam"},
   "+31 6 5550"},
  {"BE", "Belgium", "A", 1, 140, {"Ghent", "Antwerp", "Brussels"},
   "+32 470 55"},
  {"LU", "Luxembourg", "A", 1, 10, {"Luxembourg", "Esch-sur-Alzette",
   "Differdange"}, "+352 621 55"},
  {"DE", "Germany", "B", 1, 170, {"Berlin", "Munich", "Cologne"},
   "+49 151 5550"},
  {"FR", "France", "B", 1, 70, {"Lyon", "Paris", "Lille"}, "+33 6 5550"},
  {"AT", "Austria", "B", 1, 30, {"Vienna", "Graz", "Salzburg"},
   "+43 664 5550"},
  {"DK", "Denmark", "B", 1, 30, {"Copenhagen", "Aarhus", "Odense"},
   "+45 20 55"},
  {"ES", "Spain", "C", 1, 25, {"Madrid", "Barcelona", "Valencia"},
   "+34 655 5"},
  {"IT", "Italy", "C", 1, 25, {"Milan", "Turin", "Bologna"}, "+39 347 555"},
  {"IE", "Ireland", "C", 1, 10, {"Dublin", "Cork", "Galway"}, "+353 85 555"},
  {"SE", "Sweden", "C", 1, 20, {"Stockholm", "Gothenburg", "Malmo"},
   "+46 70 555"},
  {"PL", "Poland", "C", 1, 15, {"Warsaw", "Krakow", "Gdansk"}, "+48 555"},
  {"PT", "Portugal", "C", 1, 8, {"Lisbon", "Porto", "Braga"}, "+351 91 555"},
  {"FI", "Finland", "C", 1, 8, {"Helsinki", "Tampere", "Turku"},
   "+358 40 555"},
  {"CZ", "Czechia", "C", 1, 10, {"Prague", "Brno", "Ostrava"},
   "+420 601 55"},
  {"GB", "United Kingdom", "D", 0, 55, {"London", "Bristol", "Manchester"},
   "+44 7700 9"},
  {"NO", "Norway", "E", 0, 18, {"Oslo", "Bergen", "Trondheim"}, "+47 41 55"},
  {"CH", "Switzerland", "E", 0, 26, {"Zurich", "Basel", "Bern"},
   "+41 79 555"},
}};

constexpr size_t region_nl = 0;
constexpr size_t region_be = 1;

bool zone_e(size_t region) {
  return regions[region].zone[0] == 'E';
}

/// Klarna pay-later countries (payments-and-refunds.md).
bool klarna_country(size_t region) {
  auto code = std::string_view{regions[region].code};
  return code == "NL" || code == "BE" || code == "DE" || code == "AT";
}

/// Where a product may be sold.
enum sold_in : uint8_t {
  everywhere,   ///< web, marketplace, retail, partner
  no_market,    ///< not on the marketplace
  own_channels, ///< web and retail only (workshop plans)
  stores,       ///< retail only (workshop jobs, fittings)
  utrecht_only, ///< the Performance Fit studio
};

struct product_def {
  const char* line;
  category_id category;
  const char* label;
  int64_t price_cents;
  double weight; ///< popularity within its category
  const char* launched;
  const char* discontinued; ///< last day on sale, or nullptr
  sold_in where;
  bool electric; ///< not shipped to Norway or Switzerland
};

// clang-format off
constexpr product_def products[] = {
  {"strada", bikes, "Strada AL Tiagra", 119900, 3, "2019-02-01", "2025-06-30", everywhere, false},
  {"strada", bikes, "Strada AL 105", 149900, 6, "2020-02-01", nullptr, everywhere, false},
  {"strada", bikes, "Strada Endurance 105", 179900, 4, "2021-02-01", nullptr, everywhere, false},
  {"strada", bikes, "Strada SL Ultegra", 289900, 3, "2022-02-01", nullptr, everywhere, false},
  {"strada", bikes, "Strada SL Ultegra Di2", 379900, 1, "2023-02-01", nullptr, no_market, false},
  {"ridgeline", bikes, "Ridgeline AL GRX 400", 159900, 5, "2021-03-01", nullptr, no_market, false},
  {"ridgeline", bikes, "Ridgeline AL GRX 600", 179900, 5, "2022-03-01", nullptr, no_market, false},
  {"ridgeline", bikes, "Ridgeline CF GRX 820", 279900, 3, "2023-03-01", nullptr, no_market, false},
  {"ridgeline", bikes, "Ridgeline CF Rival AXS", 349900, 1, "2025-03-10", nullptr, no_market, false},
  {"canal", bikes, "Canal 3", 64900, 8, "2018-03-01", nullptr, everywhere, false},
  {"canal", bikes, "Canal 7", 84900, 9, "2018-03-01", nullptr, everywhere, false},
  {"canal", bikes, "Canal 7 Step-Through", 84900, 7, "2019-03-01", nullptr, everywhere, false},
  {"canal", bikes, "Canal 8 Belt", 109900, 5, "2021-03-01", nullptr, everywhere, false},
  {"volt_city", bikes, "Volt City 500", 249900, 6, "2018-04-01", nullptr, no_market, true},
  {"volt_city", bikes, "Volt City 500 Step-Through", 249900, 5, "2019-04-01", nullptr, no_market, true},
  {"volt_city", bikes, "Volt City 625", 279900, 5, "2025-03-24", nullptr, no_market, true},
  {"volt_trek", bikes, "Volt Trek 500", 299900, 3, "2019-04-01", "2025-03-23", no_market, true},
  {"volt_trek", bikes, "Volt Trek 625", 329900, 3, "2025-03-24", nullptr, no_market, true},
  {"volt_trek", bikes, "Volt Trek 625 Suspension", 369900, 2, "2025-03-24", nullptr, no_market, true},
  {"fledgling", bikes, "Fledgling 12 Balance", 17900, 4, "2018-09-01", nullptr, everywhere, false},
  {"fledgling", bikes, "Fledgling 16", 29900, 5, "2018-09-01", nullptr, everywhere, false},
  {"fledgling", bikes, "Fledgling 20", 37900, 4, "2018-09-01", nullptr, everywhere, false},
  {"fledgling", bikes, "Fledgling 24", 44900, 3, "2020-09-01", nullptr, everywhere, false},

  {"drivetrain", components, "Chain 11-speed", 2900, 10, "2018-01-01", nullptr, everywhere, false},
  {"drivetrain", components, "Cassette 11-34", 6900, 6, "2018-01-01", nullptr, everywhere, false},
  {"drivetrain", components, "Chainring 40T", 5900, 3, "2018-01-01", nullptr, everywhere, false},
  {"drivetrain", components, "Rear derailleur 105", 8900, 3, "2018-01-01", nullptr, everywhere, false},
  {"drivetrain", components, "Rear derailleur GRX", 9900, 3, "2020-01-01", nullptr, everywhere, false},
  {"drivetrain", components, "Belt drive kit", 14900, 1, "2021-01-01", nullptr, everywhere, false},
  {"brakes", components, "Disc brake pads", 1495, 12, "2018-01-01", nullptr, everywhere, false},
  {"brakes", components, "Disc rotor 160 mm", 3495, 6, "2018-01-01", nullptr, everywhere, false},
  {"brakes", components, "Hydraulic brake set", 17900, 2, "2018-01-01", nullptr, everywhere, false},
  {"brakes", components, "Rim brake pads", 995, 4, "2018-01-01", "2024-12-31", everywhere, false},
  {"wheels", components, "Strada alloy wheelset", 39900, 2, "2019-01-01", nullptr, everywhere, false},
  {"wheels", components, "Ridgeline alloy wheelset", 44900, 2, "2021-01-01", nullptr, everywhere, false},
  {"wheels", components, "Carbon road wheelset", 119900, 1, "2022-01-01", nullptr, no_market, false},
  {"wheels", components, "Canal rear wheel", 12900, 2, "2019-01-01", nullptr, everywhere, false},
  {"tyres", components, "Road tyre 28 mm", 4495, 10, "2018-01-01", nullptr, everywhere, false},
  {"tyres", components, "Gravel tyre 40 mm", 4995, 8, "2020-01-01", nullptr, everywhere, false},
  {"tyres", components, "City tyre 42 mm puncture-protected", 3495, 7, "2018-01-01", nullptr, everywhere, false},
  {"tyres", components, "E-bike tyre 50 mm", 5495, 5, "2019-01-01", nullptr, everywhere, false},
  {"tyres", components, "Inner tube", 795, 14, "2018-01-01", nullptr, everywhere, false},
  {"tyres", components, "Tubeless sealant 250 ml", 1495, 5, "2019-01-01", nullptr, everywhere, false},
  {"e_bike_parts", components, "Volt battery 500 Wh", 59900, 2, "2018-04-01", nullptr, no_market, true},
  {"e_bike_parts", components, "Volt battery 625 Wh", 69900, 1, "2025-03-24", nullptr, no_market, true},
  {"e_bike_parts", components, "Volt 4 A charger", 8900, 2, "2018-04-01", nullptr, no_market, false},

  {"jerseys", apparel, "Kestrel Club jersey", 7900, 5, "2020-03-01", nullptr, everywhere, false},
  {"jerseys", apparel, "Summer jersey", 6900, 6, "2018-03-01", nullptr, everywhere, false},
  {"jerseys", apparel, "Long-sleeve jersey", 8900, 4, "2018-09-01", nullptr, everywhere, false},
  {"jackets", apparel, "Rain jacket", 14900, 5, "2018-09-01", nullptr, everywhere, false},
  {"jackets", apparel, "Winter jacket", 19900, 3, "2019-09-01", nullptr, everywhere, false},
  {"jackets", apparel, "Wind gilet", 8900, 4, "2019-03-01", nullptr, everywhere, false},
  {"gloves", apparel, "Summer gloves", 2995, 7, "2018-03-01", nullptr, everywhere, false},
  {"gloves", apparel, "Winter gloves", 4995, 5, "2018-09-01", nullptr, everywhere, false},
  {"helmets", apparel, "Aero road helmet", 15900, 3, "2021-03-01", nullptr, everywhere, false},
  {"helmets", apparel, "Volt Commuter helmet", 11900, 5, "2019-03-01", nullptr, everywhere, false},
  {"helmets", apparel, "Gravel helmet", 12900, 3, "2021-03-01", nullptr, everywhere, false},
  {"helmets", apparel, "Kids helmet", 4995, 4, "2018-03-01", nullptr, everywhere, false},

  {"lights", accessories, "Front light 800 lm", 5995, 7, "2018-01-01", nullptr, everywhere, false},
  {"lights", accessories, "Rear light", 2495, 8, "2018-01-01", nullptr, everywhere, false},
  {"lights", accessories, "Light set", 7495, 6, "2018-01-01", nullptr, everywhere, false},
  {"locks", accessories, "Folding lock", 8900, 4, "2018-01-01", nullptr, everywhere, false},
  {"locks", accessories, "Chain lock", 6995, 4, "2018-01-01", nullptr, everywhere, false},
  {"locks", accessories, "Frame lock", 4495, 4, "2018-01-01", nullptr, everywhere, false},
  {"bags", accessories, "Pannier bag", 8900, 4, "2018-01-01", nullptr, everywhere, false},
  {"bags", accessories, "Saddle bag", 2995, 5, "2018-01-01", nullptr, everywhere, false},
  {"bags", accessories, "Frame bag", 4995, 3, "2020-01-01", nullptr, everywhere, false},
  {"bags", accessories, "Handlebar bag", 5995, 3, "2020-01-01", nullptr, everywhere, false},
  {"pumps", accessories, "Floor pump", 4995, 5, "2018-01-01", nullptr, everywhere, false},
  {"pumps", accessories, "Mini pump", 2495, 6, "2018-01-01", nullptr, everywhere, false},
  {"bottles", accessories, "Bottle 750 ml", 995, 12, "2018-01-01", nullptr, everywhere, false},
  {"bottles", accessories, "Bottle cage", 1495, 7, "2018-01-01", nullptr, everywhere, false},
  {"bottles", accessories, "Insulated bottle", 1995, 5, "2019-01-01", nullptr, everywhere, false},

  {"gels", nutrition, "Energy gel", 249, 14, "2018-01-01", nullptr, everywhere, false},
  {"gels", nutrition, "Energy gel box of 24", 4995, 5, "2018-01-01", nullptr, everywhere, false},
  {"bars", nutrition, "Energy bar", 299, 12, "2018-01-01", nullptr, everywhere, false},
  {"bars", nutrition, "Energy bar box of 12", 2995, 5, "2018-01-01", nullptr, everywhere, false},
  {"drink_mix", nutrition, "Drink mix 500 g", 1995, 8, "2018-01-01", nullptr, everywhere, false},
  {"drink_mix", nutrition, "Electrolyte tablets", 895, 8, "2019-01-01", nullptr, everywhere, false},

  {"workshop_plans", service, "Care Plan, 12 months", 11940, 4, "2021-01-01", nullptr, own_channels, false},
  {"workshop_plans", service, "E-Care Plan, 12 months", 17940, 3, "2021-01-01", nullptr, own_channels, false},
  {"bike_fitting", service, "Essential Fit", 8900, 4, "2018-01-01", nullptr, stores, false},
  {"bike_fitting", service, "Performance Fit", 19900, 2, "2018-01-01", nullptr, utrecht_only, false},
  {"workshop_jobs", service, "Full service", 14900, 6, "2018-01-01", nullptr, stores, false},
  {"workshop_jobs", service, "E-bike service", 16900, 4, "2018-04-01", nullptr, stores, false},
  {"workshop_jobs", service, "Safety check", 2900, 8, "2018-01-01", nullptr, stores, false},
  {"workshop_jobs", service, "Battery diagnostic", 2500, 3, "2018-04-01", nullptr, stores, false},
  {"workshop_jobs", service, "Tubeless setup, pair", 4500, 3, "2019-01-01", nullptr, stores, false},
  {"workshop_jobs", service, "Hydraulic brake bleed", 3500, 3, "2018-01-01", nullptr, stores, false},
  {"workshop_jobs", service, "Wheel truing", 1900, 4, "2018-01-01", nullptr, stores, false},
};
// clang-format on

constexpr size_t product_count = std::size(products);

constexpr const char* sku_prefix[category_count]
  = {"BK", "CP", "AP", "AC", "NU", "SV"};

// Seasonality: one factor per month (January first).
using months = std::array<double, 12>;

constexpr std::array<months, channel_count> channel_month{{
  {0.75, 0.80, 1.00, 1.15, 1.20, 1.10, 1.00, 0.95, 0.90, 0.90, 1.20, 1.30},
  {0.85, 0.80, 0.90, 1.00, 1.00, 0.95, 0.95, 0.95, 0.95, 1.00, 1.40, 1.55},
  {0.65, 0.75, 1.05, 1.30, 1.35, 1.25, 1.05, 0.95, 0.90, 0.85, 0.95, 1.20},
  {0.80, 1.30, 1.50, 1.35, 1.10, 0.95, 0.80, 0.70, 0.85, 0.90, 0.75, 0.50},
}};

constexpr std::array<months, category_count> category_month{{
  {0.45, 0.60, 1.00, 1.35, 1.50, 1.50, 1.30, 1.05, 0.85, 0.65, 0.75, 0.90},
  {0.90, 0.95, 1.15, 1.15, 1.10, 1.05, 1.00, 1.00, 1.00, 0.95, 0.95, 0.80},
  {0.80, 0.80, 1.00, 1.10, 1.10, 1.00, 0.90, 0.85, 0.95, 1.10, 1.20, 1.40},
  {0.90, 0.85, 0.95, 1.00, 1.00, 1.00, 0.95, 0.90, 1.00, 1.20, 1.30, 1.45},
  {0.70, 0.80, 1.00, 1.15, 1.30, 1.35, 1.35, 1.20, 1.00, 0.80, 0.70, 0.80},
  {0.80, 1.00, 1.35, 1.40, 1.20, 1.00, 0.90, 0.90, 1.00, 1.00, 0.80, 0.70},
}};

/// Orders per day at a factor of 1, in 2024; 2025 grows per channel.
constexpr std::array<double, channel_count> base_per_day{21.0, 7.5, 6.5, 1.6};
constexpr std::array<double, channel_count> growth_2025{1.12, 1.25, 1.05,
                                                        1.10};

/// Day-of-week factors, Sunday first.
constexpr std::array<std::array<double, 7>, channel_count> channel_weekday{{
  {1.15, 1.10, 1.00, 0.95, 0.95, 0.90, 0.95},
  {1.15, 1.05, 1.00, 1.00, 0.95, 0.95, 1.00},
  {0.80, 0.00, 0.90, 0.90, 1.20, 1.00, 1.60},
  {0.00, 1.00, 1.00, 1.00, 1.00, 1.00, 0.00},
}};

enum segment_id : uint8_t { consumer, business, club, segment_count };
constexpr std::array<const char*, segment_count> segment_names{
  "consumer", "business", "club"};

/// Category mix of an order line, by who buys where.
enum mix_id : uint8_t {
  mix_web_consumer,
  mix_web_business,
  mix_web_club,
  mix_marketplace,
  mix_retail,
  mix_partner,
};

constexpr std::array<std::array<double, category_count>, 6> category_mix{{
  {10, 22, 20, 25, 15, 8},
  {35, 15, 5, 25, 5, 15},
  {5, 10, 55, 10, 20, 0},
  {3, 27, 22, 30, 18, 0},
  {18, 15, 15, 20, 7, 25},
  {40, 25, 10, 20, 5, 0},
}};

/// Chance per mille that one line is returned, by category.
constexpr std::array<double, category_count> return_per_mille{35, 45, 110,
                                                              55, 8, 15};

enum payment_id : uint8_t {
  card,
  ideal,
  paypal,
  klarna,
  bank_transfer,
  payment_count,
};
constexpr std::array<const char*, payment_count> payment_names{
  "card", "ideal", "paypal", "klarna", "bank_transfer"};

// -- names (fictional; the `.example` domains are reserved) -------------------

constexpr const char* first_names[] = {
  "Anna",   "Bram",   "Charlotte", "Daan",   "Eva",    "Finn",    "Greta",
  "Hugo",   "Ines",   "Jonas",     "Katrin", "Lars",   "Lotte",   "Mats",
  "Nora",   "Olivier", "Pia",      "Quentin", "Ruben", "Sanne",   "Tom",
  "Ute",    "Victor", "Wout",      "Xavier", "Yara",   "Zoe",     "Amelie",
  "Bas",    "Clara",  "Dirk",      "Elise",  "Floor",  "Gijs",    "Hanna",
  "Ivo",    "Julia",  "Koen",      "Lena",   "Milan",  "Noor",    "Oscar",
  "Paula",  "Rik",    "Sofie",     "Thijs",  "Vera",   "Willem"};

constexpr const char* last_names[] = {
  "de Vries",  "Janssens",  "Muller",   "Dubois",    "Bakker",   "Peeters",
  "Schmidt",   "Laurent",   "Visser",   "Maes",      "Schneider", "Moreau",
  "Smit",      "Jacobs",    "Fischer",  "Lefevre",   "Meijer",   "Willems",
  "Weber",     "Garcia",    "de Boer",  "Claes",     "Wagner",   "Rossi",
  "Mulder",    "Goossens",  "Becker",   "Nielsen",   "de Groot", "Wouters",
  "Hoffmann",  "Jensen",    "Bos",      "Hermans",   "Koch",     "Andersen",
  "Vos",       "Martens",   "Richter",  "Larsen",    "Dekker",   "Lambert",
  "Wolf",      "Hansen",    "van Dijk", "Dupont",    "Kowalski", "Murphy"};

constexpr const char* street_names[] = {
  "Kanaalweg",   "Stationsstraat", "Lindenlaan",  "Hoofdstraat",
  "Parkweg",     "Molenstraat",    "Kerkplein",   "Havenkade",
  "Bergstrasse", "Rue du Moulin",  "Ringvej",     "High Street",
  "Via Roma",    "Calle Mayor",    "Storgata",    "Bahnhofstrasse"};

constexpr const char* mail_domains[] = {"mail.example", "post.example",
                                        "inbox.example"};

constexpr const char* business_suffixes[] = {
  "Logistics", "Bouw", "Consulting", "Zorg", "Delivery", "Facilities",
  "Engineering", "Architects"};

/// Lower-case ASCII letters and digits of `text`, other runs become `sep`.
std::string slug(std::string_view text, char sep) {
  std::string out;
  bool pending = false;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (pending && !out.empty())
        out += sep;
      out += static_cast<char>(c);
      pending = false;
    } else if (c >= 'A' && c <= 'Z') {
      if (pending && !out.empty())
        out += sep;
      out += static_cast<char>(c - 'A' + 'a');
      pending = false;
    } else {
      pending = true;
    }
  }
  return out;
}

template <class T, size_t N>
const T& any_of(rng& r, const T (&items)[N]) {
  return items[r.below(N)];
}

// -- the schema ---------------------------------------------------------------

constexpr const char* schema_sql = R"sql(
CREATE TABLE regions (
  country_code TEXT PRIMARY KEY,
  country_name TEXT NOT NULL,
  shipping_zone TEXT NOT NULL CHECK (shipping_zone IN ('A','B','C','D','E')),
  in_eu INTEGER NOT NULL CHECK (in_eu IN (0, 1))
);
CREATE TABLE categories (
  category TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL
);
CREATE TABLE channels (
  channel TEXT PRIMARY KEY,
  display_name TEXT NOT NULL,
  description TEXT NOT NULL
);
CREATE TABLE products (
  product_id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  product_name TEXT NOT NULL,
  category TEXT NOT NULL REFERENCES categories (category),
  product_line TEXT NOT NULL,
  list_price_cents INTEGER NOT NULL CHECK (list_price_cents > 0),
  unit_cost_cents INTEGER NOT NULL CHECK (unit_cost_cents > 0),
  launched_on TEXT NOT NULL,
  discontinued_on TEXT
);
CREATE TABLE customers (
  customer_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL,
  segment TEXT NOT NULL CHECK (segment IN ('consumer','business','club')),
  country_code TEXT NOT NULL REFERENCES regions (country_code),
  signup_date TEXT NOT NULL,
  club_member INTEGER NOT NULL CHECK (club_member IN (0, 1))
);
CREATE TABLE customer_contacts (
  contact_id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
  email TEXT NOT NULL,
  phone TEXT NOT NULL,
  address TEXT NOT NULL
);
CREATE TABLE orders (
  order_id INTEGER PRIMARY KEY,
  order_number TEXT NOT NULL UNIQUE,
  order_date TEXT NOT NULL,
  customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
  channel TEXT NOT NULL REFERENCES channels (channel),
  store TEXT CHECK (store IN ('utrecht', 'ghent')),
  country_code TEXT NOT NULL REFERENCES regions (country_code),
  status TEXT NOT NULL CHECK (status IN
    ('paid','refunded','partially_refunded','cancelled','pending')),
  payment_method TEXT NOT NULL CHECK (payment_method IN
    ('card','ideal','paypal','klarna','bank_transfer')),
  total_cents INTEGER NOT NULL CHECK (total_cents >= 0),
  currency TEXT NOT NULL DEFAULT 'EUR' CHECK (currency = 'EUR'),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE order_items (
  order_item_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders (order_id),
  line_number INTEGER NOT NULL CHECK (line_number > 0),
  product_id INTEGER NOT NULL REFERENCES products (product_id),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
  discount_cents INTEGER NOT NULL DEFAULT 0 CHECK (discount_cents >= 0),
  line_total_cents INTEGER NOT NULL,
  CHECK (line_total_cents = quantity * unit_price_cents - discount_cents),
  CHECK (line_total_cents > 0),
  UNIQUE (order_id, line_number)
);
CREATE TABLE refunds (
  refund_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders (order_id),
  order_item_id INTEGER NOT NULL REFERENCES order_items (order_item_id),
  refund_date TEXT NOT NULL,
  quantity INTEGER NOT NULL CHECK (quantity >= 0),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  reason TEXT NOT NULL CHECK (reason IN
    ('return','damaged','wrong_item','late_delivery','price_match'))
);
CREATE TABLE payments (
  payment_id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders (order_id),
  method TEXT NOT NULL CHECK (method IN
    ('card','ideal','paypal','klarna','bank_transfer')),
  status TEXT NOT NULL CHECK (status IN ('captured','failed','pending')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents >= 0),
  attempted_at TEXT NOT NULL
);
)sql";

/// Indexes for the usual analytics (by date, status, channel, category,
/// product, country). None covers a personal column.
constexpr const char* index_sql = R"sql(
CREATE INDEX orders_by_date ON orders (order_date);
CREATE INDEX orders_by_status_date ON orders (status, order_date);
CREATE INDEX orders_by_channel_date ON orders (channel, order_date);
CREATE INDEX orders_by_customer ON orders (customer_id);
CREATE INDEX orders_by_country ON orders (country_code);
CREATE INDEX order_items_by_order ON order_items (order_id);
CREATE INDEX order_items_by_product ON order_items (product_id);
CREATE INDEX refunds_by_order ON refunds (order_id);
CREATE INDEX refunds_by_item ON refunds (order_item_id);
CREATE INDEX refunds_by_date ON refunds (refund_date);
CREATE INDEX payments_by_order ON payments (order_id);
CREATE INDEX products_by_category ON products (category, product_line);
CREATE INDEX customers_by_segment ON customers (segment);
CREATE INDEX customers_by_country ON customers (country_code);
CREATE INDEX customer_contacts_by_customer ON customer_contacts (customer_id);
)sql";

// -- binding helpers ----------------------------------------------------------

/// Text or NULL.
std::optional<std::string_view> nullable(const char* text) {
  if (text == nullptr)
    return std::nullopt;
  return std::string_view{text};
}

/// Binds `values` to parameters 1..n and runs the statement.
template <class... Ts>
domain::error insert(statement& stmt, const Ts&... values) {
  domain::error err;
  int index = 0;
  auto bind = [&](const auto& v) {
    ++index;
    if (err)
      return;
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::nullptr_t>)
      err = stmt.bind_null(index);
    else if constexpr (std::is_integral_v<V>)
      err = stmt.bind_int64(index, static_cast<int64_t>(v));
    else if constexpr (std::is_same_v<V, std::optional<std::string_view>>)
      err = v ? stmt.bind_text(index, *v) : stmt.bind_null(index);
    else
      err = stmt.bind_text(index, std::string_view{v});
  };
  (bind(values), ...);
  if (err)
    return err;
  return stmt.run();
}

// -- the generator ------------------------------------------------------------

struct customer {
  int signup_day = 0;
  segment_id segment = consumer;
  size_t region = 0;
  bool club_member = false;
  bool dealer = false;
  std::string label;
  std::string mail;
  int64_t id = 0;
};

struct line {
  size_t product = 0;
  int64_t quantity = 0;
  int64_t unit_price = 0;
  int64_t discount = 0;
  int64_t total() const noexcept {
    return quantity * unit_price - discount;
  }
};

class generator {
public:
  generator(database& db, uint64_t seed, const sales_progress& progress)
    : db_(db), rng_(seed), progress_(progress) {
    first_ = parse_day(sales_first_day);
    last_ = parse_day(sales_last_day);
  }

  domain::error run() {
    report("schema", 0.0);
    if (auto err = db_.exec(schema_sql))
      return err;
    if (auto err = prepare_all())
      return err;
    report("catalog data", 0.02);
    if (auto err = write_reference())
      return err;
    report("customers", 0.05);
    if (auto err = write_customers())
      return err;
    report("orders", 0.15);
    for (int day = first_; day <= last_; ++day) {
      if (auto err = write_day(day))
        return err;
      auto c = civil_of(day);
      if (c.d == 1)
        report("orders",
               0.15 + 0.70 * (day - first_) / double(last_ - first_ + 1));
    }
    report("indexes", 0.85);
    return db_.exec(index_sql);
  }

private:
  void report(std::string_view stage, double fraction) {
    if (progress_)
      progress_(stage, fraction);
  }

  domain::error prepare_all() {
    auto prep = [&](statement& out, std::string_view sql) -> domain::error {
      auto stmt = db_.prepare(sql);
      if (!stmt)
        return stmt.err();
      out = std::move(*stmt);
      return {};
    };
    domain::error err;
    for (auto [out, sql] : std::initializer_list<
           std::pair<statement*, std::string_view>>{
           {&ins_region_, "INSERT INTO regions VALUES (?,?,?,?)"},
           {&ins_category_, "INSERT INTO categories VALUES (?,?,?)"},
           {&ins_channel_, "INSERT INTO channels VALUES (?,?,?)"},
           {&ins_product_,
            "INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?)"},
           {&ins_customer_, "INSERT INTO customers VALUES (?,?,?,?,?,?,?)"},
           {&ins_contact_,
            "INSERT INTO customer_contacts VALUES (?,?,?,?,?)"},
           {&ins_order_, "INSERT INTO orders VALUES "
                         "(?,?,?,?,?,?,?,?,?,?,'EUR',?,?)"},
           {&ins_item_, "INSERT INTO order_items VALUES (?,?,?,?,?,?,?,?)"},
           {&ins_refund_, "INSERT INTO refunds VALUES (?,?,?,?,?,?,?)"},
           {&ins_payment_, "INSERT INTO payments VALUES (?,?,?,?,?,?)"},
         })
      if (!err)
        err = prep(*out, sql);
    return err;
  }

  domain::error write_reference() {
    for (auto& r : regions)
      if (auto err = insert(ins_region_, r.code, r.country, r.zone, r.in_eu))
        return err;
    for (auto& c : categories)
      if (auto err = insert(ins_category_, c.code, c.display, c.description))
        return err;
    for (auto& c : channels)
      if (auto err = insert(ins_channel_, c.code, c.display, c.description))
        return err;
    std::array<int, category_count> per_category{};
    for (size_t i = 0; i < product_count; ++i) {
      auto& p = products[i];
      char sku[16];
      std::snprintf(sku, sizeof sku, "%s-%04d", sku_prefix[p.category],
                    ++per_category[p.category]);
      auto cost = p.price_cents * categories[p.category].cost_percent / 100;
      launched_[i] = parse_day(p.launched);
      until_[i] = p.discontinued ? parse_day(p.discontinued) : last_ + 1;
      if (auto err = insert(ins_product_, static_cast<int64_t>(i + 1), sku,
                            p.label, categories[p.category].code, p.line,
                            p.price_cents, cost, p.launched,
                            nullable(p.discontinued)))
        return err;
    }
    return {};
  }

  // -- customers --------------------------------------------------------------

  int signup_day() {
    // Growth: more sign-ups every year, most of them in 2024 and 2025.
    static constexpr std::array<double, 8> per_year{4, 6, 9, 11, 12, 13, 21,
                                                    24};
    auto year = 2018 + static_cast<int>(rng_.pick(per_year));
    auto from = day_number(year, 1, 1);
    auto to = day_number(year, 12, 31);
    return static_cast<int>(rng_.between(from, to));
  }

  size_t pick_region(std::span<const size_t> allowed = {}) {
    std::array<double, regions.size()> w{};
    for (size_t i = 0; i < regions.size(); ++i)
      w[i] = allowed.empty() ? regions[i].weight : 0;
    for (auto i : allowed)
      w[i] = regions[i].weight;
    return rng_.pick(w);
  }

  domain::error write_customers() {
    std::vector<customer> all;
    auto person = [&](customer& c) {
      auto& first = any_of(rng_, first_names);
      auto& last = any_of(rng_, last_names);
      c.label = std::string{first} + " " + last;
      c.mail = slug(first, '.') + "." + slug(last, '.');
    };
    for (int i = 0; i < 12500; ++i) {
      customer c;
      c.segment = consumer;
      c.region = pick_region();
      c.signup_day = signup_day();
      c.club_member = c.signup_day >= day_number(2020, 1, 1)
                      && rng_.chance(0.18);
      person(c);
      all.push_back(std::move(c));
    }
    // Partner dealers: about 160 shops in seven countries (zones A and B).
    static constexpr std::array<size_t, 7> dealer_regions{0, 1, 2, 3,
                                                          4, 5, 6};
    for (int i = 0; i < 700; ++i) {
      customer c;
      c.segment = business;
      c.dealer = i < 160;
      c.region = c.dealer ? pick_region(dealer_regions) : pick_region();
      c.signup_day = c.dealer ? static_cast<int>(rng_.between(
                                  day_number(2016, 1, 1),
                                  day_number(2023, 12, 31)))
                              : signup_day();
      auto& r = regions[c.region];
      auto city = r.cities[rng_.below(3)];
      if (c.dealer)
        c.label = rng_.chance(0.5)
                    ? std::string{city} + " Bike Shop "
                        + any_of(rng_, last_names)
                    : std::string{"Fietsen "} + any_of(rng_, last_names)
                        + " " + city;
      else
        c.label = std::string{any_of(rng_, last_names)} + " "
                  + any_of(rng_, business_suffixes) + " " + city;
      c.mail = "orders@" + slug(c.label, '-');
      all.push_back(std::move(c));
    }
    static constexpr std::array<size_t, 7> club_regions{0, 1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 400; ++i) {
      customer c;
      c.segment = club;
      c.region = rng_.chance(0.85) ? pick_region(club_regions)
                                   : pick_region();
      c.signup_day = signup_day();
      auto city = regions[c.region].cities[rng_.below(3)];
      static constexpr const char* forms[] = {"WTC ", "RC ", "Cycling Club ",
                                              "Velo Club "};
      c.label = std::string{any_of(rng_, forms)} + city + " "
                + std::to_string(i + 1);
      c.mail = "secretary@" + slug(c.label, '-');
      all.push_back(std::move(c));
    }
    // Ids follow the sign-up order, as in a real customer table.
    std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) {
      return a.signup_day < b.signup_day;
    });
    int64_t contact_id = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      auto& c = all[i];
      c.id = static_cast<int64_t>(i + 1);
      std::string mail = c.mail;
      if (c.segment == consumer)
        mail += std::to_string(c.id) + "@" + any_of(rng_, mail_domains);
      else
        mail += ".example";
      if (auto err = insert(ins_customer_, c.id, c.label, mail,
                            segment_names[c.segment], regions[c.region].code,
                            iso_date(c.signup_day), c.club_member ? 1 : 0))
        return err;
      auto contacts = rng_.chance(0.08) ? 2 : 1;
      for (int k = 0; k < contacts; ++k) {
        auto& r = regions[c.region];
        char phone[40];
        std::snprintf(phone, sizeof phone, "%s%04d", r.phone_prefix,
                      static_cast<int>(rng_.below(10000)));
        char address[160];
        std::snprintf(address, sizeof address, "%s %d, %04d %s",
                      any_of(rng_, street_names),
                      static_cast<int>(rng_.between(1, 220)),
                      static_cast<int>(rng_.between(1000, 9999)),
                      r.cities[rng_.below(3)]);
        auto contact_mail = k == 0 ? mail
                                   : "alt." + std::to_string(c.id) + "@"
                                       + any_of(rng_, mail_domains);
        if (auto err = insert(ins_contact_, ++contact_id, c.id, contact_mail,
                              std::string_view{phone},
                              std::string_view{address}))
          return err;
      }
      if (c.dealer)
        pool_[3].push_back(i);
      else
        pool_[c.segment].push_back(i);
    }
    customers_ = std::move(all);
    return {};
  }

  /// A customer of `pool` who had signed up by `day`: often a recent
  /// sign-up, otherwise anyone, with a lean towards long-standing ones.
  const customer* pick_customer(size_t pool, int day) {
    auto& ids = pool_[pool];
    auto signed_up = [&](int d) {
      return static_cast<size_t>(
        std::upper_bound(ids.begin(), ids.end(), d,
                         [&](int x, size_t i) {
                           return x < customers_[i].signup_day;
                         })
        - ids.begin());
    };
    auto known = signed_up(day);
    if (known == 0)
      return nullptr;
    if (rng_.chance(0.3)) {
      auto recent = signed_up(day - 60);
      if (recent < known)
        return &customers_[ids[recent + rng_.below(known - recent)]];
    }
    auto pos = rng_.below(known);
    if (rng_.chance(0.5))
      pos = std::min(pos, rng_.below(known));
    return &customers_[ids[pos]];
  }

  // -- orders -----------------------------------------------------------------

  /// Black Friday: the day after the fourth Thursday of November.
  static int black_friday(int year) {
    auto nov1 = day_number(year, 11, 1);
    auto offset = (4 + 7 - static_cast<int>(weekday_of(nov1))) % 7;
    return nov1 + offset + 21 + 1;
  }

  domain::error write_day(int day) {
    auto c = civil_of(day);
    auto wd = weekday_of(day);
    auto bf = black_friday(c.y);
    bool bf_weekend = day >= bf && day <= bf + 3;
    bool closed = (c.m == 12 && (c.d == 25 || c.d == 26))
                  || (c.m == 1 && c.d == 1);
    for (size_t ch = 0; ch < channel_count; ++ch) {
      auto lambda = base_per_day[ch] * channel_month[ch][c.m - 1]
                    * channel_weekday[ch][wd];
      if (c.y >= 2025)
        lambda *= growth_2025[ch];
      if (bf_weekend)
        lambda *= ch == web ? 2.6 : ch == marketplace ? 3.0 : 1.5;
      if (closed)
        lambda *= (ch == web || ch == marketplace) ? 0.5 : 0.0;
      if (lambda <= 0)
        continue;
      lambda *= 0.85 + 0.3 * rng_.unit();
      auto n = static_cast<int>(lambda);
      if (rng_.chance(lambda - n))
        ++n;
      for (int i = 0; i < n; ++i)
        if (auto err = write_order(day, static_cast<channel_id>(ch), wd,
                                   bf_weekend))
          return err;
    }
    return {};
  }

  bool available(size_t p, int day, channel_id ch, size_t region,
                 bool utrecht) const {
    auto& def = products[p];
    if (day < launched_[p] || day > until_[p])
      return false;
    switch (def.where) {
      case everywhere:
        break;
      case no_market:
        if (ch == marketplace)
          return false;
        break;
      case own_channels:
        if (ch != web && ch != retail)
          return false;
        break;
      case stores:
        if (ch != retail)
          return false;
        break;
      case utrecht_only:
        if (ch != retail || !utrecht)
          return false;
        break;
    }
    // No e-bikes or e-bike batteries to Norway or Switzerland; customers
    // there collect in a store.
    if (def.electric && ch != retail && zone_e(region))
      return false;
    return true;
  }

  /// A product of `category` for this order, or product_count if none.
  size_t pick_product(category_id category, int day, channel_id ch,
                      size_t region, bool utrecht, unsigned month) {
    std::array<double, product_count> w{};
    bool any = false;
    for (size_t p = 0; p < product_count; ++p) {
      if (products[p].category != category
          || !available(p, day, ch, region, utrecht))
        continue;
      w[p] = products[p].weight;
      std::string_view line{products[p].line};
      if (line == "fledgling" && month == 12)
        w[p] *= 3; // kids bikes under the tree
      if (line == "lights" && (month >= 10 || month <= 2))
        w[p] *= 2; // dark evenings
      if (line == "jackets" && (month >= 10 || month <= 2))
        w[p] *= 2;
      any = true;
    }
    return any ? rng_.pick(w) : product_count;
  }

  int64_t quantity(const product_def& p, segment_id seg, channel_id ch,
                   bool dealer) {
    std::string_view line{p.line};
    if (dealer) {
      switch (p.category) {
        case bikes:
          return rng_.between(1, 5);
        case components:
          return rng_.between(4, 20);
        case apparel:
          return rng_.between(3, 12);
        case accessories:
          return rng_.between(4, 20);
        default:
          return rng_.between(4, 16);
      }
    }
    if (seg == business) {
      if (p.category == bikes)
        return rng_.chance(0.1) ? rng_.between(10, 20) : rng_.between(1, 4);
      return p.category == service ? rng_.between(1, 8) : rng_.between(1, 5);
    }
    if (seg == club) {
      if (p.category == apparel)
        return rng_.between(5, 25);
      if (p.category == nutrition)
        return rng_.between(2, 10);
      return rng_.between(1, 5);
    }
    (void) ch;
    if (p.category == service)
      return 1;
    if (p.category == bikes)
      return rng_.chance(0.03) ? 2 : 1;
    if (line == "gels" || line == "bars")
      return p.price_cents < 1000 ? rng_.between(1, 12) : rng_.between(1, 2);
    if (line == "drink_mix" || line == "bottles" || line == "tyres")
      return std::string_view{p.label} == "Inner tube" ? rng_.between(1, 4)
                                                       : rng_.between(1, 2);
    return rng_.chance(0.08) ? 2 : 1;
  }

  static int64_t unit_price(const product_def& p, channel_id ch) {
    switch (ch) {
      case marketplace: {
        // Marketplace prices carry part of the marketplace fee.
        auto raised = p.price_cents * 105 / 100;
        return raised >= 1000 ? (raised + 50) / 100 * 100 - 1 : raised;
      }
      case partner:
        // Wholesale: the dealer margin.
        return p.price_cents * (p.category == bikes ? 60 : 55) / 100;
      default:
        return p.price_cents;
    }
  }

  /// Seconds after midnight for an order placed in `ch`.
  int time_of_day(channel_id ch, unsigned wd, bool utrecht) {
    if (ch == retail) {
      auto open = wd == 0 ? 12 : 10;
      auto close = wd == 0 ? 17 : wd == 4 ? 20 : 18;
      (void) utrecht;
      return static_cast<int>(rng_.between(open * 3600, close * 3600 - 60));
    }
    if (ch == partner)
      return static_cast<int>(rng_.between(8 * 3600, 17 * 3600));
    static constexpr std::array<double, 24> hours{
      1, 0.5, 0.3, 0.2, 0.2, 0.4, 1, 2, 3, 4, 4.5, 5,
      5.5, 5, 4.5, 4.5, 5, 5.5, 6, 7, 7.5, 7, 5, 2.5};
    auto h = static_cast<int>(rng_.pick(hours));
    return h * 3600 + static_cast<int>(rng_.below(3600));
  }

  domain::error write_order(int day, channel_id ch, unsigned wd,
                            bool bf_weekend) {
    auto c = civil_of(day);
    // Who buys, and where it goes.
    const customer* buyer = nullptr;
    mix_id mix = mix_web_consumer;
    bool utrecht = false;
    const char* store = nullptr;
    switch (ch) {
      case web: {
        std::array<double, 3> w{86, 8, 6};
        auto seg = rng_.pick(w);
        buyer = pick_customer(seg, day);
        mix = seg == consumer   ? mix_web_consumer
              : seg == business ? mix_web_business
                                : mix_web_club;
        break;
      }
      case marketplace:
        buyer = pick_customer(consumer, day);
        mix = mix_marketplace;
        break;
      case retail:
        buyer = pick_customer(rng_.chance(0.9) ? consumer : club, day);
        mix = mix_retail;
        // Both stores close on Mondays; Ghent also on Sundays.
        utrecht = wd == 0 || rng_.chance(0.62);
        store = utrecht ? "utrecht" : "ghent";
        break;
      case partner:
        buyer = pick_customer(3, day);
        mix = mix_partner;
        break;
      default:
        break;
    }
    if (buyer == nullptr)
      return {};
    auto region = ch == retail ? (utrecht ? region_nl : region_be)
                               : buyer->region;
    bool dealer = ch == partner;

    // The basket.
    int lines_wanted = 1;
    if (dealer) {
      lines_wanted = static_cast<int>(rng_.between(2, 8));
    } else {
      static constexpr std::array<double, 5> consumer_lines{55, 25, 12, 5, 3};
      static constexpr std::array<double, 5> market_lines{70, 22, 8, 0, 0};
      static constexpr std::array<double, 5> retail_lines{60, 25, 15, 0, 0};
      static constexpr std::array<double, 5> account_lines{40, 32, 22, 6, 0};
      auto& w = ch == marketplace             ? market_lines
                : ch == retail                ? retail_lines
                : buyer->segment != consumer ? account_lines
                                              : consumer_lines;
      lines_wanted = 1 + static_cast<int>(rng_.pick(w));
    }
    std::array<double, category_count> cat_w{};
    for (size_t k = 0; k < category_count; ++k)
      cat_w[k] = category_mix[mix][k] * category_month[k][c.m - 1];
    std::vector<line> basket;
    for (int attempt = 0; static_cast<int>(basket.size()) < lines_wanted
                          && attempt < 3 * lines_wanted;
         ++attempt) {
      auto category = static_cast<category_id>(rng_.pick(cat_w));
      auto p = pick_product(category, day, ch, region, utrecht, c.m);
      if (p == product_count)
        continue;
      if (std::any_of(basket.begin(), basket.end(),
                      [&](const line& l) { return l.product == p; }))
        continue;
      line l;
      l.product = p;
      l.quantity = quantity(products[p], buyer->segment, ch, dealer);
      l.unit_price = unit_price(products[p], ch);
      basket.push_back(l);
    }
    if (basket.empty())
      return {};

    // Discounts.
    bool promo = ch == web && buyer->segment == consumer && rng_.chance(0.06);
    for (auto& l : basket) {
      auto& p = products[l.product];
      auto gross = l.quantity * l.unit_price;
      int percent = 0;
      if (bf_weekend && (ch == web || ch == marketplace)
          && p.category != service && p.category != nutrition)
        percent = p.category == bikes ? 10 : 20;
      else if (c.m == 7 && p.category == apparel
               && (ch == web || ch == retail))
        percent = 15; // summer sale
      else if (promo && p.category != service)
        percent = 10;
      else if (buyer->segment == business && p.category == bikes
               && l.quantity >= 10)
        percent = 8; // fleet order
      else if (dealer && p.category == bikes && l.quantity >= 4)
        percent = 4;
      l.discount = gross * percent / 100;
    }
    // Kestrel Club birthday voucher: EUR 10 on orders of EUR 40 or more.
    if (buyer->club_member && ch == web && rng_.chance(0.03)) {
      auto& first = basket.front();
      if (first.total() >= 4000 + 1000)
        first.discount += 1000;
    }
    int64_t total = 0;
    bool has_plan = false;
    for (auto& l : basket) {
      total += l.total();
      has_plan |= std::string_view{products[l.product].line}
                  == "workshop_plans";
    }

    // Payment method.
    payment_id method = card;
    if (ch == partner) {
      method = bank_transfer;
    } else if (ch == marketplace) {
      method = rng_.chance(0.7) ? card : paypal;
    } else if (ch == retail) {
      method = card;
    } else {
      std::array<double, payment_count> w{};
      bool nl = region == region_nl;
      if (buyer->segment == consumer) {
        w[card] = 40;
        w[paypal] = 25;
        w[ideal] = nl ? 45 : 0;
        w[klarna] = klarna_country(region) && total >= 3500
                        && total <= 150000 && !has_plan
                      ? 18
                      : 0;
      } else {
        w[bank_transfer] = 55;
        w[card] = nl ? 20 : 35;
        w[ideal] = nl ? 15 : 0;
        w[paypal] = 10;
      }
      method = static_cast<payment_id>(rng_.pick(w));
    }

    // Order row.
    auto order_id = ++order_id_;
    auto created_second = time_of_day(ch, wd, utrecht);
    auto created = iso_time(day, created_second);
    char number[32];
    switch (ch) {
      case marketplace:
        std::snprintf(number, sizeof number, "MP-%08lld",
                      static_cast<long long>(order_id));
        break;
      case retail:
        std::snprintf(number, sizeof number, "%s-%08lld",
                      utrecht ? "UTR" : "GNT",
                      static_cast<long long>(order_id));
        break;
      case partner:
        std::snprintf(number, sizeof number, "PD-%08lld",
                      static_cast<long long>(order_id));
        break;
      default:
        std::snprintf(number, sizeof number, "KCW-%08lld",
                      static_cast<long long>(order_id));
        break;
    }

    // Payment and status. Times are seconds from the order day's midnight.
    enum class fate { captured, cancelled, pending } outcome = fate::captured;
    int paid_at = created_second + static_cast<int>(rng_.between(20, 900));
    double cancel_p = ch == web ? 0.035
                      : ch == marketplace ? 0.015
                      : ch == partner ? 0.015
                                      : 0.0;
    if (method == bank_transfer) {
      auto wait_days = ch == partner ? rng_.between(5, 30) : rng_.between(0, 4);
      paid_at = static_cast<int>(wait_days) * 86400
                + static_cast<int>(rng_.between(9 * 3600, 16 * 3600));
    }
    if (rng_.chance(cancel_p))
      outcome = fate::cancelled;
    else if (day + paid_at / 86400 > last_)
      outcome = fate::pending;
    else if (day >= last_ - 1 && ch != retail && rng_.chance(0.35))
      outcome = fate::pending;

    std::vector<std::tuple<const char*, int64_t, int>> payment_rows;
    switch (outcome) {
      case fate::captured:
        if (method != bank_transfer && ch != retail && rng_.chance(0.03))
          payment_rows.emplace_back("failed", total, created_second + 10);
        payment_rows.emplace_back("captured", total, paid_at);
        break;
      case fate::cancelled:
        if (rng_.chance(0.65))
          payment_rows.emplace_back("failed", total, created_second + 30);
        break;
      case fate::pending:
        payment_rows.emplace_back("pending", total, created_second + 30);
        break;
    }

    // Refunds of captured orders.
    struct refund_row {
      size_t line;
      int day;
      int64_t quantity;
      int64_t amount;
      const char* reason;
    };
    std::vector<refund_row> refund_rows;
    if (outcome == fate::captured) {
      auto paid_day = day + paid_at / 86400;
      double whole = ch == marketplace ? 0.03
                     : ch == retail    ? 0.005
                     : ch == partner   ? 0.003
                                       : 0.02;
      double channel_factor = ch == marketplace ? 1.4
                              : ch == retail    ? 0.5
                              : ch == partner   ? 0.3
                                                : 1.0;
      if (c.m >= 11)
        channel_factor *= 1.3; // gifts come back in January
      if (rng_.chance(whole)) {
        auto when = paid_day + static_cast<int>(rng_.between(5, 30));
        auto reason = (ch == web || ch == marketplace) && rng_.chance(0.2)
                        ? "late_delivery"
                        : "return";
        for (size_t i = 0; i < basket.size(); ++i)
          refund_rows.push_back(
            {i, when, basket[i].quantity, basket[i].total(), reason});
      } else {
        for (size_t i = 0; i < basket.size(); ++i) {
          auto& l = basket[i];
          auto& p = products[l.product];
          auto per_mille = return_per_mille[p.category] * channel_factor;
          if (rng_.chance(per_mille / 1000.0)) {
            auto k = l.quantity == 1 ? 1 : rng_.between(1, l.quantity);
            auto amount = k == l.quantity ? l.total() : l.total() * k
                                                          / l.quantity;
            const char* reason = "return";
            std::array<double, 4> w{70, 12, 10, 8};
            if (ch == retail)
              w[2] = w[3] = 0;
            switch (rng_.pick(w)) {
              case 1:
                reason = "damaged";
                break;
              case 2:
                reason = "wrong_item";
                break;
              case 3:
                reason = "late_delivery";
                break;
              default:
                break;
            }
            auto when = paid_day + static_cast<int>(rng_.between(3, 35));
            if (amount > 0)
              refund_rows.push_back({i, when, k, amount, reason});
          } else if (p.category == bikes && ch == web
                     && rng_.chance(0.015)) {
            // Price match within 7 days: the difference goes back.
            auto when = paid_day + static_cast<int>(rng_.between(2, 9));
            auto amount = l.total() * 5 / 100;
            if (amount > 0)
              refund_rows.push_back({i, when, 0, amount, "price_match"});
          }
        }
      }
      // Refunds after the data cut-off have not happened yet.
      std::erase_if(refund_rows,
                    [&](const refund_row& r) { return r.day > last_; });
    }
    int64_t refunded = 0;
    int last_change = created_second;
    for (auto& p : payment_rows)
      last_change = std::max(last_change, std::get<2>(p));
    for (auto& r : refund_rows) {
      refunded += r.amount;
      last_change = std::max(last_change, (r.day - day) * 86400 + 12 * 3600);
    }
    const char* status = "paid";
    if (outcome == fate::cancelled)
      status = "cancelled";
    else if (outcome == fate::pending)
      status = "pending";
    else if (refunded == total && refunded > 0)
      status = "refunded";
    else if (refunded > 0)
      status = "partially_refunded";

    if (auto err = insert(ins_order_, order_id, std::string_view{number},
                          iso_date(day), buyer->id, channels[ch].code,
                          nullable(store),
                          regions[region].code, status,
                          payment_names[method], total, created,
                          iso_time(day, last_change)))
      return err;
    std::vector<int64_t> item_ids;
    for (size_t i = 0; i < basket.size(); ++i) {
      auto& l = basket[i];
      auto item_id = ++item_id_;
      item_ids.push_back(item_id);
      if (auto err = insert(ins_item_, item_id, order_id,
                            static_cast<int64_t>(i + 1),
                            static_cast<int64_t>(l.product + 1), l.quantity,
                            l.unit_price, l.discount, l.total()))
        return err;
    }
    for (auto& [pstatus, amount, at] : payment_rows)
      if (auto err = insert(ins_payment_, ++payment_id_, order_id,
                            payment_names[method], pstatus, amount,
                            iso_time(day, at)))
        return err;
    std::sort(refund_rows.begin(), refund_rows.end(),
              [](auto& a, auto& b) {
                return a.day != b.day ? a.day < b.day : a.line < b.line;
              });
    for (auto& r : refund_rows)
      if (auto err = insert(ins_refund_, ++refund_id_, order_id,
                            item_ids[r.line], iso_date(r.day), r.quantity,
                            r.amount, r.reason))
        return err;
    return {};
  }

  database& db_;
  rng rng_;
  const sales_progress& progress_;
  int first_ = 0;
  int last_ = 0;
  std::array<int, product_count> launched_{};
  std::array<int, product_count> until_{};
  std::vector<customer> customers_;
  /// Customer indexes (sorted by sign-up) per segment; 3 = dealers.
  std::array<std::vector<size_t>, 4> pool_;
  int64_t order_id_ = 0;
  int64_t item_id_ = 0;
  int64_t payment_id_ = 0;
  int64_t refund_id_ = 0;
  statement ins_region_;
  statement ins_category_;
  statement ins_channel_;
  statement ins_product_;
  statement ins_customer_;
  statement ins_contact_;
  statement ins_order_;
  statement ins_item_;
  statement ins_refund_;
  statement ins_payment_;
};

} // namespace

domain::outcome<sales_summary> generate_sales(const std::string& path,
                                              uint64_t seed,
                                              const sales_progress& progress,
                                              bool overwrite) {
  namespace fs = std::filesystem;
  if (path.empty())
    return make_error(ec::invalid_request, "empty sales database path");
  std::error_code fs_err;
  if (fs::exists(path, fs_err) && !overwrite)
    return make_error(ec::invalid_request,
                      "sales database already exists: " + path
                        + " (refusing to overwrite it)");
  auto tmp = path + ".tmp";
  fs::remove(tmp, fs_err);
  fs::remove(tmp + "-journal", fs_err);
  // Whatever happens below, no half-built file survives.
  struct cleanup {
    std::string file;
    bool armed = true;
    ~cleanup() {
      if (!armed)
        return;
      std::error_code ignored;
      fs::remove(file, ignored);
      fs::remove(file + "-journal", ignored);
    }
  } guard{tmp};

  sales_summary summary;
  {
    auto db = database::open(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!db)
      return db.err();
    if (auto err = db->exec("PRAGMA journal_mode = MEMORY; "
                            "PRAGMA foreign_keys = OFF; "
                            "PRAGMA cache_size = -32000"))
      return err;
    {
      auto tx = transaction::begin(*db);
      if (!tx)
        return tx.err();
      generator gen{*db, seed, progress};
      if (auto err = gen.run())
        return err;
      if (progress)
        progress("checks", 0.90);
      if (auto err = check_sales(*db))
        return err;
      if (auto err = tx->commit())
        return err;
    }
    if (progress)
      progress("fingerprint", 0.95);
    auto sum = summarize_sales(*db);
    if (!sum)
      return sum.err();
    summary = std::move(*sum);
    summary.seed = seed;
  }
  fs::rename(tmp, path, fs_err);
  if (fs_err)
    return make_error(ec::storage_failed, "cannot move " + tmp + " to " + path
                                            + ": " + fs_err.message());
  guard.armed = false;
  if (progress)
    progress("done", 1.0);
  return summary;
}

} // namespace candor::data
