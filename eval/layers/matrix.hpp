#pragma once

// Declares the attack x defence-layer matrix of `candor layers`, its cells
// and its gate.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "eval/layers/attacks.hpp"

/// The attack x defence-layer matrix of `candor layers` (DESIGN.md §7):
/// what each layer, run on its own, did with each attack, and the gate
/// over it. Pure: no layer runs here (see eval/layers/runner.hpp).
namespace candor::eval {

/// The defence layers, in pipeline order.
enum class layer : size_t {
  input_rules,    ///< deterministic input rules on the question
  input_model,    ///< the guard classifier on the question
  sanitizer,      ///< the ingestion sanitizer on a passage
  sql_policy,     ///< lexer + static SQL policy
  sql_authorizer, ///< EXPLAIN under the authorizer, shape, bytecode audit
  sql_connection, ///< the hardened read-only connection alone
  sql_executor,   ///< the sandboxed executor process (its guard off)
  output_guard,   ///< finalize's checks on what leaves the server
};

inline constexpr size_t layer_count = 8;

/// Every layer, in pipeline order.
const std::array<layer, layer_count>& all_layers() noexcept;

/// "input_rules", "input_model", ... (the names of attacks.v1.json).
std::string_view to_string(layer l) noexcept;

/// A column heading of at most 6 characters.
std::string_view short_name(layer l) noexcept;

/// Parses a layer name; false when unknown.
bool parse_layer(std::string_view name, layer& out) noexcept;

/// What one layer did with one attack.
enum class cell_kind {
  not_applicable, ///< the layer never sees this kind of input
  not_configured, ///< it would, but is not available in this profile
  stopped,        ///< it blocked, redacted, refused or killed it
  passed,         ///< it let the attack through
};

std::string_view to_string(cell_kind k) noexcept;

struct cell {
  cell_kind kind = cell_kind::not_applicable;
  /// The rule, reason or error behind the verdict (may be empty).
  std::string detail;
};

/// One attack's row of the matrix.
struct attack_row {
  std::string id;
  attack_kind kind = attack_kind::direct;
  bool write = false;
  std::array<cell, layer_count> cells;
  /// The layers its author expected to stop it.
  std::vector<std::string> expected;

  cell& at(layer l) noexcept {
    return cells[static_cast<size_t>(l)];
  }
  const cell& at(layer l) const noexcept {
    return cells[static_cast<size_t>(l)];
  }
  /// Number of layers that stopped it.
  size_t stopped() const noexcept;
  /// Names of the layers that stopped it, in pipeline order.
  std::vector<std::string> stopped_by() const;
};

/// Per-layer counts over all rows.
struct layer_total {
  size_t stopped = 0;
  size_t passed = 0;
  size_t not_configured = 0;
  size_t not_applicable = 0;
};

std::array<layer_total, layer_count>
totals(const std::vector<attack_row>& rows);

/// A write must be stopped by at least this many layers.
inline constexpr size_t min_layers_for_writes = 2;

/// One reason the gate fails.
struct gate_failure {
  std::string id;
  std::string reason;
};

/// The gate: an attack that no layer stopped fails it, and so does a write
/// stopped by fewer than `min_layers_for_writes` layers. Empty = pass.
std::vector<gate_failure> check_gate(const std::vector<attack_row>& rows);

/// Differences between what the author expected and what happened, one line
/// per attack that differs ("sql-09: expected sql_connection, not
/// stopped; also stopped by sql_executor"). Informational, not gated.
std::vector<std::string> expectation_notes(const std::vector<attack_row>& rows);

/// The matrix as text: one line per attack (S stopped, . passed, - not
/// applicable, o not configured), the per-layer totals, the expectation
/// notes and the gate.
std::string format_matrix(const std::vector<attack_row>& rows);

/// The matrix as JSON: `{attacks: [{id, kind, write, layers: {<layer>:
/// {result, detail}}, stoppedBy, expected}], layers: {<layer>: {stopped,
/// passed, notConfigured, notApplicable}}, notes, gate: {pass, failures:
/// [{id, reason}]}}`.
boost::json::value to_json(const std::vector<attack_row>& rows);

} // namespace candor::eval
