// data::ledger_store: batches, where the ledger lives, and the store's calls
// handed to its backend (SQLite: data/ledger/sqlite_store.cpp, PostgreSQL:
// data/ledger/pg_store.cpp). The reads' JSON is in data/ledger/queries.cpp.

#include "data/ledger/store.hpp"

#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "data/ledger/backend.hpp"
#include "domain/config.hpp"

namespace candor::data {

// -- ledger_batch -------------------------------------------------------------

bool ledger_batch::empty() const noexcept {
  return requests.empty() && llm_calls.empty() && traces.empty()
         && sql_audits.empty();
}

size_t ledger_batch::size() const noexcept {
  return requests.size() + llm_calls.size() + traces.size() + sql_audits.size();
}

void ledger_batch::clear() noexcept {
  requests.clear();
  llm_calls.clear();
  traces.clear();
  sql_audits.clear();
}

std::string warnings_to_json(const std::vector<std::string>& warnings) {
  boost::json::array arr;
  arr.reserve(warnings.size());
  for (auto& w : warnings)
    arr.emplace_back(w);
  return boost::json::serialize(arr);
}

// -- ledger_location ----------------------------------------------------------

ledger_location ledger_location::sqlite(std::string path) {
  ledger_location out;
  out.path = std::move(path);
  return out;
}

ledger_location ledger_location::postgres(std::string dsn) {
  ledger_location out;
  out.backend = "postgres";
  out.dsn = std::move(dsn);
  return out;
}

ledger_location ledger_location::from(const domain::config& cfg) {
  if (cfg.ledger.backend == "postgres")
    return postgres(cfg.ledger.postgres_dsn);
  return sqlite(cfg.data_dir + "/ledger.db");
}

std::string ledger_location::describe() const {
  if (backend == "postgres")
    return "postgres (schema candor_ledger)";
  return "sqlite " + path;
}

// -- ledger_store -------------------------------------------------------------

ledger_store::ledger_store(std::unique_ptr<ledger_backend> ptr) noexcept
    : impl_(std::move(ptr)) {
  // nop
}

ledger_store::ledger_store(ledger_store&&) noexcept = default;

ledger_store& ledger_store::operator=(ledger_store&&) noexcept = default;

ledger_store::~ledger_store() = default;

domain::outcome<ledger_store>
ledger_store::open_postgres(const std::string& dsn, bool writer) {
  auto backend = open_pg_ledger(dsn, writer);
  if (!backend)
    return backend.err();
  return ledger_store{std::move(*backend)};
}

domain::outcome<ledger_store> ledger_store::open(const ledger_location& where,
                                                 bool writer) {
  if (where.backend == "postgres")
    return open_postgres(where.dsn, writer);
  return open(where.path, writer);
}

const char* ledger_store::backend_name() const noexcept {
  return impl_->name();
}

domain::error ledger_store::write(const ledger_batch& batch) {
  return impl_->write(batch);
}

bool ledger_store::last_write_storage_fault() const noexcept {
  return impl_->last_write_storage_fault();
}

void ledger_store::bound_conversations(int64_t max_turns,
                                       int64_t retention_us) noexcept {
  impl_->bound_conversations(max_turns, retention_us);
}

domain::outcome<std::vector<stored_turn>>
ledger_store::conversation(const std::string& id, int64_t from_us) {
  std::vector<stored_turn> out;
  auto err = impl_->read(
    ledger_read::conversation_turns, {std::string_view{id}, from_us},
    [&out](const ledger_row& r) {
      stored_turn x;
      x.key_name = r.text(1);
      auto& t = x.t;
      t.request_id = r.text(0);
      t.at_us = r.int64(2);
      t.question = r.text(3);
      t.standalone = r.text(4);
      t.route = r.text(5);
      t.status = r.text(6);
      t.answer = r.text(7);
      t.sql = r.text(8);
      out.push_back(std::move(x));
    });
  if (err)
    return err;
  return out;
}

} // namespace candor::data
