#!/usr/bin/env bash
# HTTP benchmark: candor's POST /ask against a minimal Beast server.
#
#   eval/bench/http.sh [BUILD_DIR]        (default ./build)
#
# Expects BUILD_DIR/candor-baseline and BUILD_DIR/candor (builds nothing).
# Starts both on loopback (free ports, temp data dir, stderr to temp files),
# runs `wrk -t2 -c64 -d10s --latency` with eval/bench/wrk_post.lua against:
#   baseline   the fixed-answer Beast server (the floor),
#   injection  candor, a question the input rules block,
#   oos        candor, an out-of-scope question (a scripted fixture),
#   docs       candor, a documents question answered with a citation (router
#              and rag_answer fixtures; retrieval, threshold and citation
#              check run for real),
#   docs_local a second candor on the local provider (no model, no
#              fixture): the same documents question routed and answered by
#              its router and extractive answerer,
#   data       candor, an answered data question (scripted router, SQL and
#              answer; the static policy, the validation connection and the
#              sandbox run for real on a small query),
#   data_local the local-provider candor on a data question its planner
#              answers (router, planner, policy, validation connection,
#              sandboxed executor and wording all for real),
# prints requests/s, P50, P99 and the ratio to the baseline, and checks the
# targets with PASS/MISS per line: ratio >= 0.35 and P99 <= 10 ms for the
# injection and out-of-scope paths (issue #2), ratio >= 0.25 for documents
# (issue #4 sets it no P99: shown, not judged), ratio >= 0.30 for
# docs_local (no P99 target either), P99 <= 10 ms for the
# baseline itself (when even the bare server misses it, the machine was too
# busy for the run to judge candor's P99, and a note says so); the data
# route has no target (neither ratio nor P99) and shows "-", or ERRORS when
# some of its requests failed (which fails the run); data_local: ratio >=
# 0.20 and P99 <= 20 ms (the planner issue, item 7).
#
# Environment:
#   BENCH_SECONDS      duration of each run (5)
#   BENCH_CONNECTIONS  wrk connections (64)
#   BENCH_THREADS      wrk threads (2)
#   BENCH_MIN_RATIO    target ratio to baseline (0.35)
#   BENCH_DOCS_MIN_RATIO  target ratio of the docs route (0.25)
#   BENCH_LOCAL_DOCS_MIN_RATIO  target ratio of docs_local (0.30)
#   BENCH_MAX_P99_MS   target P99 in ms (10)
#   BENCH_LOCAL_DATA_MIN_RATIO, BENCH_LOCAL_DATA_MAX_P99_MS  data_local's
#                      targets (0.20, 20)
#   BENCH_ONLY         "baseline" to benchmark the baseline alone
#   BENCH_STRICT       1: exit 1 when a target is missed (default 0)
#   BENCH_START_TIMEOUT seconds to wait for a server to listen (60)
#   BENCH_ROUNDS       rounds of (baseline, then every candor target); with
#                      more than one, each round is printed, the verdict
#                      uses the median over rounds of each figure, and a
#                      note says when the baseline's requests/s spread more
#                      than 20 % between rounds (a busy machine) (3: on a
#                      shared VM one run moves by ±20-30 %, a median of
#                      three much less)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-./build}
secs=${BENCH_SECONDS:-5}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-2}
min_ratio=${BENCH_MIN_RATIO:-0.35}
docs_min_ratio=${BENCH_DOCS_MIN_RATIO:-0.25}
local_docs_min_ratio=${BENCH_LOCAL_DOCS_MIN_RATIO:-0.30}
max_p99_ms=${BENCH_MAX_P99_MS:-10}
local_data_min_ratio=${BENCH_LOCAL_DATA_MIN_RATIO:-0.20}
local_data_max_p99_ms=${BENCH_LOCAL_DATA_MAX_P99_MS:-20}
only=${BENCH_ONLY:-}
strict=${BENCH_STRICT:-0}
start_timeout=${BENCH_START_TIMEOUT:-60}
rounds=${BENCH_ROUNDS:-3}

