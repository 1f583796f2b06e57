#!/usr/bin/env bash
# Fuzzes candor's parsers with libFuzzer (clang-15, ASan + UBSan).
#
#   eval/fuzz.sh [SECONDS] [TARGET ...]
#
# Builds the fuzz targets of tests/fuzz with clang into build-fuzz/
# (-DCANDOR_FUZZ=ON -DCANDOR_SANITIZE=address: the whole library is
# instrumented, so libFuzzer sees coverage inside candor's code, and any
# memory error or undefined behaviour stops the run), then runs each target
# for SECONDS (default 60) on a copy of its seed corpus in tests/fuzz/corpus.
# New inputs stay in the work copy (FUZZ_WORK, default build-fuzz/work); a
# crash, leak or timeout is copied to tests/fuzz/corpus/TARGET/ (fix it, and
# keep the input there: CTest replays it on every run) and the script exits 1.
# Default targets: all of them. Prints one line per target: executions, the
# corpus it ended with, and the verdict.
#
# Environment: FUZZ_BUILD_DIR (build-fuzz), FUZZ_JOBS (2), FUZZ_MAX_LEN
# (4096), FUZZ_WORK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
secs=${1:-60}
shift || true
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a positive integer" >&2; exit 2; }
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
work=${FUZZ_WORK:-$build/work}
max_len=${FUZZ_MAX_LEN:-4096}
all=(ask_body chat_body config_json openai_reply sql_policy pg_policy input_rules chunker output_guard http_request doc_formats)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t' (one of: ${all[*]})" >&2; exit 2; }
done
command -v clang++-15 >/dev/null || { echo "fuzz.sh: clang++-15 is missing (conf/setup.sh installs it)" >&2; exit 2; }

if [[ ! -f $build/build.ninja ]]; then
  CC=clang-15 CXX=clang++-15 cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCANDOR_BENCH=OFF \
    -DCANDOR_FUZZ=ON -DCANDOR_SANITIZE=address >&2
fi
cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${targets[@]/#/fuzz-}" >&2

# A finding is a finding: nothing is suppressed here (docs/reliability.md).
sym=$(command -v llvm-symbolizer-15 || command -v llvm-symbolizer || true)
export ASAN_OPTIONS=${ASAN_OPTIONS:-external_symbolizer_path=$sym:abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-external_symbolizer_path=$sym:print_stacktrace=1:halt_on_error=1}
failed=0
printf '%-14s %10s %8s  %s\n' target executions corpus verdict
for t in "${targets[@]}"; do
  seeds=$root/tests/fuzz/corpus/$t
  corpus=$work/$t
  artifacts=$work/$t-artifacts
  mkdir -p "$corpus" "$artifacts"
  cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true
  log=$work/$t.log
  verdict=ok
  if ! "$build/fuzz-$t" -max_total_time="$secs" -max_len="$max_len" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
    verdict="FAILED (see $log)"
    failed=1
    for a in "$artifacts"/*; do
      [[ -f $a ]] || continue
      cp "$a" "$seeds/$(basename "$a")"
      verdict+=" kept $(basename "$a") in tests/fuzz/corpus/$t"
    done
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || echo '?')
  printf '%-14s %10s %8s  %s\n' "$t" "$runs" "$(ls "$corpus" | wc -l)" "$verdict"
done
exit $failed
