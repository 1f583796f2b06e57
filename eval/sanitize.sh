#!/usr/bin/env bash
# Runs the test suite under sanitizers.
#
#   eval/sanitize.sh [address|thread] [ctest arguments ...]
#
# address (the default): AddressSanitizer + UndefinedBehaviorSanitizer, with
#   clang-15 into build-fuzz/ (the same build eval/fuzz.sh fuzzes with: one
#   instrumented build serves both), then the whole CTest suite there.
# thread: ThreadSanitizer into build-tsan/, then the suites where threads
#   meet (actors, the ledger writer, the HTTP server, the SQL sandbox) unless
#   ctest arguments say otherwise.
#
# Findings are not suppressed: every report fails the run. The settings below
# only make reports fatal and readable; docs/reliability.md lists what a
# sanitizer build changes in how candor runs (no tcmalloc) and why.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
kind=${1:-address}
shift || true
command -v clang++-15 >/dev/null || { echo "sanitize.sh: clang++-15 is missing (conf/setup.sh installs it)" >&2; exit 2; }
case $kind in
  address)
    build=${SANITIZE_BUILD_DIR:-$root/build-fuzz}
    flags=(-DCANDOR_FUZZ=ON -DCANDOR_SANITIZE=address)
    sym=$(command -v llvm-symbolizer-15 || command -v llvm-symbolizer || true)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-external_symbolizer_path=$sym:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-external_symbolizer_path=$sym:print_stacktrace=1:halt_on_error=1}
    default_args=()
    ;;
  thread)
    build=${SANITIZE_BUILD_DIR:-$root/build-tsan}
    flags=(-DCANDOR_SANITIZE=thread)
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
    default_args=(-R '^(actors_|data_ledger|net_server|e2e_serve)')
    ;;
  *) echo "sanitize.sh: address or thread, not '$kind'" >&2; exit 2 ;;
esac
if [[ ! -f $build/build.ninja ]]; then
  CC=clang-15 CXX=clang++-15 cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" "${flags[@]}" >&2
fi
cmake --build "$build" -j "${SANITIZE_JOBS:-2}" >&2
args=("$@")
((${#args[@]})) || args=("${default_args[@]}")
ctest --test-dir "$build" --output-on-failure -j 2 "${args[@]}"
