#!/usr/bin/env bash
# `make demo`: chatd on embedded SQLite in a temporary directory, and a narrated round trip.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

echo "==> building chatd"
(cd Server && swift build -c release --product chatd 2>&1 | tail -1)
chatd=Server/.build/release/chatd

data=$(mktemp -d)
log="$data/chatd.log"
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$data"' EXIT

echo "==> creating users alice and bob with the offline admin commands"
"$chatd" user add alice --name Alice --data "$data"
"$chatd" user add bob --name Bob --data "$data"
alice=$("$chatd" token alice --data "$data")
bob=$("$chatd" token bob --data "$data")

echo "==> starting chatd on an ephemeral port (data in $data)"
"$chatd" --data "$data" --port 0 > "$log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
grep "listening on" "$log"
port=$(grep -o '127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)

python3 scripts/demo_roundtrip.py "$port" "$alice" "$bob"

echo "==> stopping chatd with SIGTERM (finishes requests, closes the database)"
kill -TERM $pid
wait $pid
tail -2 "$log"
