#pragma once

// Internal to domain/config.cpp: one configuration key (`field`) and the
// builders that make a key of each type with its range or check.

#include <cstdint>
#include <functional>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/json.hpp>

#include "domain/config.hpp"

namespace candor::domain::config_detail {

namespace json = boost::json;

/// One configuration key: its dotted name, an optional explicit environment
/// name, whether it may only come from the environment, and a setter that
/// parses a JSON value (file) or a string (environment, flag).
struct field {
  std::string key;
  std::string env; ///< empty: derived with env_name()
  bool secret = false;
  std::function<std::string(const json::value&, config&)> from_json;
  std::function<std::string(const std::string&, config&)> from_text;
};

inline std::string type_error(const char* expected) {
  return std::string{"expected "} + expected;
}

/// Builds a field for an integer member reached through `get`.
template <class Get>
field make_int(std::string key, Get get, int64_t lo, int64_t hi) {
  auto range
    = "must be between " + std::to_string(lo) + " and " + std::to_string(hi);
  auto check = [lo, hi, range](int64_t v) -> std::string {
    if (v < lo || v > hi)
      return range;
    return {};
  };
  field f;
  f.key = std::move(key);
  f.from_json
    = [get, check, range](const json::value& v, config& c) -> std::string {
    if (!v.is_int64() && !v.is_uint64())
      return type_error("an integer");
    // Beyond int64_t every range here is exceeded.
    if (v.is_uint64()
        && v.as_uint64() > uint64_t{std::numeric_limits<int64_t>::max()})
      return range;
    auto x = v.is_int64() ? v.as_int64() : static_cast<int64_t>(v.as_uint64());
    if (auto e = check(x); !e.empty())
      return e;
    get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(x);
    return {};
  };
  f.from_text
    = [get, check, range](const std::string& s, config& c) -> std::string {
    int64_t x = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec == std::errc::result_out_of_range && p == s.data() + s.size())
      return range; // a well-formed integer beyond int64_t
    if (ec != std::errc{} || p != s.data() + s.size())
      return type_error("an integer");
    if (auto e = check(x); !e.empty())
      return e;
    get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(x);
    return {};
  };
  return f;
}

/// A number as people write it: 0, 1000, 0.25 (not 1000.000000).
inline std::string number_text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

template <class Get>
field make_double(std::string key, Get get, double lo, double hi) {
  auto check = [lo, hi](double v) -> std::string {
    if (!(v >= lo && v <= hi))
      return "must be between " + number_text(lo) + " and " + number_text(hi);
    return {};
  };
  field f;
  f.key = std::move(key);
  f.from_json = [get, check](const json::value& v, config& c) -> std::string {
    if (!v.is_number())
      return type_error("a number");
    auto x = v.to_number<double>();
    if (auto e = check(x); !e.empty())
      return e;
    get(c) = x;
    return {};
  };
  f.from_text = [get, check](const std::string& s, config& c) -> std::string {
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(s.c_str(), &end);
    if (s.empty() || errno != 0 || end != s.c_str() + s.size())
      return type_error("a number");
    if (auto e = check(x); !e.empty())
      return e;
    get(c) = x;
    return {};
  };
  return f;
}

template <class Get>
field make_bool(std::string key, Get get) {
  field f;
  f.key = std::move(key);
  f.from_json = [get](const json::value& v, config& c) -> std::string {
    if (!v.is_bool())
      return type_error("true or false");
    get(c) = v.as_bool();
    return {};
  };
  f.from_text = [get](const std::string& s, config& c) -> std::string {
    if (s == "true" || s == "1")
      get(c) = true;
    else if (s == "false" || s == "0")
      get(c) = false;
    else
      return type_error("true or false");
    return {};
  };
  return f;
}

/// A check of a string value: empty when it is fine, else what is wrong.
using string_check = std::function<std::string(const std::string&)>;

template <class Get>
field make_string(std::string key, Get get, string_check check) {
  field f;
  f.key = std::move(key);
  f.from_json = [get, check](const json::value& v, config& c) -> std::string {
    if (!v.is_string())
      return type_error("a string");
    std::string s{v.as_string()};
    if (auto e = check(s); !e.empty())
      return e;
    get(c) = std::move(s);
    return {};
  };
  f.from_text = [get, check](const std::string& s, config& c) -> std::string {
    if (auto e = check(s); !e.empty())
      return e;
    get(c) = s;
    return {};
  };
  return f;
}

template <class Get>
field make_string(std::string key, Get get,
                  std::vector<std::string> allowed = {}) {
  return make_string(std::move(key), get,
                     [allowed](const std::string& s) -> std::string {
                       if (allowed.empty())
                         return {};
                       for (auto& a : allowed)
                         if (a == s)
                           return {};
                       std::string msg = "must be one of";
                       for (auto& a : allowed)
                         msg += " '" + a + "'";
                       return msg;
                     });
}

inline std::string non_empty(const std::string& s) {
  return s.empty() ? "must not be empty" : std::string{};
}

/// What the server can listen on: an IPv4 or IPv6 literal (it does not
/// resolve names), an IPv6 one optionally with a zone ("fe80::1%eth0").
inline std::string ip_address(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1)
    return {};
  auto v6 = s.substr(0, s.find('%'));
  if (inet_pton(AF_INET6, v6.c_str(), buf) == 1)
    return {};
  return "must be an IPv4 or IPv6 address such as 127.0.0.1, 0.0.0.0 or "
         "::1 (host names are not resolved)";
}

} // namespace candor::domain::config_detail
