// The sales generator's days and orders: how many orders a day brings per
// channel, and each order's buyer, basket, discounts, payment, status and
// refunds (data/sales/generator.hpp).

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "data/sales/generator.hpp"

namespace candor::data::sales {

int generator::black_friday(int year) {
  auto nov1 = day_number(year, 11, 1);
  auto offset = (4 + 7 - static_cast<int>(weekday_of(nov1))) % 7;
  return nov1 + offset + 21 + 1;
}

domain::error generator::write_day(int day) {
  auto c = civil_of(day);
  auto wd = weekday_of(day);
  auto bf = black_friday(c.y);
  bool bf_weekend = day >= bf && day <= bf + 3;
  bool closed
    = (c.m == 12 && (c.d == 25 || c.d == 26)) || (c.m == 1 && c.d == 1);
  for (size_t ch = 0; ch < channel_count; ++ch) {
    auto lambda
      = base_per_day[ch] * channel_month[ch][c.m - 1] * channel_weekday[ch][wd];
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
      if (auto err
          = write_order(day, static_cast<channel_id>(ch), wd, bf_weekend))
        return err;
  }
  return {};
}

bool generator::available(size_t p, int day, channel_id ch, size_t region,
                          bool utrecht) const {
  auto& def = products[p];
  if (day < launched_[p] || day > until_[p])
    return false;
  switch (def.where) {
    case everywhere: break;
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

size_t generator::pick_product(category_id category, int day, channel_id ch,
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

int64_t generator::quantity(const product_def& p, segment_id seg, channel_id ch,
                            bool dealer) {
  std::string_view line{p.line};
  if (dealer) {
    switch (p.category) {
      case bikes: return rng_.between(1, 5);
      case components: return rng_.between(4, 20);
      case apparel: return rng_.between(3, 12);
      case accessories: return rng_.between(4, 20);
      default: return rng_.between(4, 16);
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
  (void)ch;
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

int64_t generator::unit_price(const product_def& p, channel_id ch) {
  switch (ch) {
    case marketplace: {
      // Marketplace prices carry part of the marketplace fee.
      auto raised = p.price_cents * 105 / 100;
      return raised >= 1000 ? (raised + 50) / 100 * 100 - 1 : raised;
    }
    case partner:
      // Wholesale: the dealer margin.
      return p.price_cents * (p.category == bikes ? 60 : 55) / 100;
    default: return p.price_cents;
  }
}

int generator::time_of_day(channel_id ch, unsigned wd, bool utrecht) {
  if (ch == retail) {
    auto open = wd == 0 ? 12 : 10;
    auto close = wd == 0 ? 17 : wd == 4 ? 20 : 18;
    (void)utrecht;
    return static_cast<int>(rng_.between(open * 3600, close * 3600 - 60));
  }
  if (ch == partner)
    return static_cast<int>(rng_.between(8 * 3600, 17 * 3600));
  static constexpr std::array<double, 24> hours{
    1,   0.5, 0.3, 0.2, 0.2, 0.4, 1, 2, 3,   4, 4.5, 5,
    5.5, 5,   4.5, 4.5, 5,   5.5, 6, 7, 7.5, 7, 5,   2.5};
  auto h = static_cast<int>(rng_.pick(hours));
  return h * 3600 + static_cast<int>(rng_.below(3600));
}

domain::error generator::write_order(int day, channel_id ch, unsigned wd,
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
    default: break;
  }
  if (buyer == nullptr)
    return {};
  auto region
    = ch == retail ? (utrecht ? region_nl : region_be) : buyer->region;
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
    auto& w = ch == marketplace            ? market_lines
              : ch == retail               ? retail_lines
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
    if (bf_weekend && (ch == web || ch == marketplace) && p.category != service
        && p.category != nutrition)
      percent = p.category == bikes ? 10 : 20;
    else if (c.m == 7 && p.category == apparel && (ch == web || ch == retail))
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
    has_plan |= std::string_view{products[l.product].line} == "workshop_plans";
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
      w[klarna] = klarna_country(region) && total >= 3500 && total <= 150000
                      && !has_plan
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
      std::snprintf(number, sizeof number, "%s-%08lld", utrecht ? "UTR" : "GNT",
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
  double cancel_p = ch == web           ? 0.035
                    : ch == marketplace ? 0.015
                    : ch == partner     ? 0.015
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
          auto amount
            = k == l.quantity ? l.total() : l.total() * k / l.quantity;
          const char* reason = "return";
          std::array<double, 4> w{70, 12, 10, 8};
          if (ch == retail)
            w[2] = w[3] = 0;
          switch (rng_.pick(w)) {
            case 1: reason = "damaged"; break;
            case 2: reason = "wrong_item"; break;
            case 3: reason = "late_delivery"; break;
            default: break;
          }
          auto when = paid_day + static_cast<int>(rng_.between(3, 35));
          if (amount > 0)
            refund_rows.push_back({i, when, k, amount, reason});
        } else if (p.category == bikes && ch == web && rng_.chance(0.015)) {
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

  if (auto err
      = insert(ins_order_, order_id, std::string_view{number}, iso_date(day),
               buyer->id, channels[ch].code, nullable(store),
               regions[region].code, status, payment_names[method], total,
               created, iso_time(day, last_change)))
    return err;
  std::vector<int64_t> item_ids;
  for (size_t i = 0; i < basket.size(); ++i) {
    auto& l = basket[i];
    auto item_id = ++item_id_;
    item_ids.push_back(item_id);
    if (auto err
        = insert(ins_item_, item_id, order_id, static_cast<int64_t>(i + 1),
                 static_cast<int64_t>(l.product + 1), l.quantity, l.unit_price,
                 l.discount, l.total()))
      return err;
  }
  for (auto& [pstatus, amount, at] : payment_rows)
    if (auto err
        = insert(ins_payment_, ++payment_id_, order_id, payment_names[method],
                 pstatus, amount, iso_time(day, at)))
      return err;
  std::sort(refund_rows.begin(), refund_rows.end(), [](auto& a, auto& b) {
    return a.day != b.day ? a.day < b.day : a.line < b.line;
  });
  for (auto& r : refund_rows)
    if (auto err = insert(ins_refund_, ++refund_id_, order_id, item_ids[r.line],
                          iso_date(r.day), r.quantity, r.amount, r.reason))
      return err;
  return {};
}

} // namespace candor::data::sales
