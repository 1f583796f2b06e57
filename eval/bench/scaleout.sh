#!/usr/bin/env bash
# Scale-out benchmark: POST /ask throughput of one candor process direct, one
# behind HAProxy and two behind HAProxy (conf/scaleout.sh, conf/haproxy.cfg.in).
#
#   eval/bench/scaleout.sh [BUILD_DIR]        (default ./build)
#
# Starts `conf/scaleout.sh -n 1` and `conf/scaleout.sh -n 2` side by side
# (scripted provider, temp data directories, free loopback ports), then runs
# `wrk -t2 -c64 -d5s --latency` with eval/bench/wrk_post.lua against:
#   direct/1   the -n 1 stack's candor process, on its own port,
#   haproxy/1  the same process through its balancer,
#   haproxy/2  the -n 2 stack's balancer (two processes),
# for the two cheap paths of eval/bench/http.sh (same bodies,
# eval/bench/targets.sh): injection (blocked by the input rules) and oos (an
# out-of-scope question refused through the router). Each round measures
# every line once; the table shows the median over the rounds of requests/s,
# P50 and P99, errors summed, and each line's requests/s as a ratio to
# direct/1 of the same path. Reports, judges nothing.
#
# The client, the balancer and every candor share this machine's cores: on
# a 2-core machine two processes cannot double anything (see docs/scaleout.md).
#
# Environment:
#   BENCH_SECONDS      duration of each run (5)
#   BENCH_CONNECTIONS  wrk connections (64)
#   BENCH_THREADS      wrk threads (2)
#   BENCH_ROUNDS       rounds (3)
#   BENCH_START_TIMEOUT seconds to wait for a stack to answer (120)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-./build}
secs=${BENCH_SECONDS:-5}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-2}
rounds=${BENCH_ROUNDS:-3}
start_timeout=${BENCH_START_TIMEOUT:-120}

# shellcheck source=eval/bench/targets.sh
source "$here/targets.sh"

die() { echo "bench_scaleout: $*" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
command -v curl >/dev/null || die "curl is not installed"
[[ -x $build/candor ]] || die "$build/candor not found (build it first)"
build=$(cd "$build" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/candor-bench-scaleout.XXXXXX")
stacks=()
cleanup() {
  local pid
  # conf/scaleout.sh stops its balancer and processes on SIGTERM.
  for pid in "${stacks[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${stacks[@]}"; do
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_stack N: starts conf/scaleout.sh -n N; its output goes to
# $work/stack-N.out.
start_stack() {
  local n=$1
  CANDOR_LLM_PROVIDER=fake "$root/conf/scaleout.sh" -n "$n" --port 0 \
    --data-root "$work/n$n" --build "$build" \
    >"$work/stack-$n.out" 2>"$work/stack-$n.err" &
  stacks+=($!)
}

# wait_stack N: prints "BALANCER_PORT PROCESS_PORT..." once it is up.
wait_stack() {
  local n=$1 pid=$2 line=""
  local deadline=$((SECONDS + start_timeout))
  while ((SECONDS < deadline)); do
    line=$(grep '^candor: http://' "$work/stack-$n.out" || true)
    if [[ -n $line ]]; then
      local lb ports
      lb=$(grep -oE '127\.0\.0\.1:[0-9]+' <<<"$line" | head -n1 | cut -d: -f2)
      ports=$(sed -E 's/.*ports ([0-9 ]+);.*/\1/' <<<"$line")
      echo "$lb $ports"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "bench_scaleout: the -n $n stack did not come up:" >&2
  tail -n 20 "$work/stack-$n.err" >&2
  return 1
}

# run_wrk NAME PORT BODY: prints "rps p50_us p99_us errors".
run_wrk() {
  bench_wrk "http://127.0.0.1:$2/ask" "$3" "$threads" "$conns" "$secs" \
    "$here/wrk_post.lua" || die "wrk failed for $1"
}

start_stack 1
start_stack 2
read -r lb1 direct1 < <(wait_stack 1 "${stacks[0]}") || die "stack 1 failed"
read -r lb2 _ < <(wait_stack 2 "${stacks[1]}") || die "stack 2 failed"
[[ -n ${direct1:-} && -n ${lb1:-} && -n ${lb2:-} ]] || die "could not read the ports"

# Sanity: every line answers both bodies with 200 before it is measured.
declare -A port_of=([direct/1]=$direct1 [haproxy/1]=$lb1 [haproxy/2]=$lb2)
lines=(direct/1 haproxy/1 haproxy/2)
paths=(injection oos)
for l in "${lines[@]}"; do
  for p in "${paths[@]}"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
             --data "${bench_body[$p]}" "http://127.0.0.1:${port_of[$l]}/ask") || code=000
    [[ $code == 200 ]] || die "$l answered $code to $p"
  done
done

echo "wrk -t$threads -c$conns -d${secs}s --latency (loopback), $rounds round(s);" \
     "$(nproc) CPU(s) shared by wrk, HAProxy and candor"
declare -A samples
for ((round = 1; round <= rounds; ++round)); do
  summary="round $round:"
  for p in "${paths[@]}"; do
    for l in "${lines[@]}"; do
      read -r rps p50 p99 errs < <(run_wrk "$l/$p" "${port_of[$l]}" "${bench_body[$p]}")
      samples[$p $l]+="$rps $p50 $p99 $errs"$'\n'
      summary+=$(awk -v n="$p $l" -v r="$rps" 'BEGIN { printf "  %s %.0f/s", n, r }')
    done
  done
  echo "$summary"
done


((rounds > 1)) && echo "median over $rounds rounds:"
printf '%-10s %-10s %12s %9s %9s %8s %7s\n' path line 'requests/s' 'P50 ms' \
  'P99 ms' 'vs 1' errors
for p in "${paths[@]}"; do
  base=$(bench_median 1 <<<"${samples[$p direct/1]}")
  for l in "${lines[@]}"; do
    s=${samples[$p $l]}
    rps=$(bench_median 1 <<<"$s")
    awk -v p="$p" -v l="$l" -v r="$rps" -v b="$base" -v p50="$(bench_median 2 <<<"$s")" \
        -v p99="$(bench_median 3 <<<"$s")" -v e="$(awk '{ s += $4 } END { print s + 0 }' <<<"$s")" \
        'BEGIN { printf "%-10s %-10s %12.1f %9.2f %9.2f %8.2f %7d\n",
                 p, l, r, p50 / 1000, p99 / 1000, (b > 0 ? r / b : 0), e }'
  done
done