# shellcheck source=eval/bench/targets.sh
source "$here/targets.sh"
injection=${bench_body[injection]}
oos=${bench_body[oos]}
data=${bench_body[data]}
data_local=${bench_body[data_local]}
docs=${bench_body[docs]}

die() { echo "bench_http: $*" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer"

command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
command -v curl >/dev/null || die "curl is not installed"
[[ -x $build/candor-baseline ]] || die "$build/candor-baseline not found (build it first)"
if [[ $only != baseline ]]; then
  [[ -x $build/candor ]] || die "$build/candor not found (build it first)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/candor-bench.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    # give a graceful stop 5 s, then force
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_port PID LOGFILE REGEX: prints the port once LOGFILE shows it.
wait_port() {
  local pid=$1 log=$2 regex=$3 port=""
  local deadline=$((SECONDS + start_timeout))
  while ((SECONDS < deadline)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "bench_http: server exited before listening; its stderr:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    port=$(grep -oE "$regex" "$log" | head -n1 | grep -oE '[0-9]+$' || true)
    if [[ -n $port ]]; then
      echo "$port"
      return 0
    fi
    sleep 0.1
  done
  echo "bench_http: no listening port after ${start_timeout}s; stderr:" >&2
  tail -n 20 "$log" >&2
  return 1
}

# run_wrk NAME PORT BODY: prints "rps p50_us p99_us non2xx socket_errors".
run_wrk() {
  local name=$1 port=$2 body=$3 out
  out=$(BENCH_BODY=$body wrk -t"$threads" -c"$conns" -d"${secs}s" --latency \
          -s "$here/wrk_post.lua" "http://127.0.0.1:$port/ask" 2>&1) ||
    die "wrk failed for $name: $out"
  echo "$out" > "$work/wrk-$name.txt"
  local line
  line=$(grep '^BENCH_RESULT' <<<"$out") || die "no result from wrk for $name"
  local rps p50 p99 non2xx serr
  rps=$(grep -oE 'rps=[0-9.]+' <<<"$line" | cut -d= -f2)
  p50=$(grep -oE 'p50_us=[0-9]+' <<<"$line" | cut -d= -f2)
  p99=$(grep -oE 'p99_us=[0-9]+' <<<"$line" | cut -d= -f2)
  non2xx=$(grep -oE 'non2xx=[0-9]+' <<<"$line" | cut -d= -f2)
  serr=$(grep -oE 'socket_errors=[0-9]+' <<<"$line" | cut -d= -f2)
  echo "$rps $p50 $p99 $non2xx $serr"
}

# -- start the servers ---------------------------------------------------------
"$build/candor-baseline" --port 0 2>"$work/baseline.err" &
pids+=($!)
base_port=$(wait_port "${pids[-1]}" "$work/baseline.err" '127\.0\.0\.1:[0-9]+') ||
  die "the baseline did not start"

if [[ $only != baseline ]]; then
  mkdir -p "$work/data" "$work/data-local"
  # The scripted provider for the targets that issues #2-#4 measure with
  # recorded fixtures; the local provider (the default with no endpoint)
  # for docs_local.
  CANDOR_LLM_PROVIDER=fake "$build/candor" serve --data-dir "$work/data" \
    --port 0 2>"$work/candor.err" &
  pids+=($!)
  candor_port=$(wait_port "${pids[-1]}" "$work/candor.err" '"port":[0-9]+') ||
    die "candor did not start"
  CANDOR_LLM_PROVIDER=local "$build/candor" serve --data-dir "$work/data-local" \
    --port 0 2>"$work/candor-local.err" &
  pids+=($!)
  local_port=$(wait_port "${pids[-1]}" "$work/candor-local.err" '"port":[0-9]+') ||
    die "candor (local provider) did not start"
  # Both local targets must be answered before they are measured.
  for body in "$docs" "$data_local"; do
    code=$(curl -s -o "$work/probe.json" -w '%{http_code}' \
             -H 'Content-Type: application/json' --data "$body" \
             "http://127.0.0.1:$local_port/ask") || code=000
    if [[ $code != 200 ]] || ! grep -q '"status":"answered"' "$work/probe.json"; then
      echo "bench_http: the local provider did not answer $body ($code):" >&2
      head -c 400 "$work/probe.json" >&2; echo >&2
      die "fix candor before benchmarking it"
    fi
  done
  # Sanity: each scenario answers 200 before it is measured.
  for body in "$injection" "$oos" "$docs"; do
    code=$(curl -s -o "$work/probe.json" -w '%{http_code}' \
             -H 'Content-Type: application/json' --data "$body" \
             "http://127.0.0.1:$candor_port/ask") || code=000
    if [[ $code != 200 ]]; then
      echo "bench_http: candor answered $code to $body:" >&2
      head -c 400 "$work/probe.json" >&2; echo >&2
      die "fix candor before benchmarking it"
    fi
  done
  # The data target is measured only when it is answered (a build without
  # the SQL sandbox answers it with an error, which would measure nothing).
  data_ok=0
  code=$(curl -s -o "$work/probe.json" -w '%{http_code}' \
           -H 'Content-Type: application/json' --data "$data" \
           "http://127.0.0.1:$candor_port/ask") || code=000
  if [[ $code == 200 ]] && grep -q '"status":"answered"' "$work/probe.json"
  then
    data_ok=1
  else
    echo "bench_http: the data question was not answered ($code), skipping" \
         "the data target:" >&2
    head -c 400 "$work/probe.json" >&2; echo >&2
  fi
fi

# -- measure -------------------------------------------------------------------
# Each round measures the baseline and then every candor target, so that a
# round's ratios compare runs taken within a minute of each other; with
# several rounds the verdict uses the median over rounds of each figure
# (requests/s, P50, P99 and the per-round ratio), which a short burst of
# other work on the machine moves much less than a single run.
echo "wrk -t$threads -c$conns -d${secs}s --latency (loopback), $rounds round(s), targets:" \
     "ratio >= $min_ratio and P99 <= ${max_p99_ms} ms (docs: ratio >= $docs_min_ratio," \
     "docs_local: ratio >= $local_docs_min_ratio; data_local: ratio >=" \
     "$local_data_min_ratio and P99 <= ${local_data_max_p99_ms} ms)"
names=(baseline)
if [[ $only != baseline ]]; then
  names+=(candor/injection candor/out_of_scope candor/docs candor/docs_local)
  ((data_ok)) && names+=(candor/data)
  names+=(candor/data_local)
fi
declare -A body_of=([candor/injection]=$injection [candor/out_of_scope]=$oos
                    [candor/docs]=$docs [candor/data]=$data
                    [candor/docs_local]=$docs [candor/data_local]=$data_local)
declare -A samples  # name -> lines "rps p50 p99 ratio errors"
for ((round = 1; round <= rounds; ++round)); do
  read -r b_rps b_p50 b_p99 b_non b_err < <(run_wrk baseline "$base_port" "$oos")
  [[ $b_non == 0 && $b_err == 0 ]] ||
    echo "bench_http: baseline had $b_non non-2xx responses and $b_err socket errors" >&2
  samples[baseline]+="$b_rps $b_p50 $b_p99 1 $((b_non + b_err))"$'\n'
  for name in "${names[@]:1}"; do
    port=$candor_port
    [[ $name == candor/docs_local || $name == candor/data_local ]] &&
      port=$local_port
    read -r rps p50 p99 non serr < <(run_wrk "${name#candor/}" "$port" "${body_of[$name]}")
    ratio=$(awk -v r="$rps" -v b="$b_rps" 'BEGIN { printf "%.4f", (b > 0 ? r / b : 0) }')
    samples[$name]+="$rps $p50 $p99 $ratio $((non + serr))"$'\n'
  done
  if ((rounds > 1)); then
    line="round $round:"
    for name in "${names[@]}"; do
      last=$(printf '%s' "${samples[$name]}" | tail -n1)
      read -r rps _ p99 ratio _ <<<"$last"
      line+=$(awk -v n="${name#candor/}" -v r="$rps" -v p="$p99" -v q="$ratio" \
                'BEGIN { printf "  %s %.0f/s P99 %.1f ms (%.2f)", n, r, p / 1000, q }')
    done
    echo "$line"
  fi
done

# median of column $1 of the sample lines on stdin (mawk has no asort)
median() {
  awk -v c="$1" 'NF { print $c }' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print 0; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2
  }'
}

missed=0
((rounds > 1)) && echo "median over $rounds rounds:"
printf '%-22s %12s %9s %9s %7s %7s  %s\n' target 'requests/s' 'P50 ms' \
  'P99 ms' ratio errors check
for name in "${names[@]}"; do
  data_lines=$(printf '%s' "${samples[$name]}")
  rps=$(median 1 <<<"$data_lines")
  p50=$(median 2 <<<"$data_lines")
  p99=$(median 3 <<<"$data_lines")
  ratio=$(median 4 <<<"$data_lines")
  errs=$(awk '{ s += $5 } END { print s + 0 }' <<<"$data_lines")
  check=$(awk -v ratio="$ratio" -v p99="$p99" -v min="$min_ratio" \
              -v max="$max_p99_ms" -v errs="$errs" -v dmin="$docs_min_ratio" \
              -v lmin="$local_docs_min_ratio" -v name="$name" \
              -v ldmin="$local_data_min_ratio" -v ldmax="$local_data_max_p99_ms" 'BEGIN {
    # The documents route has a ratio target only (issue #4, item 10);
    # its P99 is reported, not judged.
    if (name == "candor/docs") {
      print (errs == 0 && ratio >= dmin) ? "PASS" : "MISS"
      exit
    }
    # The local provider'"'"'s documents route: a ratio target only (the
    # local provider issue, item 7).
    if (name == "candor/docs_local") {
      print (errs == 0 && ratio >= lmin) ? "PASS" : "MISS"
      exit
    }
    # The local provider'"'"'s data route (the planner issue, item 7).
    if (name == "candor/data_local") {
      print (errs == 0 && ratio >= ldmin && p99 / 1000.0 <= ldmax) ? "PASS" : "MISS"
      exit
    }
    ok = (p99 / 1000.0 <= max) && errs == 0
    if (name != "baseline") ok = ok && ratio >= min
    # The data route has no throughput target (issue #3 asks for its
    # figures only): it is reported, not judged, unless it has errors.
    if (name == "candor/data") { print errs == 0 ? "-" : "ERRORS"; exit }
    print ok ? "PASS" : "MISS"
  }')
  [[ $check == PASS || $check == - ]] || missed=1
  [[ $name == baseline ]] && baseline_check=$check
  printf '%-22s %12.1f %9.2f %9.2f %7.2f %7d  %s\n' "$name" "$rps" \
    "$(awk -v x="$p50" 'BEGIN{print x/1000}')" \
    "$(awk -v x="$p99" 'BEGIN{print x/1000}')" "$ratio" "$errs" "$check"
done

# The baseline does the same work in every round: when its requests/s
# spread widely, other work on the machine slowed parts of the run (on a
# shared VM, often without showing as steal time). Said, not judged.
if ((rounds > 1)); then
  printf '%s' "${samples[baseline]}" | awk 'NF {
      if (n == 0 || $1 < lo) lo = $1
      if (n == 0 || $1 > hi) hi = $1
      n++
    } END {
      if (n > 1 && hi > 0 && (hi - lo) / hi > 0.2)
        printf "note: the baseline ranged from %.0f to %.0f requests/s over the rounds (%.0f %% apart): other work on the machine slowed this run; compare runs on a quiet machine\n", lo, hi, 100 * (hi - lo) / hi
    }'
fi

if [[ ${baseline_check:-PASS} != PASS ]]; then
  echo "note: the baseline itself missed P99 <= ${max_p99_ms} ms: the machine" \
       "was too busy for this run to judge candor's P99"
fi

if ((missed)); then
  echo "some targets were missed (BENCH_STRICT=1 makes that exit 1)"
  ((strict)) && exit 1
fi
exit 0
