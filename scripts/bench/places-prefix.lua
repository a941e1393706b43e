-- wrk: place autocomplete as people type a name that exists (prefixes, whole names; no typos), with $TOKEN.
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
local queries = {"Ky", "Kyi", "Kyiv", "Lv", "Lviv", "Ode", "Odesa", "Khar", "Kharkiv", "Dnipro", "Lon", "London",
  "Par", "Paris", "New%20Y", "Tok", "Tokyo", "Sao%20P", "Berl", "Warsaw", "%D0%9A%D0%B8%D1%97%D0%B2&lang=uk"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", wrk.path .. "?limit=10&q=" .. queries[(i % #queries) + 1])
end
