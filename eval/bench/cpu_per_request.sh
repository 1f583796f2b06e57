#!/usr/bin/env bash
# CPU time and context switches per request of `candor serve` under a
# fixed wrk load: far less sensitive to other work on the machine than
# requests/s (a busy machine slows the server down, but each request still
# costs about the same CPU).
#
#   eval/bench/cpu_per_request.sh [BUILD_DIR]     (default ./build)
#
# Starts BUILD_DIR/candor serve on a free loopback port with a temporary
# data directory, warms each target up, then for each target runs
# `wrk -t2 -c64` for BENCH_SECONDS while `perf stat -e
# task-clock,context-switches,raw_syscalls:sys_enter` watches the server
# process, and prints requests, CPU µs per request, context switches and
# system calls per request (the last one hardly depends on the machine's
# load) and req/s.
# Ends with the machine's load average so figures can be judged.
#
# Environment:
#   BENCH_SECONDS      measured seconds per target (8)
#   BENCH_CONNECTIONS  wrk connections (64)
#   BENCH_THREADS      wrk threads (2)
#   BENCH_TARGETS      targets to measure, space separated
#                      (default "injection oos docs")
#   BENCH_START_TIMEOUT seconds to wait for the server to listen (60)
#   BENCH_PIN          1: the server on CPU 0 and wrk on CPU 1 (taskset), for
#                      steadier A/B comparisons of code changes (0)
#   CANDOR_*           passed to the server as usual (e.g.
#                      CANDOR_HTTP_THREADS=1)
set -euo pipefail
# The model provider of the measured server: "fake" (recorded fixtures,
# the figures of issues #2-#4) unless BENCH_PROVIDER says otherwise
# ("local": the local provider, no model and no fixture).
export CANDOR_LLM_PROVIDER=${BENCH_PROVIDER:-fake}

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-./build}
secs=${BENCH_SECONDS:-8}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-2}
targets=${BENCH_TARGETS:-injection oos docs}
start_timeout=${BENCH_START_TIMEOUT:-60}
pin_server=() pin_wrk=()
if [[ ${BENCH_PIN:-0} == 1 ]]; then
  command -v taskset >/dev/null || { echo "bench_cpu: taskset missing" >&2; exit 2; }
  pin_server=(taskset -c 0) pin_wrk=(taskset -c 1)
fi

# shellcheck source=eval/bench/targets.sh
source "$here/targets.sh"

die() { echo "bench_cpu: $*" >&2; exit 2; }

command -v wrk >/dev/null || die "wrk is not installed"
command -v perf >/dev/null || die "perf is not installed"
command -v curl >/dev/null || die "curl is not installed"
[[ -x $build/candor ]] || die "$build/candor not found (build it first)"
for t in $targets; do
  [[ -n ${bench_body[$t]:-} ]] || die "unknown target '$t' (injection oos docs data)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/candor-cpu.XXXXXX")
pid=""
cleanup() {
  if [[ -n $pid ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/data"
"${pin_server[@]}" "$build/candor" serve --data-dir "$work/data" --port 0 2>"$work/candor.err" &
pid=$!
port=""
deadline=$((SECONDS + start_timeout))
while ((SECONDS < deadline)); do
  kill -0 "$pid" 2>/dev/null || { tail -n 20 "$work/candor.err" >&2; die "candor exited"; }
  port=$(grep -oE '"port":[0-9]+' "$work/candor.err" | head -n1 | grep -oE '[0-9]+$' || true)
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || die "candor did not listen within ${start_timeout}s"

url="http://127.0.0.1:$port/ask"
# wrk_run BODY SECONDS: prints the number of requests completed.
wrk_run() {
  local out
  out=$(BENCH_BODY=$1 "${pin_wrk[@]}" wrk -t"$threads" -c"$conns" -d"$2s" \
          -s "$here/wrk_post.lua" "$url" 2>&1) || die "wrk failed: $out"
  local line
  line=$(grep '^BENCH_RESULT' <<<"$out") || die "no result from wrk"
  local non
  non=$(grep -oE 'non2xx=[0-9]+' <<<"$line" | cut -d= -f2)
  [[ $non == 0 ]] || die "$non non-2xx responses"
  grep -oE 'requests=[0-9]+' <<<"$line" | cut -d= -f2
}

printf '%-10s %9s %10s %10s %10s %8s\n' target requests 'cpu us/req' \
  'ctxsw/req' 'sysc/req' 'req/s'
for t in $targets; do
  code=$(curl -s -o "$work/probe.json" -w '%{http_code}' \
           -H 'Content-Type: application/json' --data "${bench_body[$t]}" "$url") || code=000
  [[ $code == 200 ]] || die "candor answered $code to ${bench_body[$t]}"
  wrk_run "${bench_body[$t]}" 2 >/dev/null # warm-up
  perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -p "$pid" \
    -o "$work/perf-$t.txt" &
  perf_pid=$!
  sleep 0.2
  n=$(wrk_run "${bench_body[$t]}" "$secs")
  kill -INT "$perf_pid"
  wait "$perf_pid" || true
  clock_ms=$(awk -F, '$3 ~ /task-clock/ {print $1}' "$work/perf-$t.txt")
  cs=$(awk -F, '$3 ~ /context-switches/ {print $1}' "$work/perf-$t.txt")
  sc=$(awk -F, '$3 ~ /sys_enter/ {print $1}' "$work/perf-$t.txt")
  [[ -n $clock_ms && -n $cs && -n $sc ]] ||
    die "no perf figures: $(cat "$work/perf-$t.txt")"
  awk -v n="$n" -v ms="$clock_ms" -v cs="$cs" -v sc="$sc" -v s="$secs" \
      -v t="$t" 'BEGIN {
    printf "%-10s %9d %10.1f %10.2f %10.2f %8.0f\n", t, n, ms * 1000 / n,
           cs / n, sc / n, n / s
  }'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  (2 cores;" \
     "the perf window is 0.2 s longer than the wrk run)"
