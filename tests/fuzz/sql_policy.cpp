// Fuzz target: the SQL lexer and the static policy (layer 1). Any bytes must
// get a verdict; an allowed statement's rewritten SQL must itself be allowed
// and keep its LIMIT (the rewrite is idempotent).

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "domain/sql/lexer.hpp"
#include "domain/sql/policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace candor::domain::sql;
  std::string_view sql{reinterpret_cast<const char*>(data), size};
  (void)lex(sql);
  auto r = check_sql(sql);
  if (r.verdict == verdict_kind::allow) {
    auto again = check_sql(r.sql);
    if (again.verdict != verdict_kind::allow || again.sql != r.sql)
      std::abort();
  }
  return 0;
}
