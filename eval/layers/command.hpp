#pragma once

// Declares `candor layers`' options and the function that runs it.

#include <cstdint>
#include <iosfwd>
#include <string>

#include "domain/config.hpp"

/// `candor layers` once its options are parsed (app/main.cpp keeps only
/// the option parsing): loads the attack set, finds or generates the sales
/// database, runs the layers and prints the matrix.
namespace candor::eval {

struct layers_command_options {
  domain::config cfg;
  /// The attack set (eval/attacks.v1.json by default).
  std::string attacks_path;
  /// The sales database; empty: `<data-dir>/sales.db`, generated when
  /// absent and checked against the catalog.
  std::string db;
  /// See `layer_runner_options::connection_budget_ms`.
  int64_t budget_ms = 1000;
  bool json = false;
};

/// Runs the command: the matrix (text or JSON) on `out`, progress and
/// errors on `err`. Returns the exit code: 0 when the gate passes, 1 when
/// it fails or a layer cannot run, 2 for a bad attack file or a missing
/// `db`.
int run_layers_command(const layers_command_options& opts, std::ostream& out,
                       std::ostream& err);

} // namespace candor::eval
