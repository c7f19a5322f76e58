#!/usr/bin/env bash
# `make demo`: the whole product on a fresh machine. chatd runs on embedded SQLite in a
# temporary directory; alice and bob use the `chat` client (the SDK, each with a device
# folder of their own; bob's cache is encrypted). Bob's device reaches chatd through a small
# relay, so the demo can take his network away and give it back.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "chat ${*}" | sed -e 's/--server [^ ]* //' -e 's/--data [^ ]* //'; "$chat" "$@"; }

source scripts/cluster-lib.sh
say "building chatd and the chat client (release)"
release_chatd_and_chat
scratch chatd-demo

say "creating users and tokens with chatd's offline admin commands"
"$chatd" user add alice --name Alice --data "$dir/server"
"$chatd" user add bob --name Bob --data "$dir/server"
"$chatd" user add carol --name Carol --data "$dir/server"
alice_token=$("$chatd" token alice --data "$dir/server")
bob_token=$("$chatd" token bob --data "$dir/server")
carol_token=$("$chatd" token carol --data "$dir/server")

say "starting chatd on an ephemeral port (embedded SQLite in $dir/server)"
start_chatd "$dir/chatd.log" --data "$dir/server"
grep "listening on" "$dir/chatd.log"
relay_port=$(free_port)

network_up() {
    python3 scripts/demo_proxy.py "$relay_port" "$port" > "$dir/proxy.log" 2>&1 &
    proxy_pid=$!
    pids+=("$proxy_pid")
    wait_for 5 grep -q "proxy ready" "$dir/proxy.log"
}
network_down() {
    stop_process "$proxy_pid"
    proxy_pid=""
}

alice=(--server "http://127.0.0.1:$port" --data "$dir/alice-phone" --as alice)
carol=(--server "http://127.0.0.1:$port" --data "$dir/carol-phone" --as carol)
bob=(--server "http://127.0.0.1:$relay_port" --data "$dir/bob-phone" --as bob --encrypt)
network_up

say "1. alice and bob sign in and chat"
run "${alice[@]}" login --token "$alice_token"
run "${bob[@]}" login --token "$bob_token"
run "${bob[@]}" sync
run "${alice[@]}" send bob "Hi Bob! Lunch at noon?"
run "${bob[@]}" history alice
run "${bob[@]}" send alice "Sure, see you there"
lunch=$("$chat" "${alice[@]}" --json send bob "Let's try the new place" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
typo=$("$chat" "${alice[@]}" --json send bob "I will bring the tickts" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
oops=$("$chat" "${alice[@]}" --json send bob "(wrong chat, ignore)" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
run "${bob[@]}" history alice

say "2. bob's network goes away: his messages queue on his device"
network_down
run "${bob[@]}" send alice "Running 5 minutes late"
run "${bob[@]}" send alice "Order me a coffee?"
run "${bob[@]}" pending
run "${bob[@]}" history alice

say "3. meanwhile alice sends, edits, deletes and reacts (her app calls chatd)"
run "${alice[@]}" send bob "Moved to 12:30"
api() { curl -sf -o /dev/null -H "Authorization: Bearer $alice_token" -H "Content-Type: application/json" "$@"; }
echo "alice edits \"I will bring the tickts\", deletes \"(wrong chat, ignore)\", reacts to \"Let's try the new place\""
api -X PATCH -d '{"text":"I will bring the tickets"}' "http://127.0.0.1:$port/v1/messages/$typo"
api -X DELETE "http://127.0.0.1:$port/v1/messages/$oops"
api -X POST -d '{"reaction":"👍"}' "http://127.0.0.1:$port/v1/messages/$lunch/reactions"
echo "carol writes to bob for the first time"
run "${carol[@]}" login --token "$carol_token"
run "${carol[@]}" send bob "Hi Bob, it's Carol from the climbing club"
run "${carol[@]}" send bob "Are you coming on Saturday?"

say "4. bob's network is back: the outbox flushes first, then the catch-up sync (with its progress)"
network_up
run "${bob[@]}" sync

say "5. a cached-first read: the cache answers at once, the server confirms"
run "${bob[@]}" history alice

say "6. what the sync brought is readable offline: bob never opened carol's conversation"
network_down
run "${bob[@]}" history carol
network_up

say "7. bob's cache is encrypted at rest"
run "${bob[@]}" status
run "${bob[@]}" --json status

say "alice received bob's queued messages exactly once"
run "${alice[@]}" history bob

say "stopping chatd with SIGTERM (finishes requests, closes the database)"
network_down
kill -TERM "$chatd_pid"
wait "$chatd_pid"
pids=()
tail -2 "$dir/chatd.log"
say "done"
