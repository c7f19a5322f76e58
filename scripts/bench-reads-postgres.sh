#!/usr/bin/env bash
# Reads on one chatd node on PostgreSQL (fsync on), driven by wrk: u0's conversation list (30
# one-to-one conversations, two messages each) and one conversation's history page, each for
# 5 s from 8 connections, then a GET /v1/health baseline.
#   scripts/bench-reads-postgres.sh [PATH-TO-CHATD]   (default: the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
chatd=${1:-$PWD/Server/.build/release/chatd}
source scripts/cluster-lib.sh
scratch chatd-pglist
export CHATD_ADMIN_KEY=bench-admin-key-of-32-bytes-or-more
export PGPASSFILE=$dir/postgres.pgpass
export CHATD_DATABASE=$(scripts/postgres.sh start "$dir/postgres" "$(free_port)")/postgres
"$chatd" migrate >/dev/null
start_chatd "$dir/n.log" --write-rate 0 --data "$dir/node"
p=$port
adm() { curl -s -X POST -H "X-Admin-Key: $CHATD_ADMIN_KEY" -H 'Content-Type: application/json' "$@"; }
for i in $(seq 0 30); do adm -d "{\"uid\":\"u$i\"}" "http://127.0.0.1:$p/v1/admin/users" >/dev/null; done
t0=$(adm -d '{}' "http://127.0.0.1:$p/v1/admin/users/u0/tokens" | python3 -c 'import json,sys; print(json.load(sys.stdin)["authToken"])')
for i in $(seq 1 30); do for k in 1 2; do
  curl -s -o /dev/null -X POST -H "Authorization: Bearer $t0" -H 'Content-Type: application/json' -d "{\"muid\":\"m$i-$k\",\"receiver\":\"u$i\",\"receiverType\":\"user\",\"type\":\"text\",\"category\":\"message\",\"text\":\"hi $k\"}" "http://127.0.0.1:$p/v1/messages"; done; done
echo "list:    $(wrk -t4 -c8 -d5s -H "Authorization: Bearer $t0" "http://127.0.0.1:$p/v1/conversations?limit=30" | awk '/Requests\/sec/ {print $2}') req/s"
echo "history: $(wrk -t4 -c8 -d5s -H "Authorization: Bearer $t0" "http://127.0.0.1:$p/v1/conversations/u0~u1/messages?limit=30" | awk '/Requests\/sec/ {print $2}') req/s"
echo "health:  $(wrk -t4 -c8 -d3s "http://127.0.0.1:$p/v1/health" | awk '/Requests\/sec/ {print $2}') req/s"
