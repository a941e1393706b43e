#!/usr/bin/env python3
"""The development kit of the local stack (`make up`): `make token`, `make demo`, `make status`.

Standard library only, so it runs on a fresh machine. Everything goes through the gateway, as an app would;
sign-in with Google or Apple goes through the development identity provider (Tools/DevIdentity).

  dev.py token [--app pairly] [--name Ada] [--provider google|apple]
  dev.py demo
  dev.py status
  dev.py time-travel [--days 1] [--hours 0] [--seconds 0]   (no amount: print the stack's time)
"""
import argparse
import base64
import json
import os
import re
import socket
import struct
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = os.environ.get("LANTERN_STATE_DIR", os.path.join(ROOT, ".lantern"))
HOST = "127.0.0.1"
GATEWAY = os.environ.get("LANTERN_GATEWAY", f"http://{HOST}:8080")
# The gateway's operations port (time travel lives there, never on the public port).
GATEWAY_OPS = os.environ.get("LANTERN_GATEWAY_OPS", f"http://{HOST}:{int(GATEWAY.rsplit(':', 1)[1]) + 1000}")
DEV_IDENTITY = os.environ.get("LANTERN_DEV_IDENTITY", f"http://{HOST}:{os.environ.get('LANTERN_DEV_IDENTITY_PORT', '8089')}")


class Failed(Exception):
    pass


def call(method, url, body=None, token=None, content_type="application/json", headers=None, timeout=30):
    """One HTTP request; returns (status, headers, bytes). Never raises for an HTTP status."""
    data = None
    request_headers = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        request_headers["Content-Type"] = content_type
    if token:
        request_headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=request_headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()
    except (urllib.error.URLError, ConnectionError, socket.timeout) as error:
        raise Failed(f"{method} {url}: {getattr(error, 'reason', error)} (is the stack up? make up)")


def api(method, path, body=None, token=None, expect=(200, 201), **kwargs):
    status, headers, raw = call(method, GATEWAY + path, body, token, **kwargs)
    if status not in expect:
        raise Failed(f"{method} {path} answered {status}: {raw.decode(errors='replace')[:400]}")
    return status, headers, raw


def as_json(raw):
    return json.loads(raw) if raw else None


# --- sign-in -----------------------------------------------------------------------------------------------

def mint(name, app, provider):
    status, _, raw = call("POST", DEV_IDENTITY + "/token", {"name": name, "app": app, "provider": provider})
    if status != 200:
        raise Failed(f"the development identity provider answered {status}: {raw.decode(errors='replace')}")
    return as_json(raw)


def provider_sign_in(name, app, provider):
    """Signs `name` in through the gateway with a development Google or Apple ID token: (status, tokens)."""
    minted = mint(name, app, provider)
    status, _, raw = api("POST", minted["signIn"]["path"], minted["signIn"]["body"])
    return status, as_json(raw), minted


def device_sign_in(app):
    _, _, raw = api("POST", "/v1/auth/device", {"deviceId": str(uuid4()), "app": app})
    return as_json(raw)


def uuid4():
    return uuid.uuid4()


# --- a minimal WebSocket client (RFC 6455), enough for the real-time socket ---------------------------------

