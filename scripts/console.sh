#!/usr/bin/env bash
# `make console`: chatd on embedded SQLite in a temporary directory with a little demo data
# (users, a group, messages), a listening client and a light load, then the operator
# console's address and admin key. Ctrl-C stops it all and removes the directory.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

source scripts/cluster-lib.sh
echo "building chatd and the chat client (release)"
release_chatd_and_chat
scratch chatd-console
trap 'exit 130' INT TERM  # Ctrl-C: the EXIT trap stops every process and removes $dir
key=$(openssl rand -hex 24)
start_chatd "$dir/chatd.log" --data "$dir/data" --admin-key "$key"
base="http://127.0.0.1:$port"

admin() { curl -sf -H "X-Admin-Key: $key" -H "Content-Type: application/json" "$@"; }
token() { admin -d '{}' "$base/v1/admin/users/$1/tokens" | python3 -c 'import json,sys; print(json.load(sys.stdin)["authToken"])'; }
send() {  # send TOKEN RECEIVER TYPE TEXT
    curl -sf -o /dev/null -H "Authorization: Bearer $1" -H "Content-Type: application/json" \
        -d "{\"muid\":\"$RANDOM$RANDOM$RANDOM\",\"receiver\":\"$2\",\"receiverType\":\"$3\",\"category\":\"message\",\"type\":\"text\",\"text\":\"$4\"}" \
        "$base/v1/messages"
}

echo "adding demo data: users, the group 'team', messages"
for user in alice:Alice bob:Bob carol:Carol dave:Dave erin:Erin; do
    admin -o /dev/null -d "{\"uid\":\"${user%%:*}\",\"name\":\"${user#*:}\"}" "$base/v1/admin/users"
done
for n in $(seq -w 1 40); do admin -o /dev/null -d "{\"uid\":\"member$n\"}" "$base/v1/admin/users"; done
admin -o /dev/null -d '{"owner":"alice","group":{"guid":"team","name":"The team","type":"private"}}' "$base/v1/admin/groups"
members=$(printf '{"uid":"%s"},' bob carol dave $(seq -f 'member%02g' 1 40))
admin -o /dev/null -d "{\"members\":[${members%,}]}" "$base/v1/admin/groups/team/members"
alice_token=$(token alice)
bob_token=$(token bob)
send "$alice_token" bob user "Hi Bob! Lunch at noon?"
send "$bob_token" alice user "Sure, see you there"
send "$alice_token" team group "Welcome to the team, everyone"
send "$bob_token" team group "Buy cheap watches at example.com"

# carol listens (a realtime socket the health screen counts); bob and alice keep talking.
"$chat" --server "$base" --as carol --data "$dir/carol" login --token "$(token carol)" > /dev/null
"$chat" --server "$base" --as carol --data "$dir/carol" listen > "$dir/carol.log" 2>&1 &
pids+=($!)
( while true; do send "$alice_token" team group "status update"; send "$bob_token" alice user "ping"; sleep 0.2; done ) &
pids+=($!)

cat <<TEXT

  The operator console:  $base/admin/
  Admin key:             $key

  Demo data: users alice, bob, carol, dave, erin and member01…member40; the private group
  'team' (owner alice); a conversation between alice and bob; carol listening; a light load
  of sends (the Health screen plots it). Ctrl-C stops chatd and removes $dir.
TEXT
wait "$chatd_pid"
