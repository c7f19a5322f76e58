"""Python `websockets` as a client of chatd's realtime endpoint (interop test peer).

usage: realtime_client.py PORT TOKEN COUNT
Prints the hello envelope, then "ready", then the first COUNT change envelopes (one JSON
per line), sends a typing envelope, pings, closes normally and prints the close code.
"""
import json
import sys

from websockets.sync.client import connect

port, token, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with connect(f"ws://127.0.0.1:{port}/v1/realtime",
             additional_headers={"Authorization": f"Bearer {token}"}) as ws:
    print(ws.recv(timeout=10), flush=True)
    print("ready", flush=True)
    for _ in range(count):
        print(ws.recv(timeout=10), flush=True)
    ws.ping(b"py").wait(10)
    print("pong", flush=True)
    ws.close(1000, "done")
    print(f"closed {ws.close_code}", flush=True)
