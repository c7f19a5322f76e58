"""A real RFC 6455 peer for the Swift client's interop tests (Python `websockets`).

Binds 127.0.0.1 on an ephemeral port, prints the port, and echoes every message.
The text "close-4001" makes it close with code 4001; "ping-me" makes it ping first.
"""
import sys
import threading

from websockets.sync.server import serve


def handler(connection):
    for message in connection:
        if message == "close-4001":
            connection.close(4001, "asked to close")
            return
        if message == "ping-me":
            connection.ping(b"server-ping").wait(5)
        connection.send(message)


with serve(handler, "127.0.0.1", 0, max_size=1 << 20) as server:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.socket.getsockname()[1], flush=True)
    sys.stdin.read()  # runs until the test closes our stdin
    server.shutdown()
