-- wrk: place autocomplete queries as people type them (prefixes, typos, other spellings), with $TOKEN.
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
local queries = {"Ky", "Kyi", "Kyiv", "Kiev", "Lviv", "Lvov", "Odesa", "Odessa", "Kharkiw", "Dnipro", "Lon", "London",
  "Par", "Paris", "New%20Y", "Tokyo", "Sao%20Paulo", "Zaporizhzhia", "Berl", "Warszawa", "%D0%9A%D0%B8%D1%97%D0%B2&lang=uk"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", wrk.path .. "?limit=10&q=" .. queries[(i % #queries) + 1])
end
