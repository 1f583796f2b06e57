#include "data/ledger_sql.hpp"

namespace candor::data::ledger_sql {

std::string insert_trace_steps_sql(size_t rows) {
  std::string sql = "INSERT INTO trace_steps (request_id, ts_us, seq, node, "
                    "outcome, micros) VALUES ";
  for (size_t i = 0; i < rows; ++i) {
    auto p = 3 + 4 * i;
    sql += (i == 0 ? "" : ", ");
    sql += "(?1, ?2, ?" + std::to_string(p) + ", ?" + std::to_string(p + 1)
           + ", ?" + std::to_string(p + 2) + ", ?" + std::to_string(p + 3)
           + ")";
  }
  return sql;
}

} // namespace candor::data::ledger_sql
