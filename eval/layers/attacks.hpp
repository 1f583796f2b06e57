#pragma once

// Declares the attack set of `candor layers`: hostile inputs and the
// defence layers expected to stop them.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/error.hpp"

/// The attack set of `candor layers` (eval/attacks.v1.json): hostile
/// questions, document passages, SQL and model replies, each
/// with the defence layers its author expects to stop it.
namespace candor::eval {

/// Where an attack enters.
enum class attack_kind {
  direct,   ///< prompt injection in the question
  indirect, ///< instructions embedded in a document passage
  sql,      ///< hostile SQL as a model might write it
  output,   ///< a model reply that leaks
};

std::string_view to_string(attack_kind k) noexcept;

/// A model reply as it would reach the output guard: which part of the
/// response carries the text, and what the sanitizer had redacted in that
/// request.
struct model_output {
  /// "answer", "routeReason", "followUp", "sql" (the query shown) or
  /// "sqlRow" (a result cell).
  std::string field;
  std::string text;
  std::vector<std::string> redacted_spans;
};

/// One attack.
struct attack {
  std::string id;
  attack_kind kind = attack_kind::direct;
  std::string description;
  /// The payload proper: the question (direct), the passage (indirect) or
  /// the statement (sql); empty for output attacks.
  std::string text;
  /// The reply of an output attack, or for a direct or indirect attack what
  /// a model that obeyed it would reply.
  std::optional<model_output> output;
  /// For a direct attack: the SQL a model that obeyed it would write.
  std::optional<std::string> model_sql;
  /// It changes data or files when it gets through.
  bool write = false;
  /// Layer names (see `layer_names()` in eval/layers/matrix.hpp) the author
  /// expects to stop it, written before any run.
  std::vector<std::string> expected;
};

struct attack_set {
  std::string description;
  std::vector<attack> attacks;
};

/// Bounds of an attack file.
inline constexpr size_t max_attacks = 1000;
inline constexpr size_t max_attack_text = 100000;
inline constexpr size_t max_attack_file = 8 * 1024 * 1024;

/// Parses and validates an attack file: `{"version": 1, "description",
/// "attacks": [{id, kind, description, write, payload, expectedStoppedBy,
/// modelOutput?, modelSql?}]}` where `payload` is `{"question"}`,
/// `{"passage"}`, `{"sql"}` or, for output attacks, `{"field", "text",
/// "redactedSpans"?}` (as is `modelOutput`). Errors (`ec::config_invalid`)
/// name the attack and the field: unknown or missing fields, a duplicate
/// id, an unknown kind, field or layer name, empty or oversized text.
domain::outcome<attack_set> parse_attacks(std::string_view json);

/// Reads and parses `path` (at most `max_attack_file` bytes).
domain::outcome<attack_set> load_attacks(const std::string& path);

/// eval/attacks.v1.json of the source tree.
std::string default_attacks_path();

} // namespace candor::eval
