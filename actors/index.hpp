#pragma once

// Declares the index actor and the snapshot cell through which it
// publishes the serving retrieval snapshot to the retrieve node.

#include <mutex>
#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/interfaces.hpp"
#include "data/retrieval/index_store.hpp"

namespace candor::actors {

struct index_settings {
  std::string path;              ///< <dataDir>/index.db
  data::retrieval_params params; ///< the configured embedders
  data::chunk_options chunking;  ///< the configured chunking
  data::search_mode mode = data::search_mode::fusion;
};

/// The snapshot serving now, published by the index actor (the only
/// writer) and read by the retrieve node without a message round trip.
/// Readers copy the pointer and keep their snapshot for the whole step,
/// so a swap never changes a request's passages half-way.
class snapshot_cell {
public:
  explicit snapshot_cell(snapshot_ptr initial) : current_(std::move(initial)) {
    // nop
  }

  snapshot_ptr load() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return current_;
  }

  void store(snapshot_ptr next) {
    std::lock_guard<std::mutex> guard{mtx_};
    current_.swap(next);
    // `next` now holds the old snapshot; it is released after the lock,
    // and freed when the last request holding it finishes.
  }

private:
  mutable std::mutex mtx_;
  snapshot_ptr current_;
};

using snapshot_cell_ptr = std::shared_ptr<snapshot_cell>;

/// Summary of a snapshot for /health and re-index replies.
index_info describe(const data::retrieval_snapshot& snap,
                    data::search_mode mode);

struct index_state {
  // Not an aggregate: CAF would try to build it from the self pointer.
  index_state() = default;

  static inline const char* name = "index";

  index_settings settings;
  snapshot_cell_ptr cell;
  snapshot_ptr current;
  index_info info; ///< describe(*current), computed once per swap
  /// Re-index requests the running load answers.
  std::vector<caf::typed_response_promise<index_info>> waiting;
  /// Requests that arrived during a load: the file may have changed after
  /// that load read it, so one more load answers them.
  std::vector<caf::typed_response_promise<index_info>> next;
  bool loading = false;
  int64_t swaps = 0;
};

/// The INDEX actor: serves the current immutable snapshot; `reload` loads
/// the index file in a detached helper actor (the index actor keeps
/// answering meanwhile), checks the embedder fingerprint and the chunking
/// options against the configuration, and swaps the new snapshot in (publishing it in `cell`).
/// Requests that already hold the old snapshot keep it until they finish.
/// A restarted index actor starts from what `cell` holds.
index_actor::behavior_type
index(index_actor::stateful_pointer<index_state> self, index_settings settings,
      snapshot_cell_ptr cell);

} // namespace candor::actors
