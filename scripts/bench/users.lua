-- wrk: GET the URL as the next of the users in $TOKENS_FILE (one access token per line), in turn.
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer " .. tokens[n % #tokens + 1] })
end
