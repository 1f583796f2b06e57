#!/usr/bin/env bash
# SQL sandbox latency: a small query through the sandbox against the same
# query on an in-process read-only connection, in the same run.
#
#   eval/bench/sandbox.sh [BUILD_DIR]        (default ./build)
#
# Expects BUILD_DIR/candor and BUILD_DIR/candor-bench-sandbox (builds
# nothing). Generates the sales database into a temporary directory (removed
# at exit) unless BENCH_DB names one, then runs the benchmark, which prints
# P50/P95/P99 of the in-process path, of one executor process driven
# directly, and of the sql_sandbox actor, with the P50 overheads and the
# target (P50 overhead <= 500 us).
#
# Environment:
#   BENCH_DB          an existing sales database to use
#   BENCH_ITERATIONS  measured iterations per path (3000)
#   BENCH_WARMUP      warm-up iterations (300)
#   BENCH_SQL         the statement (default: one order by primary key)
set -euo pipefail

build=${1:-./build}
[[ -x $build/candor && -x $build/candor-bench-sandbox ]] || {
  echo "bench_sandbox: build candor and candor-bench-sandbox first" >&2
  exit 2
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/candor-bench-sandbox.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
db=${BENCH_DB:-}
if [[ -z $db ]]; then
  "$build/candor" seed --data-dir "$tmp" >/dev/null 2>&1
  db=$tmp/sales.db
fi
args=(--db "$db" --executor "$build/candor"
      --iterations "${BENCH_ITERATIONS:-3000}" --warmup "${BENCH_WARMUP:-300}")
[[ -n ${BENCH_SQL:-} ]] && args+=(--sql "$BENCH_SQL")
"$build/candor-bench-sandbox" "${args[@]}"
