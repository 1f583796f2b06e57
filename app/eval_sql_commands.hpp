#pragma once

// The measuring commands of `candor-eval` about the data route: sql-guard,
// layers and data (app/eval_sql_commands.cpp).

namespace candor::cli {

/// `candor-eval sql-guard`: each SQL layer's verdict on statements read as
/// JSON lines.
int cmd_sql_guard(int argc, char** argv);

/// `candor-eval layers`: the attack x defence-layer matrix and its gate.
int cmd_layers(int argc, char** argv);

/// `candor-eval data`: the data planner on the labelled data questions
/// (and, with --follow-ups, on the follow-up set).
int cmd_data(int argc, char** argv);

} // namespace candor::cli
