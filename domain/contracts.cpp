#include "domain/contracts.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "domain/records.hpp"

namespace candor::domain {

namespace {

error parse_failed(std::string what) {
  return make_error(ec::llm_parse_failed, std::move(what));
}

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

} // namespace

outcome<router_decision> parse_router_reply(std::string_view text) {
  boost::system::error_code jec;
  auto v = boost::json::parse(text, jec);
  if (jec)
    return parse_failed("reply is not valid JSON: " + jec.message());
  if (!v.is_object())
    return parse_failed("reply must be a JSON object");
  auto& o = v.as_object();
  std::string problems;
  router_decision out;
  for (auto& kv : o)
    if (kv.key() != "route" && kv.key() != "reason")
      problems += "unknown field '" + std::string{kv.key()} + "'; ";
  if (auto* r = o.if_contains("route"); r && r->is_string()) {
    out.route = parse_route(r->as_string());
    if (out.route == route_kind::none)
      problems += "'route' must be docs, data or out_of_scope; ";
  } else {
    problems += "'route' (string) is required; ";
  }
  if (auto* r = o.if_contains("reason"); r && r->is_string()) {
    out.reason = std::string{r->as_string()};
    auto n = code_points(out.reason);
    if (n < 3 || n > 200)
      problems += "'reason' must have 3 to 200 characters; ";
  } else {
    problems += "'reason' (string) is required; ";
  }
  if (!problems.empty()) {
    problems.resize(problems.size() - 2);
    return parse_failed(problems);
  }
  return out;
}

} // namespace candor::domain
