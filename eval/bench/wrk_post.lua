-- wrk script for eval/bench/http.sh: POSTs one JSON body to /ask.
--   BENCH_BODY   the JSON body (default: an out-of-scope question)
--   BENCH_PATH   the path (default /ask)
-- At the end it prints one machine-readable line:
--   BENCH_RESULT rps=<req/s> p50_us=<n> p99_us=<n> requests=<n> non2xx=<n>
--                socket_errors=<n>

wrk.method = "POST"
wrk.path = os.getenv("BENCH_PATH") or "/ask"
wrk.body = os.getenv("BENCH_BODY")
  or '{"question":"What is the weather in Lisbon tomorrow?"}'
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local rps = 0
  if seconds > 0 then rps = summary.requests / seconds end
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT rps=%.1f p50_us=%d p99_us=%d requests=%d non2xx=%d " ..
    "socket_errors=%d\n",
    rps, latency:percentile(50), latency:percentile(99), summary.requests,
    e.status, e.connect + e.read + e.write + e.timeout))
end
