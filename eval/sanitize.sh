#!/usr/bin/env bash
# Runs the test suite under sanitizers.
#
#   eval/sanitize.sh [address|thread] [ctest arguments ...]
#
# address (the default): AddressSanitizer + UndefinedBehaviorSanitizer, with
#   clang-15 into build-fuzz/ (the same build eval/fuzz.sh fuzzes with: one
#   instrumented build serves both), then the CTest suite there (all of it
#   but the browser and node client suites, see below, unless ctest
#   arguments say otherwise).
# thread: ThreadSanitizer into build-tsan/, then the suites where threads
#   meet (actors, the ledger writer, the HTTP server, the SQL sandbox) unless
#   ctest arguments say otherwise. Debian's libcaf_core is not instrumented,
#   so TSan would not see a message handed from one CAF thread to another
#   and would report a race on every actor's own memory: this mode first
#   builds CAF 0.17.6 from Debian's source package (actor-framework, fetched
#   with apt-get source through a source list of its own, nothing of the
#   system's apt configuration changed) with clang-15 and TSan into
#   build-tsan/caf, and links the suite against it (about 5 minutes more).
#
# Findings in candor's code are not suppressed: every report fails the run.
# The one exception is eval/lsan.supp, memory a system library keeps for the
# life of the process (each entry says which and why). The settings below
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
    # Leaks of system libraries candor cannot free, each named with its
    # reason in the file (none of candor's own).
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=0}
    # Every suite but three whose work is in a program of their own: a
    # headless Chromium (e2e_page) and node with the official clients
    # (e2e_openai_client, e2e_mcp_client). The server paths they reach run
    # here in e2e_serve, e2e_stream, e2e_openai and e2e_mcp; together they
    # took minutes of a CI run that must stay well under an hour.
    default_args=(-E '^(e2e_page|e2e_openai_client|e2e_mcp_client)$')
    ;;
  thread)
    build=${SANITIZE_BUILD_DIR:-$root/build-tsan}
    caf=$build/caf/install
    if [[ ! -f $caf/lib/libcaf_core.so ]]; then
      work=$build/caf
      mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
      echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" >"$work/sources.list"
      apt_opts=(-o Dir::Etc::SourceList="$work/sources.list"
                -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$work/lists"
                -o Dir::Cache="$work/cache")
      apt-get "${apt_opts[@]}" update -qq >&2
      # The upstream tarball is what is needed (Debian's patches touch only
      # its packaging); a missing patch archive is not fatal.
      (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only actor-framework=0.17.6-2.1 >&2) || true
      tarball=$(ls "$work"/src/actor-framework_0.17.6.orig.tar.* 2>/dev/null | head -1)
      [[ -n $tarball ]] || { echo "sanitize.sh: could not fetch CAF 0.17.6's source" >&2; exit 2; }
      tar -xf "$tarball" -C "$work/src"
      CC=clang-15 CXX=clang++-15 cmake -S "$work/src/actor-framework-0.17.6" -B "$work/build" -G Ninja \
        -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g -fsanitize=thread" \
        -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread -DCMAKE_INSTALL_PREFIX="$caf" \
        -DCAF_NO_IO=yes -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes \
        -DCAF_NO_OPENSSL=yes -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes \
        -DCAF_NO_AUTO_LIBCPP=yes -DCAF_NO_OPENCL=yes -DCAF_NO_SUMMARY=yes >&2
      cmake --build "$work/build" -j "${SANITIZE_JOBS:-2}" >&2
      cmake --install "$work/build" >&2
    fi
    flags=(-DCANDOR_SANITIZE=thread -DCAF_INCLUDE_DIR="$caf/include"
           -DCAF_CORE_LIBRARY="$caf/lib/libcaf_core.so")
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
    default_args=(-R '^(actors_|data_ledger|net_server|e2e_serve)')
    ;;
  *) echo "sanitize.sh: address or thread, not '$kind'" >&2; exit 2 ;;
esac
if [[ ! -f $build/build.ninja ]]; then
  CC=clang-15 CXX=clang++-15 cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCANDOR_BENCH=OFF \
    "${flags[@]}" >&2
fi
cmake --build "$build" -j "${SANITIZE_JOBS:-2}" >&2
# Servers start several times slower in these builds (seeding the sales
# database takes about 40 s under TSan): the tests' start and stop bounds
# scale. (Not a CANDOR_* name: candor refuses unknown CANDOR_* variables.)
export TEST_TIME_SCALE=${TEST_TIME_SCALE:-4}
args=("$@")
((${#args[@]})) || args=("${default_args[@]}")
ctest --test-dir "$build" --output-on-failure -j 2 "${args[@]}"
