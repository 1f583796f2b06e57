#pragma once

// `candor catalog draft|check`: a catalog drafted from a SQLite database,
// or checked against one.

namespace candor::cli {

/// `candor catalog draft --db FILE [--max-values N]` (the catalog on
/// stdout, the notes on stderr) and `candor catalog check --db FILE
/// --catalog FILE` (one line per finding; exit 1 on an error) on argv
/// without the program name.
int cmd_catalog(int argc, char** argv);

} // namespace candor::cli
