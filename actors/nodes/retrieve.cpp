// The retrieve node: searches the published snapshot for the question and
// refuses before any model call when the evidence is too weak.

#include "actors/nodes/nodes.hpp"

#include "actors/index.hpp"

#include "data/retrieval/evidence.hpp"
#include "data/retrieval/index_store.hpp"
#include "data/retrieval/query.hpp"
#include "domain/model/contracts.hpp"

namespace candor::actors {

namespace {

using domain::ask_box;
using domain::ask_state;

/// One retrieval step on `snap`, which the request keeps for its whole
/// step even if the index actor swaps in a newer one meanwhile.
void run_retrieval(const data::retrieval_snapshot& snap,
                   const retrieve_settings& cfg, ask_state& st) {
  // The local router may have retrieved the same moments before.
  auto found = data::retrieve_with_evidence(
    snap, st.request.question, static_cast<size_t>(std::max(cfg.top_k, 1)),
    cfg.mode, st.request.request_id);
  const auto& hits = found->hits;
  const auto& evidence = found->evidence;
  st.service.embedder = snap.fingerprint(cfg.mode);
  if (hits.empty() || evidence.score < cfg.threshold) {
    // Refused before any model call: nothing is worth showing to one.
    domain::add_warning(st, "weak_evidence");
    // Say which check refused when it was the answer-type gate: the
    // question asks for a kind of answer (a price, a weight, ...) that no
    // retrieved passage states.
    if (!evidence.type_found)
      domain::add_warning(st, "answer_type_not_stated");
    domain::finish(st, domain::status_kind::refused,
                   std::string{domain::texts::weak_evidence});
    return;
  }
  st.passages.clear();
  for (const auto& h : hits) {
    if (h.index >= snap.chunks().size())
      continue;
    const auto& c = snap.chunks()[h.index];
    domain::passage p;
    p.chunk_id = c.id;
    p.doc_title = c.doc_title;
    p.heading = c.heading;
    p.score = h.score;
    p.sanitized = c.flagged;
    p.text = c.text;
    st.passages.push_back(std::move(p));
    // The removed sentences must not reach the client either: the output
    // guard in finalize checks for them.
    for (const auto& span : c.redacted_spans)
      st.redacted_spans.push_back(span);
  }
}

} // namespace

node_actor::behavior_type
retrieve(node_actor::stateful_pointer<retrieve_state> self,
         std::shared_ptr<const snapshot_cell> snapshots,
         retrieve_settings settings) {
  self->state.snapshots = std::move(snapshots);
  self->state.settings = settings;
  return {
    [self](atom::step, ask_box& box) -> caf::result<ask_box> {
      // This request keeps `snap` for the whole step, whatever is swapped
      // in meanwhile.
      auto snap = self->state.snapshots->load();
      if (!snap)
        return to_caf(domain::ec::index_unavailable,
                      "no retrieval index is loaded");
      run_retrieval(*snap, self->state.settings, *box);
      return std::move(box);
    },
  };
}

} // namespace candor::actors
