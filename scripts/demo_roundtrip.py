"""The round trip `make demo` narrates: realtime delivery, receipts, idempotent retry, changelog."""
import json
import sys
import urllib.request

from websockets.sync.client import connect

port, alice, bob = sys.argv[1], sys.argv[2], sys.argv[3]
base = f"http://127.0.0.1:{port}"


def call(method, path, token, body=None):
    request = urllib.request.Request(base + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return response.status, json.loads(response.read() or b"null")


print("==> bob opens the realtime WebSocket")
with connect(f"ws://127.0.0.1:{port}/v1/realtime",
             additional_headers={"Authorization": f"Bearer {bob}"}) as socket:
    hello = json.loads(socket.recv(timeout=5))
    print(f"    hello: uid={hello['uid']} cursor={hello['cursor']}")

    print("==> alice sends 'Hi Bob!' with muid demo-1")
    message = {"muid": "demo-1", "receiver": "bob", "receiverType": "user",
               "category": "message", "type": "text", "text": "Hi Bob!"}
    status, sent = call("POST", "/v1/messages", alice, message)
    print(f"    {status}: message {sent['id']} in {sent['conversationId']}")

    event = json.loads(socket.recv(timeout=5))
    change = event["change"]
    print(f"==> bob receives it live: seq {change['seq']} {change['kind']} \"{change['message']['text']}\"")

    print("==> alice's app retries the same send (lost acknowledgement): no duplicate")
    status, again = call("POST", "/v1/messages", alice, message)
    print(f"    {status}: the original message {again['id']} again")

    status, receipt = call("POST", f"/v1/conversations/{sent['conversationId']}/read", bob,
                           {"messageId": sent["id"]})
    print(f"==> bob reads it: read receipt up to {receipt['messageId']}")

    status, page = call("GET", "/v1/conversations", alice)
    conversation = page["items"][0]
    print(f"==> alice's conversation list: with {conversation['conversationWith']['name']}, "
          f"peer read up to {conversation.get('peerReadMessageId')}")

    status, changes = call("GET", f"/v1/changes?cursor={hello['cursor']}", alice)
    print(f"==> alice replays the changelog from bob's connect cursor: "
          f"{[c['kind'] for c in changes['changes']]}, hasMore={changes['hasMore']}")
print("==> done: one message, delivered live, retried without a duplicate, read, replayed")
