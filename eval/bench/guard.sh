#!/usr/bin/env bash
# Instructions per question of each stage of the input guard, counted by
# valgrind's callgrind on candor-bench-guard (exact and repeatable, unlike
# time on a shared VM):
#
#   eval/bench/guard.sh [BUILD_DIR] [QUESTION ...]     (default ./build)
#
# Runs BUILD_DIR/candor-bench-guard once per stage (none = set-up only,
# normalize, deobfuscate = normalize + the disguise check, rules = the
# rules on both canonical texts, question = rules + scorer as guard_input
# runs them) for BENCH_ITERATIONS rounds over the questions (default: the
# blocked, out-of-scope and documents questions of eval/bench/targets.sh)
# and prints the instructions per question above the set-up, and what each
# stage adds to the one before.
set -euo pipefail
build=${1:-./build}
shift || true
iterations=${BENCH_ITERATIONS:-1000}
bin=$build/candor-bench-guard
[[ -x $bin ]] || { echo "guard.sh: no $bin (ninja -C $build candor-bench-guard)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "guard.sh: valgrind is not installed" >&2; exit 2; }
nq=$#
((nq)) || nq=3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A total
for stage in none normalize deobfuscate rules question; do
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$stage" \
    "$bin" --stage "$stage" --iterations "$iterations" "$@" >/dev/null 2>&1
  total[$stage]=$(callgrind_annotate "$tmp/$stage" 2>/dev/null |
    awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
done
printf '%-12s %14s %14s\n' stage instr/question added
prev=0
for stage in normalize deobfuscate rules question; do
  per=$(( (total[$stage] - total[none]) / (iterations * nq) ))
  printf '%-12s %14d %14d\n' "$stage" "$per" $((per - prev))
  prev=$per
done
