#!/usr/bin/env bash
# Concurrency of model calls (issue #5, item 7): 100 concurrent POST /ask
# against `candor serve` whose model endpoint is a loopback stub answering
# each call after 200 ms. Target: the burst finishes well under 2 s.
#
#   eval/bench/llm_concurrency.sh [BUILD_DIR] [REQUESTS] [DELAY_MS] [TARGET_MS]
#
# Expects BUILD_DIR/candor-bench-llm and BUILD_DIR/candor (builds nothing);
# everything runs on loopback with a temporary data directory.
set -euo pipefail
build=${1:-./build}
[[ -x "$build/candor-bench-llm" ]] || {
  echo "bench_llm_concurrency: $build/candor-bench-llm missing (ninja -C $build candor-bench-llm)" >&2
  exit 2
}
exec "$build/candor-bench-llm" "${2:-100}" "${3:-200}" "${4:-2000}"