class Socket:
    def __init__(self, url):
        parsed = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((parsed.hostname, parsed.port or 80), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        target = parsed.path + ("?" + parsed.query if parsed.query else "")
        self.sock.sendall((f"GET {target} HTTP/1.1\r\nHost: {parsed.hostname}:{parsed.port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise Failed("the real-time socket closed during the handshake")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise Failed("the real-time handshake was refused: " + head.split(b"\r\n")[0].decode())
        self.frames = []

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Failed("the real-time socket closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send(self, opcode, payload):
        mask = os.urandom(4)
        header = bytes([0x80 | opcode])
        length = len(payload)
        header += bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + struct.pack("!H", length)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def next_frame(self, deadline):
        self.sock.settimeout(max(0.05, deadline - time.time()))
        first, second = self._read(2)
        opcode, length = first & 0x0F, second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read(8))[0]
        payload = self._read(length)
        if opcode == 0x9:
            self._send(0xA, payload)
            return None
        if opcode == 0x8:
            raise Failed("the server closed the real-time socket")
        return json.loads(payload) if opcode == 0x1 else None

    def wait(self, kind, seconds=15):
        """The first frame of `kind` (frames read meanwhile are kept)."""
        for frame in self.frames:
            if frame.get("type") == kind:
                self.frames.remove(frame)
                return frame
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                frame = self.next_frame(deadline)
            except socket.timeout:
                break
            if frame is None:
                continue
            if frame.get("type") == kind:
                return frame
            self.frames.append(frame)
        raise Failed(f"no {kind} frame within {seconds} s")

    def close(self):
        try:
            self._send(0x8, struct.pack("!H", 1000))
        finally:
            self.sock.close()


# --- output --------------------------------------------------------------------------------------------------

def step(text, result=""):
    print(f"  \u2713 {text:<62} {result}", flush=True)


def section(title):
    print(f"\n{title}", flush=True)


# --- commands ------------------------------------------------------------------------------------------------

def token_command(args):
    status, tokens, minted = provider_sign_in(args.name, args.app, args.provider)
    user = tokens.get("user") or {}
    print(f"{args.name} signed in to {args.app} with {args.provider} ({'new account' if status == 201 else 'existing account'}, user {user.get('id')})")
    print(f"\nID token ({args.provider}, subject {minted['subject']}):\n{minted['idToken']}")
    print(f"\naccess token (expires in {tokens['expiresIn']} s):\n{tokens['accessToken']}")
    print(f"\nrefresh token:\n{tokens['refreshToken']}")
    print(f"\ntry: curl -s {GATEWAY}/v1/me -H 'Authorization: Bearer {tokens['accessToken'][:16]}…'")


def pairly():
    section("Pairly: two people pair, one shares a photo, the other's widget gets it in real time")
    _, ada, _ = provider_sign_in("Ada", "pairly", "google")
    step("Ada signs in with Google (development identity provider)", f"user {ada['user']['id']}")
    _, bohdan, _ = provider_sign_in("Bohdan", "pairly", "apple")
    step("Bohdan signs in with Apple", f"user {bohdan['user']['id']}")
    # Their phones register for push (made-up tokens: without APNs/FCM credentials the push worker logs each
    # notification instead of sending it; make logs SERVICE=push-worker shows them).
    api("PUT", "/v1/me/devices/ada-iphone", {"platform": "ios", "pushToken": os.urandom(32).hex(), "locale": "en"},
        token=ada["accessToken"], expect=(200, 201, 204))
    api("PUT", "/v1/me/devices/bohdan-pixel", {"platform": "android", "pushToken": "fcm-" + str(uuid4()), "locale": "uk"},
        token=bohdan["accessToken"], expect=(200, 201, 204))
    step("their phones register for push notifications", "iOS, Android")
    for person in (ada, bohdan):  # a second run starts from scratch: yesterday's demo couple parts first
        status, _, raw = call("GET", GATEWAY + "/v1/pairing", token=person["accessToken"])
        if status == 200 and (as_json(raw) or {}).get("partnerId"):
            api("DELETE", "/v1/pairing", token=person["accessToken"], expect=(200, 204))
    socket_url = GATEWAY.replace("http://", "ws://") + "/v1/realtime?access_token=" + bohdan["accessToken"]
    live = Socket(socket_url)
    try:
        live.wait("state")
        step("Bohdan's app opens its real-time socket", "state frame")
        _, _, raw = api("POST", "/v1/pairing/invites", token=ada["accessToken"])
        code = as_json(raw)["code"]
        step("Ada creates an invite code", code)
        api("POST", "/v1/pairing/join", {"code": code}, token=bohdan["accessToken"])
        step("Bohdan joins with it", "paired")
        live.wait("paired")
        step("Bohdan's socket hears it", "paired frame")
        photo_path = os.path.join(ROOT, "Tests/ImageSanitizerTests/Fixtures/with-exif.jpg")
        photo = open(photo_path, "rb").read()
        for _ in range(100):  # media learns of the pairing from identity's events a moment later
            status, _, raw = call("POST", GATEWAY + "/v1/moments", photo, ada["accessToken"], content_type="image/jpeg",
                                  headers={"Idempotency-Key": str(uuid4())})
            if status != 409:
                break
            time.sleep(0.1)
        if status != 201:
            raise Failed(f"POST /v1/moments answered {status}: {raw.decode(errors='replace')[:300]}")
        step("Ada shares a photo taken with camera EXIF and GPS", f"{len(photo)} bytes")
        frame = live.wait("new_moment")
        step("Bohdan's socket: new_moment", frame["data"].get("momentId", ""))
        _, headers, body = api("GET", "/v1/moments/current", token=bohdan["accessToken"])
        leaked = [s for s in ("SecretCam", "SecretPlace", "Model-GPS-Leak") if s.encode() in body]
        if leaked:
            raise Failed(f"the photo still carries {leaked}")
        step("Bohdan downloads it: camera and GPS metadata gone", f"{headers.get('Content-Type')}, {len(body)} bytes")
        _, _, raw = api("GET", "/v1/widgets/pairly", token=bohdan["accessToken"])
        sender = raw.decode().split('"senderName":"', 1)[-1].split('"', 1)[0] if b'"senderName"' in raw else "?"
        step("Bohdan's widget shows it", f"from {sender}")
    finally:
        live.close()


def astrosvitla():
    section("AstroSvitla: a birth place, a natal chart of astronomical precision, the chart drawn, a report bought and refunded")
    signed_in = device_sign_in("astrosvitla")
    token = signed_in["accessToken"]
    step("sign in on a device", "")
    _, _, raw = api("GET", "/v1/astrology/places?q=Kharkiw&limit=3", token=token)
    place = as_json(raw)["places"][0]
    step("search a birth place, misspelt: \"Kharkiw\"", f"{place['name']}, {place['timeZone']}")
    birth = {"date": "1990-04-15", "time": "14:30", "place": {"id": place["id"]}}
    _, _, raw = api("POST", "/v1/astrology/charts/natal", birth, token=token)
    chart = as_json(raw)
    sun = next(p for p in chart["planets"] if p["body"] == "sun")
    houses = chart["houses"]
    step("natal chart: 15 April 1990, 14:30, Kharkiv",
         f"Sun {sun['degreeInSign']:.2f}° {sun['sign']}, ASC {houses['ascendantSign']}, {chart['ephemeris']} ephemeris")
    _, _, svg = api("POST", "/v1/astrology/charts/natal.svg", birth, token=token)
    os.makedirs(os.path.join(STATE, "demo"), exist_ok=True)
    out = os.path.join(STATE, "demo", "chart.svg")
    open(out, "wb").write(svg)
    step("the chart as SVG", os.path.relpath(out, ROOT))
    _, _, raw = api("GET", "/v1/reports/areas?chart=" + urllib.parse.quote(chart["fingerprint"]), token=token)
    areas = as_json(raw).get("areas", [])
    step("life-area reports on sale for this chart", f"{len(areas)} areas")
    # A purchase as StoreKit hands it to the app, signed by the development App Store (make appstore-purchase).
    purchase = appstore_purchase("app.lantern.astrosvitla.report.career", signed_in["user"]["id"])
    _, _, raw = api("POST", "/v1/reports/purchases", {"transaction": purchase["signedTransaction"], "area": "career", "birth": birth}, token=token)
    report = as_json(raw)
    step("buy the career report (the development App Store)", f"transaction {purchase['transactionId']}, report {report['status']}")
    first = " ".join((report.get("sections") or {}).get("keyInfluences", "").split())
    print(f"      {first[:160]}{'…' if len(first) > 160 else ''}")
    _, _, pdf = api("POST", f"/v1/reports/{report['id']}/pdf", {"birth": birth}, token=token)
    out = os.path.join(STATE, "demo", "career-report.pdf")
    open(out, "wb").write(pdf)
    step("the report as PDF", f"{len(pdf) // 1024} KB → {os.path.relpath(out, ROOT)}")
    appstore_refund(purchase["signedTransaction"])
    status, _, raw = call("GET", GATEWAY + f"/v1/reports/{report['id']}", token=token)
    step("the App Store refunds it (make appstore-refund)", f"the report answers {status} {as_json(raw).get('code', '')}")


# --- the development App Store ------------------------------------------------------------------------------

def dev_appstore(*arguments):
    """Runs the development App Store signer (Tools/lantern-dev-appstore, built by make up) on the stack's signer."""
    import subprocess
    run_bin = os.path.join(STATE, "run", "bin")
    binaries = os.environ.get("LANTERN_BIN_PATH") or (open(run_bin).read().strip() if os.path.exists(run_bin) else os.path.join(ROOT, ".build", "debug"))
    executable = os.path.join(binaries, "lantern-dev-appstore")
    if not os.path.exists(executable):
        raise Failed(f"{executable} is missing: make up builds it")
    done = subprocess.run([executable, *arguments, "--folder", os.path.join(STATE, "dev", "appstore")], capture_output=True, text=True)
    if done.returncode != 0:
        raise Failed(f"lantern-dev-appstore {arguments[0]}: {done.stderr.strip()[:400]}")
    return json.loads(done.stdout)


def appstore_purchase(product, account):
    args = ["purchase", "--product", product] + (["--account-token", account] if account else [])
    return dev_appstore(*args)


def appstore_refund(transaction):
    """The App Store refunds the purchase: a signed REFUND notification, posted as Apple posts it (no token)."""
    body = dev_appstore("notification", "--type", "REFUND", "--transaction", transaction)
    status, _, raw = call("POST", GATEWAY + "/v1/appstore/notifications", body)
    if status != 200:
        raise Failed(f"the REFUND notification answered {status}: {raw.decode(errors='replace')[:300]}")


def appstore_purchase_command(args):
    purchase = appstore_purchase(args.product, args.account)
    print(f"transaction {purchase['transactionId']} for {args.product} (environment Xcode, signed by the development App Store)")
    print("signedTransaction, what the app posts to POST /v1/reports/purchases as \"transaction\":")
    print(purchase["signedTransaction"])


def appstore_refund_command(args):
    appstore_refund(args.transaction)
    print("REFUND posted to /v1/appstore/notifications: the report of this purchase is taken away (403 report_revoked)")


def travel(days=0, hours=0, seconds=0):
    """Moves the development stack's clock forward (every process follows within a second); returns its time."""
    amount = {k: v for k, v in (("days", days), ("hours", hours), ("seconds", seconds)) if v}
    status, _, raw = call("POST" if amount else "GET", GATEWAY_OPS + "/development/clock", amount if amount else None)
    if status != 200:
        raise Failed(f"time travel answered {status}: {raw.decode(errors='replace')[:300]}")
    return as_json(raw)


def luckyday():
    section("Lucky Day: a profile from the Four Pillars, today's fortune cookie, and tomorrow's")
    tokens = device_sign_in("luckyday")
    token = tokens["accessToken"]
    step("sign in on a device", "")
    _, _, raw = api("PUT", "/v1/fortunes/profile",
                    {"birth": {"date": "1990-05-17", "time": "14:35", "place": {"id": 703448}}, "timeZone": "Europe/Kyiv"}, token=token)
    profile = as_json(raw)
    step("profile from birth data (not kept)", f"{profile['zodiac']['sign']}, \"{profile['nickname']}\"")
    _, _, raw = api("POST", "/v1/fortunes/today/break", token=token, headers={"Idempotency-Key": str(uuid4())})
    cookie = as_json(raw)
    fortune = cookie["fortune"]
    step("break today's cookie", "")
    print(f"      \u201c{fortune['text']}\u201d")
    status, _, raw = call("POST", GATEWAY + "/v1/fortunes/today/break", token=token, headers={"Idempotency-Key": str(uuid4())})
    step("break another one today", f"{status} {as_json(raw).get('code', '')}, opens again at {cookie.get('opensAgainAt')}")
    # Tomorrow without waiting a day: the development stack's clock moves forward (make time-travel DAYS=1).
    clock = travel(days=1)
    time.sleep(1.5)  # every process follows the shared clock within a second
    step("move the stack's clock a day ahead (make time-travel DAYS=1)", f"now {clock['now']}")
    # The access token expired with the day, as it would have: the app refreshes it.
    _, _, raw = api("POST", "/v1/auth/refresh", {"refreshToken": tokens["refreshToken"]})
    token = as_json(raw)["accessToken"]
    _, _, raw = api("POST", "/v1/fortunes/today/break", token=token, headers={"Idempotency-Key": str(uuid4())})
    tomorrow = as_json(raw)["fortune"]
    step("break tomorrow's cookie", "a new fortune" if tomorrow["text"] != fortune["text"] else "the same text again")
    print(f"      \u201c{tomorrow['text']}\u201d")


def local_zone():
    """The machine's IANA time zone (TZ, /etc/timezone or the /etc/localtime link), else UTC."""
    names = [os.environ.get("TZ", "").lstrip(":")]
    try:
        names.append(open("/etc/timezone").read().strip())
    except OSError:
        pass
    found = re.search(r"zoneinfo[^/]*/(?:posix/|right/)?(.+)$", os.path.realpath("/etc/localtime"))
    if found:
        names.append(found.group(1))
    for name in names:
        if not name or ("/" not in name and name != "UTC") or name.startswith("/"):
            continue
        try:
            import zoneinfo
            zoneinfo.ZoneInfo(name)
        except ImportError:
            pass  # before Python 3.9: trust the name
        except Exception:
            continue
        return name
    return "UTC"


def roastmelater():
    section("RoastMeLater: a roast about meetings, today's check-in, the streak and the next badge")
    token = device_sign_in("roastmelater")["accessToken"]
    step("sign in on a device", "")
    zone = local_zone()
    _, _, raw = api("POST", "/v1/roasts", {"category": "meetings", "spice": 3, "language": "en", "timeZone": zone},
                    token=token, headers={"Idempotency-Key": str(uuid4())})
    roast = as_json(raw)
    step("a roast about meetings, spice 3", "local grammar" if roast.get("artisanal") else "written by a model")
    print(f"      \u201c{roast['text']}\u201d")
    # The app checks in each time it is opened; the server's clock (moved a day ahead above) says when.
    _, _, raw = api("POST", "/v1/gamification/check-ins", {"timeZone": zone}, token=token,
                    headers={"Idempotency-Key": str(uuid4())})
    check_in = as_json(raw)
    current = check_in["streak"]["current"]
    step(f"check in ({zone})", f"streak {current} day{'' if current == 1 else 's'}, counted for {check_in['localDate']}")
    _, _, raw = api("GET", "/v1/gamification/profile?language=en", token=token)
    profile = as_json(raw)
    streak, badges = profile["streak"], profile["badges"]
    earned = sum(1 for badge in badges if badge["earned"])
    step("the profile", f"streak {streak['current']} (longest {streak['longest']}), {earned} of {len(badges)} badges earned")
    ahead = [badge for badge in badges if not badge["earned"] and badge["progress"] < 1]
    if ahead:
        closest = max(ahead, key=lambda badge: badge["progress"])  # the first of equals, in the catalogue's order
        step("the badge closest to being earned", f"{closest['name']}, {closest['progress'] * 100:.0f}%")
        print(f"      {closest['description']}")


def symbi():
    section("Symbi: a week of steps, sleep and HRV, the pet's state, its history, the next evolution; a month offline and the evolved ghost")
    token = device_sign_in("symbi")["accessToken"]
    step("sign in on a device", "")
    zone = local_zone()
    # "Today" is the stack's (a stack that travelled in time is ahead of this machine): ask its clock.
    import datetime as dt
    import zoneinfo
    now = dt.datetime.fromisoformat(travel()["now"].replace("Z", "+00:00"))
    today = now.astimezone(zoneinfo.ZoneInfo(zone)).date() if zone != "UTC" else now.date()
    _, _, raw = api("PUT", "/v1/symbi/settings", {"timeZone": zone}, token=token)
    settings = as_json(raw)
    week = [
        {"date": (today - dt.timedelta(days=6 - n)).isoformat(), "source": "healthkit", "steps": steps, "sleepHours": sleep, "hrvMs": hrv}
        for n, (steps, sleep, hrv) in enumerate([(1500, 6.0, 38), (4200, 7.5, 45), (9100, 8.0, 52), (12600, 8.2, 55),
                                                 (8800, 7.0, 49), (3000, 5.0, 35), (10400, 7.8, 51)])
    ]
    status, _, raw = api("POST", "/v1/symbi/metrics", {"timeZone": zone, "days": week}, token=token)
    state = as_json(raw)
    step(f"upload a week from HealthKit ({zone})", f"Symbi is {state['name']} ({state['source']}), {state['activeDays']} lively days")
    print(f"      {state['caption']}")
    _, _, raw = api("GET", "/v1/symbi/history", token=token)
    days = as_json(raw)["days"]
    step("the last days as kept (words, never the numbers)", ", ".join(f"{d['date'][5:]} {d['state']}" for d in reversed(days)))
    step("the next evolution", f"in {state['daysToNextEvolution']} more Active or Vibrant days")
    step("the day's brain", f"looks at today at {settings['nextBrainAt']}" if settings.get("nextBrainAt") else "not planned")

    # Another pet, whose phone was offline for a month: 30 lively days in one upload evolve it, and evolution-worker
    # draws the new form (the image model with GEMINI_API_KEY, Lantern's own ghost without). Its account must have
    # lived that month (an account minutes old cannot buy an evolution with back-dated days): it signs in, then the
    # stack's clock moves 29 days ahead, and the phone comes back online.
    tokens = device_sign_in("symbi")
    clock = travel(days=29)
    time.sleep(1.5)  # every process follows the shared clock within a second
    step("another pet's account, then the stack's clock 29 days ahead (make time-travel DAYS=29)", f"now {clock['now']}")
    _, _, raw = api("POST", "/v1/auth/refresh", {"refreshToken": tokens["refreshToken"]})
    token = as_json(raw)["accessToken"]
    now = dt.datetime.fromisoformat(clock["now"].replace("Z", "+00:00"))
    today = now.astimezone(zoneinfo.ZoneInfo(zone)).date() if zone != "UTC" else now.date()
    month = [{"date": (today - dt.timedelta(days=29 - n)).isoformat(), "source": "healthkit", "steps": 9000 + 97 * n, "sleepHours": 7.6,
              "hrvMs": 48 + n % 5} for n in range(30)]
    _, _, raw = api("POST", "/v1/symbi/metrics", {"timeZone": zone, "days": month}, token=token)
    state = as_json(raw)
    step("another pet: a month offline, uploaded at once", f"{state['activeDays']} lively days, stage {state['stage']}")
    ready = None
    for _ in range(120):
        _, _, raw = api("GET", "/v1/symbi/evolutions", token=token)
        ready = next((e for e in as_json(raw)["evolutions"] if e["status"] == "ready"), None)
        if ready:
            break
        time.sleep(0.5)
    if not ready:
        raise Failed("the evolution was not drawn within a minute: is evolution-worker running? (make status, .lantern/logs)")
    _, _, picture = api("GET", ready["image"]["url"], token=token)
    os.makedirs(os.path.join(STATE, "demo"), exist_ok=True)
    out = os.path.join(STATE, "demo", f"symbi-stage-{ready['stage']}.png")
    open(out, "wb").write(picture)
    drawn_by = "the image model" if ready["image"].get("generator") == "model" else "Lantern's own generator"
    step("its evolution, drawn by " + drawn_by, f"{ready['image']['width']}×{ready['image']['height']} PNG, {len(picture) // 1024} KB → {out}")


def demo_command(_):
    status, _, _ = call("GET", GATEWAY + "/health/live")
    if status != 200:
        raise Failed(f"the gateway at {GATEWAY} answered {status}: start the stack with make up")
    print(f"Lantern at {GATEWAY}, as two people and their apps would use it:")
    started = time.time()
    pairly()
    astrosvitla()
    luckyday()
    roastmelater()
    symbi()
    print(f"\nEverything above went through the gateway in {time.time() - started:.1f} s. Logs: make logs; state: make status.")


def time_travel_command(args):
    clock = travel(days=args.days, hours=args.hours, seconds=args.seconds)
    moved = "moved forward; " if (args.days or args.hours or args.seconds) else ""
    print(f"the stack's clock: {moved}now {clock['now']} ({clock['offsetSeconds'] / 86400:.2f} days ahead of this machine)")


def status_command(_):
    """Each process of `make up`: running or not, and its readiness from its operations port."""
    rows = []
    for line in open(os.path.join(ROOT, "Services/services.tsv")):
        if not line.strip() or line.startswith("#"):
            continue
        name, port = line.split()[:2]
        rows.append((name, int(port), int(port) + 1000))
    ok = True
    print(f"{'process':<16} {'pid':>7}  {'api':<22} readiness (operations port)")
    for name, port, ops in [("dev-identity", int(DEV_IDENTITY.rsplit(':', 1)[1]), None)] + rows:
        pid = ""
        pidfile = os.path.join(STATE, "run", f"{name}.pid")
        if os.path.exists(pidfile):
            pid = open(pidfile).read().strip()
            try:
                os.kill(int(pid), 0)
            except (OSError, ValueError):
                pid = f"{pid}?"
        readiness = "-"
        if ops:
            try:
                status, _, raw = call("GET", f"http://{HOST}:{ops}/health/ready", timeout=3)
                report = as_json(raw)
                failing = {k: v for k, v in report.get("checks", {}).items() if v != "ok"}
                readiness = "ready" if status == 200 else f"NOT READY {failing}"
                ok = ok and status == 200
            except Failed:
                readiness, ok = "not running", False
        try:
            live = call("GET", f"http://{HOST}:{port}/health/live" if ops else f"http://{HOST}:{port}/google/jwks.json", timeout=3)[0]
            api_state = f"{HOST}:{port} {'up' if live == 200 else live}"
        except Failed:
            api_state, ok = f"{HOST}:{port} down", False
        print(f"{name:<16} {pid:>7}  {api_state:<22} {readiness}")
    signin = os.path.join(STATE, "run", "signin")
    if os.path.exists(signin):
        for line in open(signin):
            provider, _, how = line.strip().partition(" ")
            print(f"sign-in {provider.capitalize()}: {how}")
    try:
        clock = travel()
        if clock["offsetSeconds"]:
            print(f"clock: {clock['now']}, {clock['offsetSeconds'] / 86400:.2f} days ahead (make time-travel)")
    except Failed:
        pass
    sys.exit(0 if ok else 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    token = commands.add_parser("token", help="sign a made-up person in through the gateway; print their tokens")
    token.add_argument("--app", default="pairly")
    token.add_argument("--name", default="Ada")
    token.add_argument("--provider", default="google", choices=["google", "apple"])
    commands.add_parser("demo", help="drive every built app through the gateway, step by step")
    commands.add_parser("status", help="each process of make up and its readiness")
    travel_parser = commands.add_parser("time-travel", help="move the development stack's clock forward (or print it)")
    travel_parser.add_argument("--days", type=float, default=0)
    travel_parser.add_argument("--hours", type=float, default=0)
    travel_parser.add_argument("--seconds", type=float, default=0)
    purchase_parser = commands.add_parser("appstore-purchase", help="sign a made-up App Store purchase (the development signer)")
    purchase_parser.add_argument("--product", default="app.lantern.astrosvitla.report.career")
    purchase_parser.add_argument("--account", default="", help="the appAccountToken: the buyer's Lantern user id")
    refund_parser = commands.add_parser("appstore-refund", help="sign a REFUND of a purchase and post it to the gateway")
    refund_parser.add_argument("--transaction", required=True, help="the signedTransaction of the purchase")
    args = parser.parse_args()
    try:
        {"token": token_command, "demo": demo_command, "status": status_command, "time-travel": time_travel_command,
         "appstore-purchase": appstore_purchase_command, "appstore-refund": appstore_refund_command}[args.command](args)
    except Failed as failure:
        print(f"\n\u2717 {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
