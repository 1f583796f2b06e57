#include "data/ledger_sql.hpp"

namespace candor::data::ledger_sql {

std::string insert_trace_steps_sql(size_t rows) {
  std::string sql = "INSERT INTO trace_steps (request_id, ord, ts_us, seq, "
                    "node, outcome, micros) VALUES ";
  for (size_t i = 0; i < rows; ++i) {
    auto p = std::to_string(4 + 4 * i);
    sql += (i == 0 ? "" : ", ");
    sql += "(?1, ?3 + ?" + p + ", ?2, ?" + p + ", ?" + std::to_string(5 + 4 * i)
           + ", ?" + std::to_string(6 + 4 * i) + ", ?"
           + std::to_string(7 + 4 * i) + ")";
  }
  return sql;
}

} // namespace candor::data::ledger_sql
