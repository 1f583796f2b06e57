#pragma once

// Declares the deterministic input rules, their severities and scopes, and
// the compiled rule set that judges questions and passages.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/error.hpp"

namespace re2 {
class RE2;
} // namespace re2

namespace candor::domain {

struct compiled_set; // an RE2::Set, defined in input_rules.cpp

/// How much a single rule match counts.
enum class severity : uint8_t { medium, high };

/// Where a rule applies: user questions, retrieved passages, or both.
enum class rule_scope : uint8_t { input, document, both };

std::string_view to_string(severity x) noexcept;
std::string_view to_string(rule_scope x) noexcept;

/// One named deterministic input rule (data from conf/input_rules.json).
struct input_rule {
  std::string name;
  std::string description;
  severity sev = severity::high;
  rule_scope scope = rule_scope::both;
  /// True: the pattern runs on the raw text (tags, HTML, base64, line
  /// starts). False: on `normalize()`d text (lower-case a-z0-9 words
  /// separated by single spaces).
  bool on_raw = false;
  /// The RE2 pattern as written in the rule file.
  std::string pattern;
};

/// The result of evaluating a text against a rule set.
struct rule_verdict {
  /// A single high match, or two or more distinct medium matches.
  bool blocked = false;
  /// Names of the rules that matched, in rule order.
  std::vector<std::string> matched;
  int high = 0;
  int medium = 0;
  /// What `deobfuscate()` undid (`disguise` flags) when the rules also read
  /// its text; 0 when the text showed no disguise.
  unsigned disguise = 0;
  /// The input scorer's score, when it ran (`evaluate_question`).
  double score = 0;
  /// The features that raised the score most (see `score_verdict::top`).
  std::vector<std::pair<std::string, double>> score_top;
};

class input_scorer;

/// An immutable, validated set of input rules with compiled patterns.
/// Cheap to copy or move (patterns are shared); safe to use from many
/// threads at once.
class rule_set {
public:
  /// Texts longer than this are evaluated on their first `max_bytes`
  /// bytes only (cut back to a UTF-8 boundary). Questions are capped at
  /// 500 characters and passages are chunk-sized, so this bounds the cost
  /// of hostile input without hiding anything the server accepts.
  static constexpr size_t max_bytes = 20000;

  /// Parses and validates a rule file: `{"version": 1, "rules": [{name,
  /// severity, scope, on, pattern, description}, ...]}`. Errors
  /// (`ec::config_invalid`) name the rule and the field: a bad pattern, a
  /// pattern that matches empty text, an unknown severity/scope/on, a
  /// duplicate or malformed name, a missing or unknown field.
  static outcome<rule_set> parse(std::string_view json);

  /// The rules embedded from conf/input_rules.json, parsed once. Throws
  /// std::logic_error naming the problem if that file is invalid (a build
  /// defect; a test parses it).
  static const rule_set& builtin();

  /// Evaluates `raw_text` against the rules whose scope covers `scope`
  /// (`input` runs input|both rules, `document` runs document|both rules,
  /// `both` runs all). Normalizes once; the rules reading normalized text
  /// also read `deobfuscate()`'s text when there is one.
  rule_verdict evaluate(std::string_view raw_text, rule_scope scope) const;

  /// The input guard's verdict on a question: the rules of scope input,
  /// then `scorer` on the same canonical texts. A score above the
  /// scorer's threshold adds "input_scorer" to `matched` and counts as a
  /// high match; `score` and `score_top` are always set.
  rule_verdict evaluate_question(std::string_view question,
                                 const input_scorer& scorer) const;

  size_t size() const noexcept {
    return rules_.size();
  }

  const std::vector<input_rule>& rules() const noexcept {
    return rules_;
  }

private:
  /// One pass over a text for all the rules that read it: an RE2::Set of
  /// their patterns and, per set entry, the rule's index.
  struct matcher {
    std::shared_ptr<const compiled_set> set;
    std::vector<size_t> rule_of;
    bool broken = false; ///< rules of this form exist but RE2 refused the set
  };

  /// Builds the raw and normalized matchers (marked broken when RE2 cannot
  /// compile a set; evaluate() then matches rule by rule).
  void build_matchers();

  /// Appends to `hits` the indices of the rules whose pattern occurs in
  /// `text`, using the set when it has one; false when the set failed at
  /// match time (the caller then falls back to one match per rule).
  bool match_set(const matcher& m, std::string_view text,
                 std::vector<size_t>& hits) const;

  /// `evaluate` on canonical texts already made.
  rule_verdict evaluate_texts(std::string_view raw_text, std::string_view norm,
                              const std::string* plain, unsigned disguise,
                              rule_scope scope) const;

  std::vector<input_rule> rules_;
  std::vector<std::shared_ptr<const re2::RE2>> compiled_;
  /// The sets of the rules each scope runs, by `rule_scope` (input,
  /// document, both).
  struct matcher_pair {
    matcher raw;
    matcher norm;
  };
  matcher_pair matchers_[3];
};

} // namespace candor::domain
