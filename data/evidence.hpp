#pragma once

#include <string_view>
#include <vector>

#include "data/index_store.hpp"

/// The score the documents branch's refusal threshold applies to. The
/// retrieve node and `candor calibrate` both use this one function, so
/// the threshold the calibration chose is the one the server enforces.
namespace candor::data {

/// The evidence that `hits` (the result of `snap.search(query, ...)`)
/// answer `query`, in [0, 1]; higher is stronger. Below the configured
/// `retrieval.threshold`, the question is refused without a model call.
/// The best hit's TF-IDF cosine times the IDF-weighted share of the
/// question's terms it contains; independent of the search mode.
double evidence_score(const retrieval_snapshot& snap, std::string_view query,
                      const std::vector<search_hit>& hits);

} // namespace candor::data
