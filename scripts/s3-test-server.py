#!/usr/bin/env python3
"""An S3-compatible server on loopback for the tests: moto's server (PyPI), with request signatures verified.

Starts `moto_server` on a free port with authentication on (INITIAL_NO_AUTH_ACTION_COUNT lets the set-up below
through unsigned, then every request must carry a valid SigV4 signature of a known key), makes an IAM user with an
access key allowed to use S3, prints one JSON line {"endpoint", "accessKeyId", "secretAccessKey", "region"} and
runs until its standard input closes (the test process ends), then stops the server.
"""
import ctypes
import json
import os
import signal
import threading
import socket
import subprocess
import sys
import time
import urllib.request

import boto3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    # Four unsigned actions: create the user, its key, the policy, the attachment.
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="4")
    # The server dies with this script (PR_SET_PDEATHSIG), and this script with the test process: its standard
    # input closing, or its parent going away while another child still holds that pipe open.
    def die_with_parent():
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
    server = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
    parent = os.getppid()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        server.kill()
        os._exit(0)
    threading.Thread(target=watch_parent, daemon=True).start()
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=1)
                break
            except Exception:
                time.sleep(0.05)
        iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="lantern")
        key = iam.create_access_key(UserName="lantern")["AccessKey"]
        policy = iam.create_policy(PolicyName="lantern-s3", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        iam.attach_user_policy(UserName="lantern", PolicyArn=policy["Policy"]["Arn"])
        print(json.dumps({"endpoint": endpoint, "accessKeyId": key["AccessKeyId"],
                          "secretAccessKey": key["SecretAccessKey"], "region": "us-east-1"}), flush=True)
        sys.stdin.read()
    except (KeyboardInterrupt, BrokenPipeError):
        pass  # the test process is ending
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except BaseException:
            server.kill()


if __name__ == "__main__":
    main()
