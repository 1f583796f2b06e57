#pragma once

// The second sample world, Fernhill Veterinary Group: a chain of four
// veterinary clinics, unlike the bicycle shop in shape and vocabulary. It
// proves that candor answers any company's documents and database through
// `candor catalog draft`, a short hand edit and `candor ingest`.

#include <string>

#include "domain/error.hpp"

/// Written by `candor-eval sample --out DIR`:
///  - `DIR/fernhill.db`: clinics, vets, owners (names, e-mail addresses,
///    phones: personal), pets, treatments, appointments, appointment_items
///    and payments, about 2024-01-01 to 2025-12-31, from a fixed seed (the
///    same file every time);
///  - `DIR/docs/`: the HTML pages of eval/worlds/fernhill/docs copied, and
///    one PDF per text file of eval/worlds/fernhill/pdf (a `#` title, `##`
///    headings, one sentence or paragraph per line, wrapped onto pages).
/// The hand-edited catalog, the labelled question sets and the settings
/// are in eval/worlds/fernhill/ (see its README.md).
namespace candor::eval {

/// `eval/worlds/fernhill` of the source tree.
std::string fernhill_dir();

/// Writes the world into `out` (created; an existing fernhill.db is
/// replaced). Returns the number of rows written.
domain::outcome<long> make_fernhill(const std::string& out);

} // namespace candor::eval
