// The check_citations node: applies domain::check_citations to the model's
// reply and warns about dropped citations.

#include "actors/nodes/nodes.hpp"

#include "domain/citations.hpp"
#include "domain/model/contracts.hpp"
#include "data/log.hpp"

namespace candor::actors {

node_actor::behavior_type
check_citations(node_actor::stateful_pointer<check_citations_state> self) {
  return {
    [self](atom::step, domain::ask_box& box) -> domain::ask_box {
      auto& st = *box;
      auto check = domain::check_citations(st.passages, st.cited_ids,
                                           st.model_refused, st.confident);
      if (!check.dropped.empty()) {
        domain::add_warning(st, "citation_dropped");
        boost::json::array ids;
        for (auto& id : check.dropped)
          ids.push_back(boost::json::value(id));
        data::log_event(
          data::log_level::warn, "citation_dropped",
          {{"requestId", st.request.request_id}, {"chunkIds", std::move(ids)}});
      }
      if (check.verdict != domain::citation_verdict::answered) {
        domain::add_warning(st, std::string{domain::to_string(check.verdict)});
        st.citations.clear();
        std::string text{domain::texts::unsupported_answer};
        // A model that declined or was unsure still retrieved something:
        // say where the reader could look (the retrieved sections).
        if (check.verdict != domain::citation_verdict::no_valid_citation
            && !st.passages.empty()) {
          text += " The closest sections found:";
          for (size_t i = 0; i < st.passages.size() && i < 3; ++i)
            text += std::string{i ? ";" : ""} + " \xE2\x80\x9C"
                    + st.passages[i].heading + "\xE2\x80\x9D ("
                    + st.passages[i].doc_title + ")";
          text += ".";
        }
        domain::finish(st, domain::status_kind::refused, std::move(text));
        return std::move(box);
      }
      st.citations = std::move(check.citations);
      st.status = domain::status_kind::answered;
      return std::move(box);
    },
  };
}

} // namespace candor::actors
