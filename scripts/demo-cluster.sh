#!/usr/bin/env bash
# `make demo-cluster`: chatd as a cluster on one machine, loopback only. A throwaway
# PostgreSQL holds every table, nats-server carries realtime between three chatd nodes, and
# HAProxy balances two of them. alice's phone talks to node one; bob's goes through HAProxy,
# so they sit on different nodes. Mid-way bob's node is killed (SIGKILL): his phone reconnects
# through HAProxy to the surviving node and catches up, nothing lost, nothing twice.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "chat ${*}" | sed -e 's/--server [^ ]* //' -e 's/--data [^ ]* //'; "$chat" "$@"; }
source scripts/cluster-lib.sh

say "building chatd and the chat client (release)"
release_chatd_and_chat

scratch chatd-cluster

say "starting PostgreSQL 15 (initdb in $dir/postgres as the postgres account) and nats-server"
database=$(scripts/postgres.sh start "$dir/postgres" "$(free_port)")/postgres
export PGPASSFILE=$dir/postgres.pgpass  # the password chatd and psql use: in a file, never in the url
echo "database: $database"
start_nats
echo "nats: $nats_url, chatd's account only; a client without credentials hears: $(nats_greeting "${nats_url##*:}")"

say "migrating the database and creating users with chatd's offline admin commands"
export CHATD_DATABASE=$database
export CHATD_ADMIN_KEY=demo-cluster-admin-key-of-32-bytes
"$chatd" migrate
"$chatd" user add alice --name Alice
"$chatd" user add bob --name Bob
alice_token=$("$chatd" token alice)
bob_token=$("$chatd" token bob)

say "starting three chatd nodes on one database, one bus and one media directory"
declare -A node_port node_pid
for node in one two three; do
    node_port[$node]=$(free_port)
    "$chatd" --listen "127.0.0.1:${node_port[$node]}" "${nats_args[@]}" --node-id "$node" \
        --catch-up 1 --data "$dir/node-$node" --media "$dir/media" > "$dir/$node.log" 2>&1 &
    node_pid[$node]=$!
    pids+=($!)
done
for node in one two three; do
    wait_for 20 curl -sf "http://127.0.0.1:${node_port[$node]}/v1/health"
    echo "node $node on 127.0.0.1:${node_port[$node]}: $(curl -s -H "X-Admin-Key: $CHATD_ADMIN_KEY" "http://127.0.0.1:${node_port[$node]}/v1/health")"
done

say "starting HAProxy in front of nodes two and three (health-checked every 0.5 s)"
proxy_port=$(free_port)
start_haproxy "$proxy_port" leastconn two="${node_port[two]}" three="${node_port[three]}"
echo "HAProxy on 127.0.0.1:$proxy_port: $(curl -s "http://127.0.0.1:$proxy_port/v1/health")"

alice=(--server "http://127.0.0.1:${node_port[one]}" --data "$dir/alice-phone" --as alice)
bob=(--server "http://127.0.0.1:$proxy_port" --data "$dir/bob-phone" --as bob)

say "1. alice signs in on node one, bob through HAProxy, and bob's phone listens"
run "${alice[@]}" login --token "$alice_token"
run "${bob[@]}" login --token "$bob_token"
run "${bob[@]}" sync
"$chat" "${bob[@]}" listen --count 5 > "$dir/bob-listen.log" 2>&1 &
listener=$!
pids+=($listener)
wait_for 20 grep -q "^connected" "$dir/bob-listen.log"
sockets() { curl -s -H "X-Admin-Key: $CHATD_ADMIN_KEY" "http://127.0.0.1:${node_port[$1]}/metrics" | awk '$1 == "chatd_realtime_sockets" { print $2 }'; }
find_bob() { for node in two three; do [ "$(sockets $node)" = 1 ] && bob_node=$node && return 0; done; return 1; }
heard() { [ "$(grep -c ' alice: ' "$dir/bob-listen.log")" -ge "$1" ]; }
bob_node=""
wait_for 20 find_bob
survivor=$([ "$bob_node" = two ] && echo three || echo two)
echo "bob's realtime socket is on node $bob_node (metrics: chatd_realtime_sockets 1); alice's requests go to node one"

say "2. alice writes through node one: NATS carries it to bob's socket on node $bob_node"
run "${alice[@]}" send bob "Hi Bob! Lunch at noon?"
run "${alice[@]}" send bob "The new place on 5th"
wait_for 20 heard 2
sed 's/^/  bob listening: /' "$dir/bob-listen.log"

say "3. node $bob_node dies (SIGKILL); alice keeps writing through node one"
{ kill -KILL "${node_pid[$bob_node]}" && wait "${node_pid[$bob_node]}"; } 2>/dev/null || true
run "${alice[@]}" send bob "Moved to 12:30"
run "${alice[@]}" send bob "I booked a table by the window"
run "${alice[@]}" send bob "See you there"

say "4. bob's phone reconnects through HAProxy to node $survivor and catches up"
if ! wait_for 60 heard 5; then
    echo "bob's listener did not hear all five messages:"; cat "$dir/bob-listen.log"; exit 1
fi
wait "$listener" || true
sed 's/^/  bob listening: /' "$dir/bob-listen.log"

say "5. bob's conversation: every message exactly once, then bob answers through HAProxy"
run "${bob[@]}" history alice
run "${bob[@]}" send alice "Great, see you at 12:30"
run "${alice[@]}" history bob

say "6. what the surviving nodes measured (GET /metrics)"
for node in one "$survivor"; do
    echo "node $node:"
    curl -s -H "X-Admin-Key: $CHATD_ADMIN_KEY" "http://127.0.0.1:${node_port[$node]}/metrics" \
        | grep -E '^(chatd_http_requests_total\{method="POST",route="/v1/messages",status="201"\}|chatd_changes_committed_total\{kind="message.created"\}|chatd_bus_changes_received_total|chatd_db_connections_(open|max)) ' | sed 's/^/  /'
done

say "stopping the cluster"
for node in one "$survivor"; do kill -TERM "${node_pid[$node]}"; wait "${node_pid[$node]}" || true; done
say "done"
