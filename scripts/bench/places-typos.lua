-- wrk: place searches that need the similarity stage (typos and other spellings: no name starts with them).
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
local queries = {"Kiev", "Lvov", "Kharkiw", "Zaporizhzhia", "Oddesa", "Mykolajiw", "Londn", "Pariss", "Tokio", "Warszawa"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", wrk.path .. "?limit=10&q=" .. queries[(i % #queries) + 1])
end
