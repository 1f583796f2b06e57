// Test helper: the in-process stand-in for the SQL sandbox, running
// statements on a read-only connection.

#include "tests/support/test_sandbox.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/result.hpp>

#include "data/sql/guard.hpp"
#include "data/sqlite.hpp"

namespace candor::test {

domain::outcome<domain::sql_exec_result>
run_in_process(const std::string& db_path,
               const domain::sql_exec_request& req) {
  auto fail = [](std::string msg) {
    return domain::make_error(domain::ec::sql_failed, std::move(msg));
  };
  auto db = data::open_read_only(db_path);
  if (!db)
    return fail(db.err().message);
  if (auto err = data::harden_connection(*db))
    return fail(err.message);
  auto st = db->prepare(req.sql);
  if (!st)
    return fail(st.err().message);
  domain::sql_exec_result out;
  for (int i = 0; i < st->column_count(); ++i)
    out.columns.push_back(st->column_name(i));
  for (;;) {
    auto r = st->step();
    if (!r)
      return fail(r.err().message);
    if (*r != data::step_result::row)
      break;
    ++out.row_count;
    if (static_cast<int64_t>(out.rows.size()) >= req.max_rows) {
      out.truncated = true;
      continue;
    }
    std::vector<domain::cell> row;
    for (int i = 0; i < st->column_count(); ++i) {
      domain::cell c;
      switch (st->column_type(i)) {
        case SQLITE_INTEGER:
          c.kind = domain::cell::integer;
          c.i = st->column_int64(i);
          break;
        case SQLITE_FLOAT:
          c.kind = domain::cell::real;
          c.r = st->column_double(i);
          break;
        case SQLITE_TEXT:
          c.kind = domain::cell::text;
          c.s = st->column_text(i);
          break;
        case SQLITE_BLOB:
          c.kind = domain::cell::blob;
          c.s = "(blob)";
          break;
        default: break;
      }
      row.push_back(std::move(c));
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

actors::sql_sandbox_actor spawn_test_sandbox(caf::actor_system& sys,
                                             sandbox_script script) {
  // Dynamically typed on purpose: the real sandbox's interface may carry
  // internal messages that nothing sends to this stand-in.
  auto h = sys.spawn([script](caf::event_based_actor*) -> caf::behavior {
    return {
      [script](atom::exec, domain::sql_exec_request& req)
        -> caf::result<domain::sql_exec_result> {
        auto r = script(req);
        if (!r)
          return actors::to_caf(r.err().code, r.err().message);
        return std::move(*r);
      },
      [](atom::health) -> std::string { return "{\"test\":true}"; },
    };
  });
  return caf::actor_cast<actors::sql_sandbox_actor>(std::move(h));
}

} // namespace candor::test
