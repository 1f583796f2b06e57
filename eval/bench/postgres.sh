#!/usr/bin/env bash
# The data route on the PostgreSQL warehouse beside the SQLite one: POST
# /ask throughput of the local provider's planned data question
# (eval/bench/targets.sh: data_local) on `sql.backend: sqlite` and on
# `sql.backend: postgres`, one candor process each, the same data.
#
#   eval/bench/postgres.sh [BUILD_DIR]        (default ./build)
#
# Starts a throw-away PostgreSQL 15 cluster in a temporary directory (Unix
# socket only; as root the server runs as `postgres`), loads it with
# `candor seed --backend postgres`, starts both servers (llm.provider local,
# 2 executors / 2 connections each) and runs `wrk -tT -cC -dSs --latency`
# with eval/bench/wrk_post.lua against each in turn, BENCH_ROUNDS rounds.
# Prints the median requests/s, P50 and P99 of each and the ratio to
# SQLite. Reports, judges nothing. Everything it started is stopped and
# removed on exit.
#
# Environment: BENCH_SECONDS (5), BENCH_CONNECTIONS (16), BENCH_THREADS (2),
# BENCH_ROUNDS (3), PG_BINDIR (/usr/lib/postgresql/15/bin).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-./build}
secs=${BENCH_SECONDS:-5}
conns=${BENCH_CONNECTIONS:-16}
threads=${BENCH_THREADS:-2}
rounds=${BENCH_ROUNDS:-3}
bindir=${PG_BINDIR:-/usr/lib/postgresql/15/bin}

# shellcheck source=eval/bench/targets.sh
source "$here/targets.sh"

die() { echo "bench_postgres: $*" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
[[ -x $bindir/initdb ]] || die "no PostgreSQL server in $bindir (apt-get install postgresql-15)"
[[ -x $build/candor ]] || die "$build/candor not found (build it first)"
build=$(cd "$build" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/candor-bench-pg.XXXXXX")
chmod 755 "$work"
as_pg=()
if [[ $(id -u) == 0 ]]; then
  as_pg=(runuser -u postgres --)
  mkdir "$work/pg" && chown postgres "$work/pg"
else
  mkdir "$work/pg"
fi
servers=()
cleanup() {
  local pid
  for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
  "${as_pg[@]}" "$bindir/pg_ctl" -D "$work/pg/data" -m immediate stop \
    >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"${as_pg[@]}" "$bindir/initdb" -D "$work/pg/data" -U candor_admin \
  --auth=trust -E UTF8 --locale=C.UTF-8 >"$work/initdb.log" 2>&1 ||
  { cat "$work/initdb.log" >&2; die "initdb failed"; }
"${as_pg[@]}" "$bindir/pg_ctl" -D "$work/pg/data" -w -l "$work/pg/log" \
  -o "-c listen_addresses='' -k $work/pg" start >/dev/null ||
  die "the cluster did not start"
admin="host=$work/pg dbname=postgres user=candor_admin"
reader="host=$work/pg dbname=postgres user=candor_reader"
CANDOR_SQL_POSTGRES_DSN=$admin "$build/candor" seed --backend postgres \
  --data-dir "$work/data" >"$work/seed.log" 2>&1 ||
  { tail -n 20 "$work/seed.log" >&2; die "seed failed"; }

# start NAME ENV...: a local-provider server on a free port; prints the port.
start() {
  local name=$1; shift
  env CANDOR_LLM_PROVIDER=local "$@" "$build/candor" serve \
    --data-dir "$work/data" --port 0 >"$work/$name.out" 2>"$work/$name.log" &
  servers+=($!)
}
port_of() {
  local log=$1 p=""
  for _ in $(seq 600); do
    p=$(grep '"event":"listening"' "$log" 2>/dev/null | grep -oE '"port":[0-9]+' |
          head -n1 | cut -d: -f2 || true)
    [[ -n $p ]] && { echo "$p"; return 0; }
    sleep 0.1
  done
  tail -n 20 "$log" >&2
  return 1
}
# One after the other: the first builds the retrieval index they share.
start sqlite
sqlite_port=$(port_of "$work/sqlite.log") || die "the SQLite server did not start"
start postgres CANDOR_SQL_BACKEND=postgres CANDOR_SQL_POSTGRES_DSN="$reader"
pg_port=$(port_of "$work/postgres.log") || die "the PostgreSQL server did not start"

body=${bench_body[data_local]}
for port in "$sqlite_port" "$pg_port"; do
  answer=$(curl -s -H 'Content-Type: application/json' --data "$body" \
             "http://127.0.0.1:$port/ask")
  grep -q '"status":"answered"' <<<"$answer" ||
    die "port $port did not answer the data question: ${answer:0:300}"
done

run_wrk() {
  bench_wrk "http://127.0.0.1:$1/ask" "$body" "$threads" "$conns" "$secs" \
    "$here/wrk_post.lua" || die "wrk failed"
}

echo "data_local on both warehouses: wrk -t$threads -c$conns -d${secs}s" \
     "--latency (loopback), $rounds round(s), $(nproc) CPU(s)"
declare -A samples
for ((round = 1; round <= rounds; ++round)); do
  for name in sqlite postgres; do
    port=$sqlite_port
    [[ $name == postgres ]] && port=$pg_port
    samples[$name]+="$(run_wrk "$port")"$'\n'
  done
done
base=$(bench_median 1 <<<"${samples[sqlite]}")
printf '%-10s %12s %9s %9s %10s %7s\n' backend 'requests/s' 'P50 ms' 'P99 ms' \
  'vs sqlite' errors
for name in sqlite postgres; do
  s=${samples[$name]}
  awk -v n="$name" -v r="$(bench_median 1 <<<"$s")" -v b="$base" \
      -v p50="$(bench_median 2 <<<"$s")" -v p99="$(bench_median 3 <<<"$s")" \
      -v e="$(awk '{ s += $4 } END { print s + 0 }' <<<"$s")" \
      'BEGIN { printf "%-10s %12.1f %9.2f %9.2f %10.2f %7d\n",
               n, r, p50 / 1000, p99 / 1000, (b > 0 ? r / b : 0), e }'
done
