#pragma once

// Declares the fixture store: the scripted provider's model replies, keyed
// by prompt name and normalised question.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "domain/error.hpp"

namespace candor::data {

/// One scripted model reply.
struct scripted_reply {
  std::string text;
  std::string finish_reason = "stop"; ///< "stop" or "length"
};

/// The scripted provider's answers: `fixtures/llm/<prompt>.json`, keyed by
/// prompt name and normalised question. Replaces only the model call.
///
/// File format:
///   {"prompt": "router",
///    "entries": [{"question": "...", "response": <object|string>},
///                {"question": "...", "responses": [<first>, <re-ask>]},
///                {"question": "...", "response": "...",
///                 "finishReason": "length"}]}
class fixture_store {
public:
  /// Loads every `*.json` file of `dir`. Errors name the file and entry.
  static domain::outcome<fixture_store> load(const std::string& dir);

  /// The reply for the `ordinal`-th call (0 = first ask, 1 = re-ask, ...) of
  /// `prompt` about `question`; the last scripted reply repeats. A missing
  /// fixture is a `fixture_missing` error naming prompt and normalised key.
  domain::outcome<scripted_reply> lookup(const std::string& prompt,
                                         const std::string& question,
                                         size_t ordinal) const;

  size_t size() const noexcept;

private:
  std::map<std::pair<std::string, std::string>, std::vector<scripted_reply>>
    entries_;
};

} // namespace candor::data
