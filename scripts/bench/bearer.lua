-- wrk: send the access token from $TOKEN on every request.
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
