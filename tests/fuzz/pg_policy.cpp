// Fuzz target: the PostgreSQL statement policy (PostgreSQL's own parser
// and the walk over its tree). Any bytes must get a verdict; an allowed
// statement's bounded SQL must itself be allowed, with the same text once
// its LIMIT is in place (the rewrite is idempotent).

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "data/sales/catalog.hpp"
#include "data/sql/pg_policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor;
  static const auto allow = [] {
    data::sql_allowlist a;
    auto cat = data::catalog::load_default();
    if (!cat)
      std::abort();
    a.tables = cat->allowed_columns();
    a.functions = data::postgres_sql_functions();
    return a;
  }();
  static const data::withheld_columns withheld = {
    {"customers", {"name", "email"}}};
  std::string_view sql{reinterpret_cast<const char*>(data), size};
  auto r = data::check_postgres_sql(sql, allow, withheld);
  if (r.allowed()) {
    auto again = data::check_postgres_sql(r.sql, allow, withheld);
    if (!again.allowed())
      std::abort();
    auto third = data::check_postgres_sql(again.sql, allow, withheld);
    if (third.sql != again.sql)
      std::abort();
  }
  return 0;
}
