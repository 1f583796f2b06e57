// Transactions of data/sqlite.hpp: BEGIN, COMMIT and ROLLBACK, run as text
// or through statements prepared once (`tx_statements`).

#include "data/sqlite.hpp"

#include <utility>

namespace candor::data {

namespace {

const char* begin_sql(tx_mode mode) noexcept {
  return mode == tx_mode::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED";
}

/// Runs a prepared statement once and leaves it reset.
domain::error run_once(statement& stmt) {
  auto guard = stmt.reset_on_exit();
  return stmt.run();
}

} // namespace

domain::outcome<tx_statements> tx_statements::prepare(database& db,
                                                      tx_mode mode) {
  tx_statements result;
  std::pair<statement*, const char*> all[] = {
    {&result.begin_, begin_sql(mode)},
    {&result.commit_, "COMMIT"},
    {&result.rollback_, "ROLLBACK"},
  };
  for (auto& [stmt, sql] : all) {
    auto res = db.prepare(sql);
    if (!res)
      return res.err();
    *stmt = std::move(*res);
  }
  return result;
}

domain::outcome<transaction> transaction::begin(database& db, tx_mode mode) {
  auto err = db.exec(begin_sql(mode));
  if (err)
    return err;
  return transaction{db};
}

domain::outcome<transaction> transaction::begin(database& db,
                                                tx_statements& stmts) {
  if (!stmts.is_valid())
    return storage_error("transaction statements are not prepared");
  if (auto err = run_once(stmts.begin_))
    return err;
  return transaction{db, &stmts};
}

transaction::transaction(transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmts_(std::exchange(other.stmts_, nullptr)) {
  // nop
}

transaction& transaction::operator=(transaction&& other) noexcept {
  if (this != &other) {
    rollback();
    db_ = std::exchange(other.db_, nullptr);
    stmts_ = std::exchange(other.stmts_, nullptr);
  }
  return *this;
}

transaction::~transaction() {
  rollback();
}

domain::error transaction::commit() {
  if (db_ == nullptr)
    return storage_error("no transaction is active");
  auto err
    = stmts_ != nullptr ? run_once(stmts_->commit_) : db_->exec("COMMIT");
  if (err)
    return err;
  db_ = nullptr;
  return {};
}

void transaction::rollback() noexcept {
  if (db_ == nullptr)
    return;
  // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) already rolled back.
  if (db_->in_transaction()) {
    if (stmts_ != nullptr) {
      // Raw calls: nothing here may allocate (an error value would).
      auto* stmt = stmts_->rollback_.handle();
      sqlite3_step(stmt);
      sqlite3_reset(stmt);
    } else
      sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  db_ = nullptr;
}

} // namespace candor::data
