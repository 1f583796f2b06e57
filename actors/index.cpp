// The index actor: serves the current retrieval snapshot and loads a new
// one on a detached loader when asked to re-index.

#include "actors/index.hpp"

#include <caf/event_based_actor.hpp>

#include "data/log.hpp"

namespace candor::actors {

namespace {

using self_ptr = index_actor::stateful_pointer<index_state>;

/// The detached loader: reads the index file (blocking SQLite work), sends
/// the result to the index actor and quits.
caf::behavior loader(caf::event_based_actor* self, index_actor parent,
                     index_settings settings) {
  index_load out;
  auto r
    = data::load_snapshot(settings.path, settings.params, settings.chunking);
  if (r)
    out.snapshot = std::move(*r);
  else
    out.err = r.err();
  self->send(parent, atom::internal_v, atom::reload_v, std::move(out));
  self->quit();
  return {};
}

void start_load(self_ptr self) {
  auto& s = self->state;
  s.loading = true;
  self->spawn<caf::detached>(loader, static_cast<index_actor>(self),
                             s.settings);
}

void finish_load(self_ptr self, index_load& load) {
  auto& s = self->state;
  s.loading = false;
  auto waiting = std::move(s.waiting);
  s.waiting = std::move(s.next);
  s.next.clear();
  if (!s.waiting.empty())
    start_load(self);
  if (!load.snapshot) {
    data::log_event(
      data::log_level::error, "reindex_failed",
      {{"message", load.err.message},
       {"serving",
        s.current ? s.current->fingerprint(s.settings.mode) : std::string{}}});
    for (auto& rp : waiting)
      rp.deliver(to_caf(load.err.code, load.err.message));
    return;
  }
  auto info = describe(*load.snapshot, s.settings.mode);
  auto before = s.info;
  s.current = std::move(load.snapshot);
  s.info = info;
  s.cell->store(s.current);
  ++s.swaps;
  data::log_event(data::log_level::info, "reindexed",
                  {{"fingerprint", info.fingerprint},
                   {"documents", info.documents},
                   {"chunks", info.chunks},
                   {"flagged", info.flagged},
                   {"previousChunks", before.chunks},
                   {"swaps", s.swaps}});
  for (auto& rp : waiting)
    rp.deliver(info);
}

} // namespace

index_info describe(const data::retrieval_snapshot& snap,
                    data::search_mode mode) {
  index_info out;
  out.fingerprint = snap.fingerprint(mode);
  out.documents = static_cast<int64_t>(snap.document_count());
  out.chunks = static_cast<int64_t>(snap.size());
  for (auto& c : snap.chunks())
    out.flagged += c.flagged ? 1 : 0;
  return out;
}

index_actor::behavior_type
index(index_actor::stateful_pointer<index_state> self, index_settings settings,
      snapshot_cell_ptr cell) {
  auto& st = self->state;
  st.settings = std::move(settings);
  st.cell = std::move(cell);
  st.current = st.cell->load();
  if (st.current)
    st.info = describe(*st.current, st.settings.mode);
  return {
    [self](atom::get) { return self->state.current; },
    [self](atom::health) -> caf::result<index_info> {
      auto& s = self->state;
      if (!s.current)
        return to_caf(domain::ec::index_unavailable,
                      "no retrieval index is loaded");
      return s.info;
    },
    [self](atom::reload) -> caf::result<index_info> {
      auto& s = self->state;
      auto rp = self->make_response_promise<index_info>();
      if (s.loading) {
        s.next.push_back(rp);
      } else {
        s.waiting.push_back(rp);
        start_load(self);
      }
      return rp;
    },
    [self](atom::internal, atom::reload, index_load& load) {
      finish_load(self, load);
    },
  };
}

} // namespace candor::actors
