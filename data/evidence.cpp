#include "data/evidence.hpp"

#include <algorithm>

namespace candor::data {

double evidence_score(const retrieval_snapshot&, std::string_view,
                      const std::vector<search_hit>& hits) {
  // First version: the best TF-IDF cosine among the hits (bounded in
  // [0, 1] and comparable across queries, unlike an RRF sum).
  double best = 0;
  for (auto& h : hits)
    best = std::max(best, h.tfidf);
  return best;
}

} // namespace candor::data
