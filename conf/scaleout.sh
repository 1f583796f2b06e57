#!/usr/bin/env bash
# Runs N candor processes on loopback behind HAProxy (conf/haproxy.cfg.in)
# and keeps them in the foreground until Ctrl-C or SIGTERM, which stops them
# all (the balancer finishes its requests, each candor drains its own).
#
#   conf/scaleout.sh [-n N] [--port PORT] [--bind ADDR] [--data-root DIR]
#                    [--config FILE] [--build DIR]
#
#   -n N             candor processes (2)
#   --port PORT      the balancer's port (8080; 0 picks a free one)
#   --bind ADDR      the balancer's address (127.0.0.1); beyond loopback it
#                    needs CANDOR_HTTP_OPERATOR_TOKEN, like candor itself
#   --data-root DIR  process i uses DIR/i as its data directory and writes
#                    its log to DIR/logs/candor-i.log (var/scaleout)
#   --config FILE    passed to every process (`candor serve --config`): the
#                    place for the shared ledger and warehouse settings
#   --build DIR      where build/candor is (./build)
#
# Every CANDOR_* variable of this shell reaches every process (secrets such
# as CANDOR_LLM_API_KEY, CANDOR_LEDGER_POSTGRES_DSN). The processes listen on
# free loopback ports. Prints "candor: http://ADDR:PORT (N processes ...)"
# once the balancer answers. See docs/scaleout.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
n=2
port=8080
bind=127.0.0.1
data_root=var/scaleout
config=
build=$root/build
start_timeout=${SCALEOUT_START_TIMEOUT:-120}

die() { echo "scaleout: $*" >&2; exit 2; }
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while (($#)); do
  case $1 in
    -n) n=${2:?}; shift 2 ;;
    --port) port=${2:?}; shift 2 ;;
    --bind) bind=${2:?}; shift 2 ;;
    --data-root) data_root=${2:?}; shift 2 ;;
    --config) config=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "scaleout: unknown argument $1" >&2; usage ;;
  esac
done
[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n must be a positive integer"
if ! [[ $port =~ ^[0-9]+$ ]] || ((port > 65535)); then die "--port must be 0-65535"; fi
candor=$build/candor
[[ -x $candor ]] || die "$candor not found (build it first: conf/setup.sh)"
[[ -z $config || -f $config ]] || die "--config $config is not a file"
haproxy=$(command -v haproxy || true)
[[ -z $haproxy && -x /usr/sbin/haproxy ]] && haproxy=/usr/sbin/haproxy
[[ -n $haproxy ]] || die "haproxy is not installed (apt-get install haproxy; see conf/packages.txt)"
command -v curl >/dev/null || die "curl is not installed"
case $bind in
  127.*|::1) ;;
  *) [[ -n ${CANDOR_HTTP_OPERATOR_TOKEN:-} ]] ||
       die "--bind $bind is beyond loopback: set CANDOR_HTTP_OPERATOR_TOKEN" \
           "(candor then asks for it on /stats, /metrics and /runs)" ;;
esac

mkdir -p "$data_root/logs"
run=$(mktemp -d "${TMPDIR:-/tmp}/candor-scaleout.XXXXXX")
pids=()          # every candor, then haproxy
lb_pid=
stopping=0
cleanup() {
  local pid
  stopping=1
  trap - INT TERM
  # SIGUSR1: HAProxy stops listening and finishes the requests it holds;
  # SIGTERM: each candor drains (docs/operations.md#shutdown).
  if [[ -n $lb_pid ]]; then kill -USR1 "$lb_pid" 2>/dev/null || true; fi
  for pid in "${pids[@]}"; do
    [[ $pid == "$lb_pid" ]] || kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    # 10 s to stop on its own, then forced
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$run"
}
trap cleanup EXIT
trap 'echo "scaleout: stopping" >&2; exit 0' INT TERM

# A free loopback port: nobody accepts a connection on it (checked again
# when HAProxy binds it).
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  return 1
}

