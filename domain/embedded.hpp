#pragma once

// Declares the files from conf/ and net/page/ compiled into the binary, so
// that candor runs on its defaults from any directory.

#include <string_view>

/// Files from conf/ and net/page/ compiled into the binary (see conf/cmake/embed.cmake), so that
/// `candor` runs on its defaults from any directory.
namespace candor::embedded {

/// conf/candor.json
std::string_view default_config();

/// conf/input_rules.json
std::string_view input_rules();

/// conf/input_scorer.json (the input scorer's weights)
std::string_view input_scorer();

/// conf/prices.json (model prices per million tokens)
std::string_view prices();

/// conf/demo_questions.json (the page's demo questions per provider)
std::string_view demo_questions();

/// net/page/index.html, app.js, app.css and favicon.svg (the page, DESIGN §8)
std::string_view page_html();
std::string_view page_js();
std::string_view page_css();
std::string_view page_icon();

} // namespace candor::embedded
