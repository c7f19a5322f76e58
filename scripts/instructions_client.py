"""One keep-alive client for scripts/bench-instructions.sh: PORT TOKENS PATH COUNT.

PATH is health, history (u0's newest 30 with u1), list (u0's conversations, 30 a page),
send (u0 to u1…u15 in turn, a fresh muid each) or seed (the sends that give history and list
their rows). Every answer must be the path's success status, or the run stops.
"""

import http.client
import json
import os
import sys

port, token_file, path, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
tokens = open(token_file).read().split()
headers = {"Authorization": "Bearer " + tokens[0]}
connection = http.client.HTTPConnection("127.0.0.1", port)
run = os.urandom(4).hex()


def send(index):
    body = {
        "muid": f"i{run}-{index}",
        "receiver": f"u{1 + index % 15}",
        "receiverType": "user",
        "type": "text",
        "category": "message",
        "text": f"message {index} of the instruction count",
    }
    connection.request(
        "POST", "/v1/messages", body=json.dumps(body), headers={**headers, "Content-Type": "application/json"}
    )
    return 201


def get(target):
    connection.request("GET", target, headers=headers)
    return 200


targets = {
    "health": "/v1/health",
    "history": "/v1/conversations/u0~u1/messages?limit=30",
    "list": "/v1/conversations?limit=30",
}
for index in range(count):
    expected = send(index) if path in ("send", "seed") else get(targets[path])
    answer = connection.getresponse()
    answer.read()
    if answer.status != expected:
        sys.exit(f"{path}: answered {answer.status}, not {expected}")
