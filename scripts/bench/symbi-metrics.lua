-- wrk: Symbi metrics uploads (POST /v1/symbi/metrics), each by the next of the users in $TOKENS_FILE (one access
-- token per line), as a phone syncs HealthKit through the day: today's steps growing with each sync (so the pet's
-- state changes now and then, not at every upload), last night's sleep and the day's HRV. Each is one read of the
-- pet and one conditional write of the raw row (the newest reading of the day wins), the day and the pet; a change
-- of state also queues its frame and silent push.
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local n = 0
request = function()
  n = n + 1
  local user = n % #tokens + 1
  local syncs = math.floor(n / #tokens)
  local body = string.format('{"timeZone":"UTC","days":[{"date":"%s","source":"healthkit","steps":%d,"sleepHours":%.1f,"hrvMs":%d}]}',
    os.date("!%Y-%m-%d"), (user * 37) % 3000 + syncs * 40, 5 + (user % 8) * 0.5, 30 + user % 40)
  return wrk.format("POST", nil, { ["Authorization"] = "Bearer " .. tokens[user], ["Content-Type"] = "application/json" }, body)
end
