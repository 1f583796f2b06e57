#pragma once

// The local router's words: general English lists built in, and the words
// of one world that its catalog gives (the company's name, and the optional
// `semantic.router` object). Internal to data/local/router*.cpp.

#include <set>
#include <span>
#include <string>
#include <vector>

namespace candor::data {
class catalog;
}

namespace candor::data::router_words {

/// Catalog words that customers use about the documents just as often
/// (a shop, a price, a return): they count for little on their own.
extern const std::set<std::string, std::less<>> shared_words;

/// A phrase of a question about figures (or not), its kind and weight.
struct builtin_cue {
  const char* words;
  const char* kind;
  double weight;
};

/// Function words of questions about figures (and of questions that are
/// not): each is a rule a reader can check.
extern const std::span<const builtin_cue> builtin_cues;

/// Words of headings that name no subject of the documents.
extern const std::span<const char* const> generic_heading_words;

/// First words of requests for a task candor does not do.
extern const std::span<const char* const> task_openers;

/// Words after which a capitalised word is a place.
extern const std::set<std::string, std::less<>> place_prepositions;

/// The router's words of one world, from the catalog's semantic layer: the
/// company's name (the first word of each `filler` phrase), and `router`
/// {shared, value_names, heading_words} (see docs/data-planner.md). Empty
/// when it has none.
struct world_words {
  std::set<std::string, std::less<>> company;
  std::set<std::string, std::less<>> shared;
  std::vector<std::string> value_names;
  std::vector<std::string> heading_words;
};

world_words read_world_words(const catalog& cat);

} // namespace candor::data::router_words
