#pragma once

#include <string>

#include <boost/json/value.hpp>

/// JSON text for everything candor writes (responses, /stats, logs,
/// reports). Like boost::json::serialize, except for numbers with a
/// fraction: Boost.JSON 1.81 writes every double in exponent form
/// ("44.799" as `4.4799E1`, 0.0 as `0E0`), which is valid JSON but hard to
/// read in a log line or a /stats body. Here a double is written in its
/// shortest round-trip decimal form (`44.799`, `5.385e-05`), a whole one
/// with `.0` so that it still reads back as a double (`0.0`, `100.0`), and
/// a NaN or infinity, which JSON cannot express, as `null`.
namespace candor::domain {

/// Appends the JSON text of `v` to `out`.
void append_json(std::string& out, const boost::json::value& v);
void append_json(std::string& out, const boost::json::object& o);
void append_json(std::string& out, const boost::json::array& a);

/// The JSON text of `v` (overloads so that an object or array is not
/// copied into a value first).
std::string json_text(const boost::json::value& v);
std::string json_text(const boost::json::object& o);
std::string json_text(const boost::json::array& a);

} // namespace candor::domain
