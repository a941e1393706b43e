-- wrk: POST a natal chart request (the spec's Kyiv scenario) with the access token from $TOKEN.
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"date":"1990-04-15","time":"14:30","place":{"latitude":50.4501,"longitude":30.5234,"timeZone":"Europe/Kyiv"}}'
