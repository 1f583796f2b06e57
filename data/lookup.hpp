#pragma once

// Declares what a caller may look up without running the graph (MCP
// describe_catalog, search_documents and the candor:// resources): the
// catalog as a caller sees it, the document list, retrieval alone.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "data/retrieval/index_store.hpp"
#include "data/sales/catalog.hpp"
#include "data/sales/gen.hpp"
#include "domain/types.hpp"

namespace candor::data {

/// The catalog as JSON for callers: `{description, dialect, tables:[{name,
/// description, synonyms, rows, columns:[{name, description, values?}]}],
/// metrics:[{name, description, sql}], guidance}`. Denied tables and
/// columns are not named (their reasons are for operators only), as in
/// the model's schema text.
std::string catalog_json(const catalog& cat, std::string_view dialect,
                         const std::vector<table_rows>& rows);

/// The documents of `snap` as JSON: `{documents:[{slug, title, chunks,
/// sanitizedChunks}], chunks}`, in the snapshot's (slug) order.
std::string documents_json(const retrieval_snapshot& snap);

/// The `k` best passages for `query` in `mode`, best first, with the
/// snapshot's (sanitized) text; `k` is clamped to [1, 20].
std::vector<domain::passage> search_passages(const retrieval_snapshot& snap,
                                             std::string_view query, size_t k,
                                             search_mode mode);

} // namespace candor::data
