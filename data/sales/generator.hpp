#pragma once

// The seeded generator behind generate_sales (data/sales/gen.hpp): its
// declaration, shared by data/sales/gen.cpp (set-up, reference rows,
// customers) and data/sales/orders.cpp (days and orders). Internal to
// those files.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "data/sales/gen.hpp"
#include "data/sales/world.hpp"
#include "data/sqlite.hpp"

namespace candor::data::sales {

// -- binding helpers ----------------------------------------------------------

/// Text or NULL.
inline std::optional<std::string_view> nullable(const char* text) {
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
  generator(database& db, uint64_t seed, const sales_progress& progress);

  domain::error run();

private:
  void report(std::string_view stage, double fraction);

  domain::error prepare_all();

  domain::error write_reference();

  // -- customers --------------------------------------------------------------

  int signup_day();

  size_t pick_region(std::span<const size_t> allowed = {});

  domain::error write_customers();

  /// A customer of `pool` who had signed up by `day`: often a recent
  /// sign-up, otherwise anyone, with a lean towards long-standing ones.
  const customer* pick_customer(size_t pool, int day);

  // -- orders -----------------------------------------------------------------

  /// Black Friday: the day after the fourth Thursday of November.
  static int black_friday(int year);

  domain::error write_day(int day);

  bool available(size_t p, int day, channel_id ch, size_t region,
                 bool utrecht) const;

  /// A product of `category` for this order, or product_count if none.
  size_t pick_product(category_id category, int day, channel_id ch,
                      size_t region, bool utrecht, unsigned month);

  int64_t quantity(const product_def& p, segment_id seg, channel_id ch,
                   bool dealer);

  static int64_t unit_price(const product_def& p, channel_id ch);

  /// Seconds after midnight for an order placed in `ch`.
  int time_of_day(channel_id ch, unsigned wd, bool utrecht);

  domain::error write_order(int day, channel_id ch, unsigned wd,
                            bool bf_weekend);

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

} // namespace candor::data::sales
