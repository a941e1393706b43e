-- wrk: Symbi metrics uploads (POST /v1/symbi/metrics), each by the next of the users in $TOKENS_FILE (one access
-- token per line): today's steps, sleep and HRV from HealthKit, as a phone syncs them through the day. Each is a write
-- of the raw row (the newest reading of the day wins), the day's descriptors and state, and the pet's row; a change
-- of state also queues its frame and silent push.
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"timeZone":"UTC","days":[{"date":"%s","source":"healthkit","steps":%d,"sleepHours":%.1f,"hrvMs":%d}]}',
    os.date("!%Y-%m-%d"), math.random(0, 16000), 5 + math.random() * 4, math.random(25, 80))
  return wrk.format("POST", nil, { ["Authorization"] = "Bearer " .. tokens[n % #tokens + 1], ["Content-Type"] = "application/json" }, body)
end
