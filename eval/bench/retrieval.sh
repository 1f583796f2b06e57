#!/usr/bin/env bash
# Retrieval latency benchmark (issue #4 item 10): runs candor-bench-retrieval
# from the repository root so the default --kb data/kb resolves.
#
#   eval/bench/retrieval.sh [BUILD_DIR] [-- ARGS...]   (default ./build)
#
# ARGS go to the program, e.g. `-- --chunks 100000 --reps 20 --strict`.
# Builds nothing: expects BUILD_DIR/candor-bench-retrieval.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=./build
if [[ $# -gt 0 && $1 != "--" ]]; then
  build=$1
  shift
fi
[[ $# -gt 0 && $1 == "--" ]] && shift
build=$(cd "$build" && pwd)
bin=$build/candor-bench-retrieval
if [[ ! -x $bin ]]; then
  echo "error: $bin not found (build the candor-bench-retrieval target)" >&2
  exit 2
fi
cd "$root"
exec "$bin" --kb "$root/data/kb" "$@"
