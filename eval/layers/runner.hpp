#pragma once

// Declares the layer runner of `candor layers` and its options.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/sql/executor.hpp"
#include "domain/error.hpp"
#include "eval/layers/attacks.hpp"
#include "eval/layers/matrix.hpp"

/// Runs attacks through the defence layers of candor, each layer on its own
/// (`candor layers`): the same code the server runs, called directly.
namespace candor::eval {

/// What the layers need.
struct layer_runner_options {
  /// The real sales database (made by `candor seed` or on first start).
  std::string sales_db;
  /// The canary and the prompt texts the output guard protects.
  std::string canary;
  std::vector<std::string> prompt_texts;
  /// Directory of the scripted model fixtures. The input model layer uses
  /// the scripted guard replies (`guard` prompt) found there; without any,
  /// or on a live provider, it is "not configured".
  std::string fixtures_dir;
  bool scripted_provider = true;
  /// The hard heap limit of the connection layer (as in the executor).
  int64_t heap_limit_mb = 64;
  /// The connection layer has no deadline of its own: a statement still
  /// running after this long counts as passed (and is interrupted).
  int64_t connection_budget_ms = 1000;
  /// How the executor process is started (`unguarded` is forced on, so the
  /// process and its read-only connection are judged without the
  /// authorizer), its deadline and row cap.
  data::executor_settings executor;
  int64_t deadline_ms = 5000;
  int32_t max_rows = 200;
  /// When set: the SQL columns are the PostgreSQL warehouse's layers at
  /// this DSN (the reading role). sql_policy is the pg_query policy,
  /// sql_authorizer the role's privileges (the statement in a READ WRITE
  /// transaction, always rolled back), sql_executor the sandbox's READ
  /// ONLY session with its deadline; sql_connection has no counterpart
  /// there (not applicable).
  std::string postgres_dsn;
};

/// Reports progress: attacks done so far, the total, the attack just done.
using layer_progress
  = std::function<void(size_t done, size_t total, const std::string& id)>;

class layer_runner {
public:
  /// Opens the validation connection, loads the fixtures and builds the
  /// output guard. Errors: a missing or unreadable database, a bad catalog
  /// or fixture file.
  static domain::outcome<layer_runner> open(layer_runner_options opts);

  layer_runner(layer_runner&&) noexcept;
  layer_runner& operator=(layer_runner&&) noexcept;
  ~layer_runner();

  /// Runs one attack through every layer that applies to it. Errors: a
  /// layer that could not run at all (e.g. no executor process could be
  /// started), naming the attack and the layer.
  domain::outcome<attack_row> run(const attack& a);

  /// Runs every attack in order.
  domain::outcome<std::vector<attack_row>>
  run_all(const std::vector<attack>& attacks,
          const layer_progress& progress = {});

private:
  struct impl;
  explicit layer_runner(std::unique_ptr<impl> p) noexcept;
  std::unique_ptr<impl> impl_;
};

/// The connection layer on its own: `statements` (one or more, run one after
/// the other as a plain client would) on a fresh read-only connection with
/// `data::harden_connection` and a hard heap limit of `heap_limit_mb`, no
/// authorizer and no process sandbox. Stopped when SQLite refuses or aborts
/// a statement; passed when all of them ran, or when they still ran after
/// `budget_ms` (they are interrupted then). Errors: the database cannot be
/// opened or hardened. Public for tests.
domain::outcome<cell> run_connection_layer(const std::string& sales_db,
                                           std::string_view statements,
                                           int64_t heap_limit_mb,
                                           int64_t budget_ms);

} // namespace candor::eval
