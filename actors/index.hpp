#pragma once

#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "data/index_store.hpp"

namespace candor::actors {

struct index_settings {
  std::string path;               ///< <dataDir>/index.db
  data::retrieval_params params;  ///< the configured embedders
  data::search_mode mode = data::search_mode::fusion;
};

/// Summary of a snapshot for /health and re-index replies.
index_info describe(const data::retrieval_snapshot& snap,
                    data::search_mode mode);

struct index_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  index_state() = default;

  static inline const char* name = "index";

  index_settings settings;
  snapshot_ptr current;
  /// Re-index requests waiting for the running load (one load at a time;
  /// requests that arrive meanwhile share its result).
  std::vector<caf::typed_response_promise<index_info>> waiting;
  bool loading = false;
  int64_t swaps = 0;
};

/// The INDEX actor: serves the current immutable snapshot; `reload` loads
/// the index file in a detached helper actor (the index actor keeps
/// answering meanwhile), checks the embedder fingerprint against the
/// configuration, and swaps the new snapshot in. Requests that already hold
/// the old snapshot keep it until they finish.
index_actor::behavior_type
index(index_actor::stateful_pointer<index_state> self, index_settings settings,
      snapshot_ptr initial);

} // namespace candor::actors
