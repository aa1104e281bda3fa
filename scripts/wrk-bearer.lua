-- wrk script: every request carries the Bearer token from the TOKEN environment variable.
-- Usage: TOKEN=... wrk -s scripts/wrk-bearer.lua --latency http://127.0.0.1:PORT/v1/users/USR-...
local token = os.getenv("TOKEN")
if not token or token == "" then
  error("set TOKEN to a JWT")
end
wrk.headers["Authorization"] = "Bearer " .. token

local statuses = {}

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  io.write(string.format("p50 %.2f ms  p99 %.2f ms  p99.9 %.2f ms  max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000))
  io.write(string.format("non-2xx or socket errors: %d\n",
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
