#!/usr/bin/env python3
"""Sends N keep-alive requests, one at a time, on one connection: a fixed amount of work for an instruction count.

usage: requests.py URL N  (TOKEN in the environment is sent as a bearer token)
"""
import http.client, os, sys, time, urllib.parse

url, count = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2])
headers = {"Authorization": "Bearer " + os.environ["TOKEN"]} if os.environ.get("TOKEN") else {}
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
statuses = {}
started = time.monotonic()
for _ in range(count):
    connection.request("GET", url.path, headers=headers)
    response = connection.getresponse()
    response.read()
    statuses[response.status] = statuses.get(response.status, 0) + 1
print(f"requests={count} seconds={time.monotonic() - started:.2f} statuses={statuses}")
