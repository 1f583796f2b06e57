// Builds the ledger's multi-row INSERT statements and says why they use
// INSERT OR FAIL.

#include "data/ledger/sql.hpp"

namespace candor::data::ledger_sql {

namespace {

/// `head` followed by `rows` groups of `columns` anonymous parameters, which
/// SQLite numbers from 1 in order.
std::string multi_row_insert(const char* head, size_t columns, size_t rows) {
  std::string group = "(";
  for (size_t c = 0; c < columns; ++c)
    group += c == 0 ? "?" : ", ?";
  group += ")";
  std::string sql = head;
  for (size_t i = 0; i < rows; ++i) {
    sql += i == 0 ? "" : ", ";
    sql += group;
  }
  return sql;
}

} // namespace

// Requests, model calls and SQL audit rows are inserted with INSERT OR
// FAIL: a multi-row INSERT that may abort gets a statement journal (a
// savepoint opened and released on every execution, about 8 % of the
// writer's work) so that an abort can undo the rows it already inserted.
// No error of those statements is handled: any of them fails the batch,
// whose transaction is rolled back whole (ledger_store::write), so the
// statement-level undo would be redundant; OR FAIL keeps the rows before
// the failing one until that rollback.
//
// Trace steps keep plain INSERT: their primary-key clash (a reused request
// id) is handled, by redoing the insert after the id's existing rows
// (ledger_store's write_trace), and that retry needs the failed statement
// to have left nothing behind.

std::string insert_requests_sql(size_t rows) {
  return multi_row_insert(
    "INSERT OR FAIL INTO requests (request_id, ts_us, method, path, route, "
    "status, blocked_by, http_status, error, latency_us, question, "
    "llm_calls, tokens, cost_usd, warnings, key_name) VALUES ",
    16, rows);
}

std::string insert_llm_calls_sql(size_t rows) {
  return multi_row_insert(
    "INSERT OR FAIL INTO llm_calls (request_id, ts_us, prompt, "
    "prompt_version, provider, model, attempts, retries, fallback_used, "
    "local_fallback, outcome, tokens_in, tokens_out, tokens_estimated, "
    "cost_usd, latency_us) VALUES ",
    16, rows);
}

std::string insert_turns_sql(size_t rows) {
  return multi_row_insert(
    "INSERT INTO conversation_turns (conversation_id, request_id, key_name, "
    "created_us, question, standalone, route, status, answer, sql) VALUES ",
    10, rows);
}

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
