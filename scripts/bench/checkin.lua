-- wrk: RoastMeLater check-ins (POST /v1/gamification/check-ins), each by the next of the users in $TOKENS_FILE (one
-- access token per line) with a new Idempotency-Key, in turn through zones on both sides of the date line. Every
-- request is a conditional write of the user's streak row and its check-in (the first of a user's day counts it; the
-- rest are the same day again, still written: the key and its answer are kept).
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local zones = { "Asia/Ho_Chi_Minh", "America/Los_Angeles", "Europe/Kyiv", "Pacific/Auckland" }
local run = tostring(os.time()) .. "-" .. tostring(math.random(1000000))
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"timeZone":"%s"}', zones[math.floor(n / #tokens) % #zones + 1])
  return wrk.format("POST", nil, { ["Authorization"] = "Bearer " .. tokens[n % #tokens + 1], ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = run .. "-" .. n }, body)
end
