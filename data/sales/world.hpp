#pragma once

// The world the sales generator draws from (data/sales/gen.cpp,
// data/sales/orders.cpp): deterministic random numbers, dates, the
// company's reference data (categories, channels, regions, products,
// seasons, payment methods) and fictional names. Internal to those files.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

namespace candor::data::sales {

// -- deterministic random numbers ---------------------------------------------

/// splitmix64: expands the seed into the xoshiro state (never all zero).
inline uint64_t splitmix64(uint64_t& x) noexcept {
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
inline int day_number(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return static_cast<int>(
    sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count());
}

struct civil {
  int y;
  unsigned m;
  unsigned d;
};

inline civil civil_of(int day) {
  using namespace std::chrono;
  year_month_day ymd{sys_days{days{day}}};
  return {static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
          static_cast<unsigned>(ymd.day())};
}

/// 0 = Sunday ... 6 = Saturday.
inline unsigned weekday_of(int day) {
  using namespace std::chrono;
  return weekday{sys_days{days{day}}}.c_encoding();
}

inline std::string iso_date(int day) {
  auto c = civil_of(day);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", c.y, c.m, c.d);
  return buf;
}

/// A timestamp as seconds since midnight of day 0; printed in UTC.
inline std::string iso_time(int day, int second_of_day) {
  day += second_of_day / 86400;
  second_of_day %= 86400;
  auto c = civil_of(day);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d", c.y, c.m, c.d,
                second_of_day / 3600, second_of_day / 60 % 60,
                second_of_day % 60);
  return buf;
}

inline int parse_day(std::string_view iso) {
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

inline constexpr std::array<category_def, category_count> categories{{
  {"bikes", "Bikes",
   "Kestrel bicycles: road (Strada), gravel (Ridgeline), city (Canal), "
   "e-bikes (Volt City, Volt Trek) and kids bikes (Fledgling).",
   58},
  {"components", "Components",
   "Drivetrain parts, brakes, wheels, tyres and e-bike parts.", 52},
  {"apparel", "Apparel", "Jerseys, jackets, gloves and helmets.", 42},
  {"accessories", "Accessories", "Lights, locks, bags, pumps and bottles.", 46},
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

inline constexpr std::array<channel_def, channel_count> channels{{
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

inline constexpr std::array<region_def, 18> regions{{
  {"NL",
   "Netherlands",
   "A",
   1,
   300,
   {"Utrecht", "Amsterdam", "Rotterdam"},
   "+31 6 5550"},
  {"BE",
   "Belgium",
   "A",
   1,
   140,
   {"Ghent", "Antwerp", "Brussels"},
   "+32 470 55"},
  {"LU",
   "Luxembourg",
   "A",
   1,
   10,
   {"Luxembourg", "Esch-sur-Alzette", "Differdange"},
   "+352 621 55"},
  {"DE",
   "Germany",
   "B",
   1,
   170,
   {"Berlin", "Munich", "Cologne"},
   "+49 151 5550"},
  {"FR", "France", "B", 1, 70, {"Lyon", "Paris", "Lille"}, "+33 6 5550"},
  {"AT", "Austria", "B", 1, 30, {"Vienna", "Graz", "Salzburg"}, "+43 664 5550"},
  {"DK",
   "Denmark",
   "B",
   1,
   30,
   {"Copenhagen", "Aarhus", "Odense"},
   "+45 20 55"},
  {"ES", "Spain", "C", 1, 25, {"Madrid", "Barcelona", "Valencia"}, "+34 655 5"},
  {"IT", "Italy", "C", 1, 25, {"Milan", "Turin", "Bologna"}, "+39 347 555"},
  {"IE", "Ireland", "C", 1, 10, {"Dublin", "Cork", "Galway"}, "+353 85 555"},
  {"SE",
   "Sweden",
   "C",
   1,
   20,
   {"Stockholm", "Gothenburg", "Malmo"},
   "+46 70 555"},
  {"PL", "Poland", "C", 1, 15, {"Warsaw", "Krakow", "Gdansk"}, "+48 555"},
  {"PT", "Portugal", "C", 1, 8, {"Lisbon", "Porto", "Braga"}, "+351 91 555"},
  {"FI", "Finland", "C", 1, 8, {"Helsinki", "Tampere", "Turku"}, "+358 40 555"},
  {"CZ", "Czechia", "C", 1, 10, {"Prague", "Brno", "Ostrava"}, "+420 601 55"},
  {"GB",
   "United Kingdom",
   "D",
   0,
   55,
   {"London", "Bristol", "Manchester"},
   "+44 7700 9"},
  {"NO", "Norway", "E", 0, 18, {"Oslo", "Bergen", "Trondheim"}, "+47 41 55"},
  {"CH", "Switzerland", "E", 0, 26, {"Zurich", "Basel", "Bern"}, "+41 79 555"},
}};

inline constexpr size_t region_nl = 0;
inline constexpr size_t region_be = 1;

inline bool zone_e(size_t region) {
  return regions[region].zone[0] == 'E';
}

/// Klarna pay-later countries (payments-and-refunds.md).
inline bool klarna_country(size_t region) {
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
inline constexpr product_def products[] = {
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

inline constexpr size_t product_count = std::size(products);

inline constexpr const char* sku_prefix[category_count]
  = {"BK", "CP", "AP", "AC", "NU", "SV"};

// Seasonality: one factor per month (January first).
using months = std::array<double, 12>;

inline constexpr std::array<months, channel_count> channel_month{{
  {0.75, 0.80, 1.00, 1.15, 1.20, 1.10, 1.00, 0.95, 0.90, 0.90, 1.20, 1.30},
  {0.85, 0.80, 0.90, 1.00, 1.00, 0.95, 0.95, 0.95, 0.95, 1.00, 1.40, 1.55},
  {0.65, 0.75, 1.05, 1.30, 1.35, 1.25, 1.05, 0.95, 0.90, 0.85, 0.95, 1.20},
  {0.80, 1.30, 1.50, 1.35, 1.10, 0.95, 0.80, 0.70, 0.85, 0.90, 0.75, 0.50},
}};

inline constexpr std::array<months, category_count> category_month{{
  {0.45, 0.60, 1.00, 1.35, 1.50, 1.50, 1.30, 1.05, 0.85, 0.65, 0.75, 0.90},
  {0.90, 0.95, 1.15, 1.15, 1.10, 1.05, 1.00, 1.00, 1.00, 0.95, 0.95, 0.80},
  {0.80, 0.80, 1.00, 1.10, 1.10, 1.00, 0.90, 0.85, 0.95, 1.10, 1.20, 1.40},
  {0.90, 0.85, 0.95, 1.00, 1.00, 1.00, 0.95, 0.90, 1.00, 1.20, 1.30, 1.45},
  {0.70, 0.80, 1.00, 1.15, 1.30, 1.35, 1.35, 1.20, 1.00, 0.80, 0.70, 0.80},
  {0.80, 1.00, 1.35, 1.40, 1.20, 1.00, 0.90, 0.90, 1.00, 1.00, 0.80, 0.70},
}};

/// Orders per day at a factor of 1, in 2024; 2025 grows per channel.
inline constexpr std::array<double, channel_count> base_per_day{21.0, 7.5, 6.5,
                                                                1.6};
inline constexpr std::array<double, channel_count> growth_2025{1.12, 1.25, 1.05,
                                                               1.10};

/// Day-of-week factors, Sunday first.
inline constexpr std::array<std::array<double, 7>, channel_count>
  channel_weekday{{
    {1.15, 1.10, 1.00, 0.95, 0.95, 0.90, 0.95},
    {1.15, 1.05, 1.00, 1.00, 0.95, 0.95, 1.00},
    {0.80, 0.00, 0.90, 0.90, 1.20, 1.00, 1.60},
    {0.00, 1.00, 1.00, 1.00, 1.00, 1.00, 0.00},
  }};

enum segment_id : uint8_t { consumer, business, club, segment_count };
inline constexpr std::array<const char*, segment_count> segment_names{
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

inline constexpr std::array<std::array<double, category_count>, 6> category_mix{
  {
    {10, 22, 20, 25, 15, 8},
    {35, 15, 5, 25, 5, 15},
    {5, 10, 55, 10, 20, 0},
    {3, 27, 22, 30, 18, 0},
    {18, 15, 15, 20, 7, 25},
    {40, 25, 10, 20, 5, 0},
  }};

/// Chance per mille that one line is returned, by category.
inline constexpr std::array<double, category_count> return_per_mille{
  35, 45, 110, 55, 8, 15};

enum payment_id : uint8_t {
  card,
  ideal,
  paypal,
  klarna,
  bank_transfer,
  payment_count,
};
inline constexpr std::array<const char*, payment_count> payment_names{
  "card", "ideal", "paypal", "klarna", "bank_transfer"};

// -- names (fictional; the `.example` domains are reserved) -------------------

inline constexpr const char* first_names[]
  = {"Anna",  "Bram",    "Charlotte", "Daan",    "Eva",   "Finn",  "Greta",
     "Hugo",  "Ines",    "Jonas",     "Katrin",  "Lars",  "Lotte", "Mats",
     "Nora",  "Olivier", "Pia",       "Quentin", "Ruben", "Sanne", "Tom",
     "Ute",   "Victor",  "Wout",      "Xavier",  "Yara",  "Zoe",   "Amelie",
     "Bas",   "Clara",   "Dirk",      "Elise",   "Floor", "Gijs",  "Hanna",
     "Ivo",   "Julia",   "Koen",      "Lena",    "Milan", "Noor",  "Oscar",
     "Paula", "Rik",     "Sofie",     "Thijs",   "Vera",  "Willem"};

inline constexpr const char* last_names[]
  = {"de Vries", "Janssens", "Muller",   "Dubois",  "Bakker",    "Peeters",
     "Schmidt",  "Laurent",  "Visser",   "Maes",    "Schneider", "Moreau",
     "Smit",     "Jacobs",   "Fischer",  "Lefevre", "Meijer",    "Willems",
     "Weber",    "Garcia",   "de Boer",  "Claes",   "Wagner",    "Rossi",
     "Mulder",   "Goossens", "Becker",   "Nielsen", "de Groot",  "Wouters",
     "Hoffmann", "Jensen",   "Bos",      "Hermans", "Koch",      "Andersen",
     "Vos",      "Martens",  "Richter",  "Larsen",  "Dekker",    "Lambert",
     "Wolf",     "Hansen",   "van Dijk", "Dupont",  "Kowalski",  "Murphy"};

inline constexpr const char* street_names[]
  = {"Kanaalweg",   "Stationsstraat", "Lindenlaan", "Hoofdstraat",
     "Parkweg",     "Molenstraat",    "Kerkplein",  "Havenkade",
     "Bergstrasse", "Rue du Moulin",  "Ringvej",    "High Street",
     "Via Roma",    "Calle Mayor",    "Storgata",   "Bahnhofstrasse"};

inline constexpr const char* mail_domains[]
  = {"mail.example", "post.example", "inbox.example"};

inline constexpr const char* business_suffixes[]
  = {"Logistics", "Bouw",       "Consulting",  "Zorg",
     "Delivery",  "Facilities", "Engineering", "Architects"};

/// Lower-case ASCII letters and digits of `text`, other runs become `sep`.
inline std::string slug(std::string_view text, char sep) {
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

} // namespace candor::data::sales
