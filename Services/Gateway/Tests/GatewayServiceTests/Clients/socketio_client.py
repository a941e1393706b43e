"""A real Socket.IO v4 client (python-socketio), as the Pairly app's socket.io-client with transports=['websocket'].

Prints one JSON line per thing it sees; the Swift test reads them. Usage: socketio_client.py URL TOKEN [until-ended]
(until-ended: stay connected, answering the heartbeat, until the server ends the session.)
"""
import json
import sys
import threading

import socketio

url, token = sys.argv[1], sys.argv[2]
until_ended = len(sys.argv) > 3 and sys.argv[3] == "until-ended"
# request_timeout: the WebSocket opening (engineio waits 5 s by default) on a CI machine running every suite at once.
sio = socketio.Client(reconnection=False, request_timeout=30)
done = threading.Event()


printing = threading.Lock()


def say(kind, data=None):
    # One write per line, under a lock: handlers run on the client's threads, and print() writes the text and its
    # newline separately, so two at once interleave into one line (seen on a loaded CI machine).
    with printing:
        sys.stdout.write(json.dumps({"kind": kind, "data": data}) + "\n")
        sys.stdout.flush()


@sio.event
def connect():
    say("connected")


@sio.event
def connect_error(data):
    say("connect_error", data)
    done.set()


@sio.on("state")
def on_state(data):
    say("state", data)


@sio.on("session_ended")
def on_session_ended(data):
    say("session_ended", data)


ended = threading.Lock()


@sio.event
def disconnect(*reason):  # python-socketio >= 5.12 passes the reason
    # The server ended it (the other runs end by disconnecting themselves). Reported once: the namespace's
    # disconnect ("41", "server disconnect") may be followed by the transport's close ("transport error").
    if until_ended and ended.acquire(blocking=False):
        say("disconnected", [str(r) for r in reason])
        done.set()


@sio.on("new_moment")
def on_new_moment(data):
    say("new_moment", data)
    if until_ended:
        return
    say("ack", sio.call("get_state", timeout=15))
    say("unknown_ack", sio.call("nonsense", {"x": 1}, timeout=15))
    done.set()


try:
    sio.connect(url, transports=["websocket"], auth={"token": token}, socketio_path="socket.io", wait_timeout=15)  # generous: CI machines can be loaded
except Exception as error:  # connection refused by the server: report and stop
    say("connect_failed", str(error))
    sys.exit(0)
done.wait(60 if until_ended else 45)
if sio.connected:
    sio.disconnect()
say("finished")