# -- the candor processes --------------------------------------------------------
args=()
[[ -n $config ]] && args+=(--config "$config")
# Each child runs in a session of its own (setsid execs in place: a
# background job of a script is no group leader, so $! stays its pid): a
# Ctrl-C at the terminal reaches this script only, which then stops them
# once; a second signal would cut candor's drain short.
for ((i = 1; i <= n; ++i)); do
  mkdir -p "$data_root/$i"
  log=$data_root/logs/candor-$i.log
  [[ -f $log ]] && mv -f "$log" "$log.prev"
  setsid "$candor" serve --data-dir "$data_root/$i" --port 0 "${args[@]}" \
    </dev/null 2>"$log" &
  pids+=($!)
done
ports=()
deadline=$((SECONDS + start_timeout))
for ((i = 1; i <= n; ++i)); do
  log=$data_root/logs/candor-$i.log
  p=
  while [[ -z $p ]]; do
    kill -0 "${pids[i - 1]}" 2>/dev/null ||
      { tail -n 20 "$log" >&2; die "candor $i exited before listening (log: $log)"; }
    ((SECONDS < deadline)) ||
      { tail -n 20 "$log" >&2; die "candor $i did not listen within ${start_timeout}s"; }
    p=$(grep '"event":"listening"' "$log" | grep -oE '"port":[0-9]+' |
          head -n1 | grep -oE '[0-9]+$' || true)
    [[ -n $p ]] || sleep 0.1
  done
  ports+=("$p")
done

# -- the balancer ----------------------------------------------------------------
if ((port == 0)); then
  port=$(free_port) || die "no free port found for the balancer"
fi
servers=
for ((i = 1; i <= n; ++i)); do
  servers+="    server candor$i 127.0.0.1:${ports[i - 1]}"$'\n'
done
# Placeholders are replaced outside comments; @SERVERS@ is a line of its own.
awk -v bind="$bind" -v port="$port" -v servers="${servers%$'\n'}" '
  /^[[:space:]]*#/ { print; next }
  $0 == "@SERVERS@" { print servers; next }
  { gsub(/@BIND@/, bind); gsub(/@PORT@/, port); print }
' "$here/haproxy.cfg.in" >"$run/haproxy.cfg"
lb_log=$data_root/logs/haproxy.log
"$haproxy" -c -q -f "$run/haproxy.cfg" >&2 || die "invalid HAProxy configuration ($run/haproxy.cfg)"
setsid "$haproxy" -db -f "$run/haproxy.cfg" </dev/null 2>"$lb_log" &
lb_pid=$!
pids+=("$lb_pid")

# Ready when a request through the balancer is answered (each process was
# seen listening above; HAProxy counts its servers up until checks fail).
host=$bind
[[ $host == *:* ]] && host="[$host]"
url="http://$host:$port"
until curl -fs -o /dev/null --max-time 2 "$url/health"; do
  kill -0 "$lb_pid" 2>/dev/null ||
    { tail -n 20 "$lb_log" >&2; die "haproxy exited (log: $lb_log)"; }
  ((SECONDS < deadline)) || die "the balancer did not answer on $url (log: $lb_log)"
  sleep 0.2
done

echo "candor: $url ($n processes: pids ${pids[*]:0:n}, ports ${ports[*]}; logs in $data_root/logs)"

# -- until a signal ---------------------------------------------------------------
# A candor that dies is routed around (and said); the balancer dying ends it.
alive=("${pids[@]:0:n}")
while :; do
  wait -n "${pids[@]}" 2>/dev/null || true
  ((stopping)) && exit 0
  if ! kill -0 "$lb_pid" 2>/dev/null; then
    tail -n 20 "$lb_log" >&2
    echo "scaleout: haproxy exited; stopping everything" >&2
    exit 1
  fi
  still=()
  for pid in "${alive[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then still+=("$pid"); else
      echo "scaleout: candor pid $pid exited; the balancer routes around it" >&2
    fi
  done
  alive=("${still[@]}")
  if ((${#alive[@]} == 0)); then
    echo "scaleout: every candor process exited; stopping" >&2
    exit 1
  fi
  # wait -n returns at once for a child already reaped: only live ones.
  pids=("${alive[@]}" "$lb_pid")
done
