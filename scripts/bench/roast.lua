-- wrk: RoastMeLater roasts, each request by the next of the users in $TOKENS_FILE (one access token per line), in
-- turn through the categories, spice levels and both languages. Every request writes a roast (row, event, text).
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local categories = { "meetings", "deadlines", "email", "coworkers", "boss", "remote", "tech", "office" }
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"category":"%s","spice":%d,"language":"%s","timeZone":"Asia/Ho_Chi_Minh"}',
    categories[n % #categories + 1], n % 5 + 1, (n % 2 == 0) and "en" or "vi")
  return wrk.format("POST", nil, { ["Authorization"] = "Bearer " .. tokens[n % #tokens + 1], ["Content-Type"] = "application/json" }, body)
end
