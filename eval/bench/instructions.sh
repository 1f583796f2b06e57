#!/usr/bin/env bash
# Instructions per request of `candor serve`, counted by valgrind's
# callgrind: user-space instructions of every thread of the server (HTTP,
# actors, ledger writer, log) divided by the requests answered while
# counting. Unlike requests/s on a shared 2-core VM (±20 % between runs),
# the count hardly moves between runs, so it compares two builds of the
# same path well. It does not see the kernel (system calls, context
# switches, loopback TCP) or cache behaviour: confirm a gain with
# eval/bench/http.sh or eval/bench/cpu_per_request.sh.
#
#   eval/bench/instructions.sh [BUILD_DIR ...]     (default ./build)
#
# For each build dir and each target, starts BUILD_DIR/candor serve under
# callgrind (instrumentation off) on a free loopback port with a copy of a
# data directory that build made natively first, warms up with wrk, switches instrumentation on, runs
# `wrk -t1 -c8` for BENCH_SECONDS, switches it off and prints the
# instructions per request. Several build dirs are measured target by
# target, alternating, for an A/B comparison.
#
# Environment:
#   BENCH_SECONDS      counted seconds per target (10; under callgrind the
#                      server answers some hundreds of requests a second)
#   BENCH_TARGETS      targets, space separated (default "injection oos docs")
#   BENCH_START_TIMEOUT seconds to wait for a server to listen (120)
set -euo pipefail
# The model provider of the measured server: "fake" (recorded fixtures,
# the figures of issues #2-#4) unless BENCH_PROVIDER says otherwise
# ("local": the local provider, no model and no fixture).
export CANDOR_LLM_PROVIDER=${BENCH_PROVIDER:-fake}

here=$(cd "$(dirname "$0")" && pwd)
builds=("$@")
((${#builds[@]})) || builds=(./build)
secs=${BENCH_SECONDS:-10}
targets=${BENCH_TARGETS:-injection oos docs}
start_timeout=${BENCH_START_TIMEOUT:-120}

# shellcheck source=eval/bench/targets.sh
source "$here/targets.sh"

die() { echo "bench_instructions: $*" >&2; exit 2; }

for tool in valgrind callgrind_control callgrind_annotate wrk curl; do
  command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install valgrind wrk curl)"
done
for b in "${builds[@]}"; do
  [[ -x $b/candor ]] || die "$b/candor not found (build it first)"
done
for t in $targets; do
  [[ -n ${bench_body[$t]:-} ]] || die "unknown target '$t' (injection oos docs data)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/candor-instr.XXXXXX")
pid=""
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_port PID ERRFILE: prints the port candor listens on.
wait_port() {
  local deadline=$((SECONDS + start_timeout)) port=""
  while ((SECONDS < deadline)); do
    kill -0 "$1" 2>/dev/null || { tail -n 20 "$2" >&2; die "candor exited"; }
    port=$(grep -soE '"port":[0-9]+' "$2" | head -n1 | grep -oE '[0-9]+$' || true)
    [[ -n $port ]] && { echo "$port"; return; }
    sleep 0.2
  done
  die "candor did not listen within ${start_timeout}s"
}

# stop_server: TERM, up to 30 s for a graceful stop (slow under valgrind),
# then KILL.
stop_server() {
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

# seed BUILD: a data directory made by BUILD natively (sales database and
# index), so the servers under valgrind start in seconds.
seed() {
  local dir="$work/seed-${1//\//_}"
  [[ -d $dir ]] && return
  mkdir -p "$dir"
  # A stale file would hand wait_port the previous server's port before
  # this one's shell has truncated it.
  rm -f "$work/seed.err"
  "$1/candor" serve --data-dir "$dir" --port 0 >/dev/null 2>"$work/seed.err" &
  pid=$!
  wait_port "$pid" "$work/seed.err" >/dev/null
  stop_server
}

# measure BUILD TARGET: sets n (requests) and ir (instructions).
measure() {
  local build=$1 target=$2 data="$work/data" port out
  rm -rf "$data" "$work"/cg.out.* "$work/err"
  seed "$build"
  cp -r "$work/seed-${build//\//_}" "$data"
  valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$work/cg.out.%p" \
    "$build/candor" serve --data-dir "$data" --port 0 >/dev/null 2>"$work/err" &
  pid=$!
  port=$(wait_port "$pid" "$work/err")
  local url="http://127.0.0.1:$port/ask"
  local code
  code=$(curl -s -m 120 -o /dev/null -w '%{http_code}' \
           -H 'Content-Type: application/json' \
           --data "${bench_body[$target]}" "$url") || code=000
  [[ $code == 200 ]] || die "candor answered $code to ${bench_body[$target]}"
  BENCH_BODY=${bench_body[$target]} wrk -t1 -c8 -d3s -s "$here/wrk_post.lua" "$url" >/dev/null
  callgrind_control -i on "$pid" >/dev/null 2>&1
  out=$(BENCH_BODY=${bench_body[$target]} wrk -t1 -c8 -d"${secs}s" -s "$here/wrk_post.lua" "$url")
  callgrind_control -i off "$pid" >/dev/null 2>&1
  local line non
  line=$(grep '^BENCH_RESULT' <<<"$out") || die "no result from wrk"
  non=$(grep -oE 'non2xx=[0-9]+' <<<"$line" | cut -d= -f2)
  [[ $non == 0 ]] || die "$non non-2xx responses"
  n=$(grep -oE 'requests=[0-9]+' <<<"$line" | cut -d= -f2)
  stop_server
  local f
  f=$(ls -t "$work"/cg.out.* | head -n1)
  callgrind_annotate "$f" >"$work/annotate.txt" 2>/dev/null || true
  ir=$(grep -m1 'PROGRAM TOTALS' "$work/annotate.txt" | grep -oE '^[0-9,]+' |
         tr -d , || true)
  [[ -n $ir && $n -gt 0 ]] || die "no instruction count"
}

printf '%-10s %-28s %9s %14s\n' target build requests 'instr/request'
for t in $targets; do
  for b in "${builds[@]}"; do
    measure "$b" "$t"
    printf '%-10s %-28s %9d %14d\n' "$t" "$b" "$n" $((ir / n))
  done
done
