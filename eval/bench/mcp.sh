#!/usr/bin/env bash
# MCP benchmark: the `ask` tool on POST /mcp beside POST /ask, the same
# question on the same server.
#
#   eval/bench/mcp.sh [BUILD_DIR]        (default ./build)
#
# Starts `BUILD_DIR/candor serve` on loopback (free port, temp data dir,
# scripted provider by default), opens one MCP session (initialize), checks
# that both paths answer the question, then runs, per round, `wrk -t2 -c64
# -d5s --latency` on POST /ask (eval/bench/wrk_post.lua) and on POST /mcp
# tools/call ask (eval/bench/wrk_mcp.lua), and prints requests/s, P50 and
# P99 of each round and their medians, and the ratio mcp/ask. Measures;
# judges nothing.
#
# Environment:
#   BENCH_SECONDS      duration of each run (5)
#   BENCH_CONNECTIONS  wrk connections (64)
#   BENCH_THREADS      wrk threads (2)
#   BENCH_ROUNDS       rounds of (ask, mcp) (3)
#   BENCH_PROVIDER     fake (scripted fixtures) or local (fake)
#   BENCH_TARGET       the eval/bench/targets.sh body to ask (docs)
#   BENCH_START_TIMEOUT seconds to wait for the server to listen (60)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-./build}
secs=${BENCH_SECONDS:-5}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-2}
rounds=${BENCH_ROUNDS:-3}
provider=${BENCH_PROVIDER:-fake}
target=${BENCH_TARGET:-docs}
start_timeout=${BENCH_START_TIMEOUT:-60}

# shellcheck source=eval/bench/targets.sh
source "$here/targets.sh"
die() { echo "bench_mcp: $*" >&2; exit 2; }
ask_body=${bench_body[$target]:-}
[[ -n $ask_body ]] || die "unknown BENCH_TARGET $target"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
command -v curl >/dev/null || die "curl is not installed"
[[ -x $build/candor ]] || die "$build/candor not found (build it first)"
# {"question": ...} as the arguments of the ask tool.
mcp_body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":'"$ask_body"'}}'

work=$(mktemp -d "${TMPDIR:-/tmp}/candor-bench-mcp.XXXXXX")
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

CANDOR_LLM_PROVIDER=$provider "$build/candor" serve --data-dir "$work/data" \
  --port 0 2>"$work/candor.err" &
pid=$!
port=""
deadline=$((SECONDS + start_timeout))
while [[ -z $port ]] && ((SECONDS < deadline)); do
  kill -0 "$pid" 2>/dev/null || { tail -n 20 "$work/candor.err" >&2; die "candor exited"; }
  port=$(grep -oE '"port":[0-9]+' "$work/candor.err" | head -n1 | grep -oE '[0-9]+$' || true)
  [[ -n $port ]] || sleep 0.1
done
[[ -n $port ]] || die "candor did not listen within ${start_timeout}s"
base=http://127.0.0.1:$port
export BENCH_SESSION
# One session for every MCP request of the runs.
session=$(curl -s -D - -o "$work/init.json" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  --data '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  "$base/mcp" | tr -d '\r' | awk -F': ' 'tolower($1) == "mcp-session-id" { print $2 }')
BENCH_SESSION=$session
[[ -n $session ]] || die "initialize gave no session: $(cat "$work/init.json")"
# Both paths answer before they are measured.
curl -s -o "$work/probe.json" -H 'Content-Type: application/json' \
  --data "$ask_body" "$base/ask"
grep -q '"status":"answered"' "$work/probe.json" ||
  die "POST /ask did not answer: $(head -c 400 "$work/probe.json")"
curl -s -o "$work/probe.json" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-11-25' \
  --data "$mcp_body" "$base/mcp"
grep -q '"status":"answered"' "$work/probe.json" &&
  grep -q '"isError":false' "$work/probe.json" ||
  die "the MCP ask tool did not answer: $(head -c 400 "$work/probe.json")"

echo "candor $(basename "$build") on 127.0.0.1:$port, provider $provider," \
     "target $target, wrk -t$threads -c$conns -d${secs}s, $rounds round(s)"
printf '%-6s %-5s %10s %9s %9s %7s\n' round path req/s p50_ms p99_ms errors
: >"$work/ask.txt"
: >"$work/mcp.txt"
for round in $(seq "$rounds"); do
  a=$(bench_wrk "$base/ask" "$ask_body" "$threads" "$conns" "$secs" \
        "$here/wrk_post.lua") || die "wrk failed on /ask"
  m=$(bench_wrk "$base/mcp" "$mcp_body" "$threads" \
        "$conns" "$secs" "$here/wrk_mcp.lua") || die "wrk failed on /mcp"
  echo "$a" >>"$work/ask.txt"
  echo "$m" >>"$work/mcp.txt"
  for pair in "ask:$a" "mcp:$m"; do
    read -r rps p50 p99 errs <<<"${pair#*:}"
    printf '%-6s %-5s %10.1f %9.2f %9.2f %7d\n' "$round" "${pair%%:*}" "$rps" \
      "$(awk -v x="$p50" 'BEGIN { print x / 1000 }')" \
      "$(awk -v x="$p99" 'BEGIN { print x / 1000 }')" "$errs"
  done
done
ask_rps=$(bench_median 1 <"$work/ask.txt")
mcp_rps=$(bench_median 1 <"$work/mcp.txt")
printf '%-6s %-5s %10.1f %9.2f %9.2f\n' median ask "$ask_rps" \
  "$(bench_median 2 <"$work/ask.txt" | awk '{ print $1 / 1000 }')" \
  "$(bench_median 3 <"$work/ask.txt" | awk '{ print $1 / 1000 }')"
printf '%-6s %-5s %10.1f %9.2f %9.2f\n' median mcp "$mcp_rps" \
  "$(bench_median 2 <"$work/mcp.txt" | awk '{ print $1 / 1000 }')" \
  "$(bench_median 3 <"$work/mcp.txt" | awk '{ print $1 / 1000 }')"
awk -v a="$ask_rps" -v m="$mcp_rps" 'BEGIN { printf "ratio mcp/ask %.2f\n", (a > 0 ? m / a : 0) }'
