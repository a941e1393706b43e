-- wrk: Lucky Day cookie breaks (POST /v1/fortunes/today/break), each by the next of the users in $TOKENS_FILE (one
-- access token per line, every user with a fortune made ahead), each user once: a second break of the day would be
-- a 409, not a break. When the answers leave only $CONNECTIONS users, the thread stops (so no request repeats a
-- user; the requests still in flight then are not counted) and interrupts wrk, as Ctrl-C would, so that its
-- requests per second count the time the breaks took rather than the whole -d.
local ffi = require("ffi")
ffi.cdef [[ int kill(int pid, int sig); int getpid(void); ]]
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local inflight = tonumber(os.getenv("CONNECTIONS") or "64")
local sent, answered = 0, 0
request = function()
  sent = sent + 1
  return wrk.format("POST", nil, { ["Authorization"] = "Bearer " .. tokens[math.min(sent, #tokens)] })
end
response = function(status, headers, body)
  answered = answered + 1
  if answered == #tokens - inflight then
    wrk.thread:stop()
    ffi.C.kill(ffi.C.getpid(), 2)
  end
end
