-- wrk script for eval/bench/mcp.sh: POSTs one JSON-RPC tools/call of the
-- `ask` tool to /mcp in an MCP session opened beforehand.
--   BENCH_BODY     the JSON-RPC body
--   BENCH_SESSION  the Mcp-Session-Id
--   BENCH_VERSION  the MCP-Protocol-Version (default 2025-11-25)
-- At the end it prints the same line as wrk_post.lua:
--   BENCH_RESULT rps=<req/s> p50_us=<n> p99_us=<n> requests=<n> non2xx=<n>
--                socket_errors=<n>

wrk.method = "POST"
wrk.path = "/mcp"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = os.getenv("BENCH_SESSION")
wrk.headers["MCP-Protocol-Version"] = os.getenv("BENCH_VERSION") or "2025-11-25"

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
