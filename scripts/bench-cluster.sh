#!/usr/bin/env bash
# Sends through a chatd cluster against single-node SQLite, in the same run, driven by wrk
# (a load generator nobody here wrote): POST /v1/messages with a fresh muid each, 16 users
# writing to 16 conversations, 16 connections for 10 s, after a GET /v1/health baseline on
# the same front. The cluster is a throwaway PostgreSQL (fsync on), nats-server, three
# chatd nodes and HAProxy in front, all on this machine's cores. Each phase also prints the
# CPU its processes spent per send (scripts/process-cpu.py; wrk's own is not counted).
# CHATD_BINARY=path runs that chatd instead of building one (to compare two builds in turn).
#   scripts/bench-cluster.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
source scripts/cluster-lib.sh
bench_start chatd-bench-cluster

measure() {  # measure NAME URL: health baseline, then sends
    local health sends
    health=$(wrk -t4 -c16 -d"${seconds}s" "$2/v1/health" | awk '/Requests\/sec/ { print $2 }')
    scripts/process-cpu.py snap "$dir/cpu.json"
    BENCH_TOKENS="$dir/tokens" wrk -t16 -c16 -d"${seconds}s" --latency -s scripts/wrk/send.lua "$2" > "$dir/$1.wrk"
    scripts/process-cpu.py report "$dir/cpu.json" "$(awk '/requests in/ { print $1 }' "$dir/$1.wrk")"
    sends=$(awk '/Requests\/sec/ { print $2 }' "$dir/$1.wrk")
    wrk_refused "$dir/$1.wrk"
    echo "  send latency: $(wrk_latency "$dir/$1.wrk")"
    awk -v name="$1" -v health="$health" -v sends="$sends" \
        'BEGIN { printf "%-18s health %9.0f req/s   sends %8.0f /s   (%.3f x health)\n", name, health, sends, sends / health }'
    echo "$sends" > "$dir/$1.sends"
}

batching() {  # batching URL...: sends per group commit, over the nodes
    local url sends=0 commits=0
    for url in "$@"; do
        read -r c s < <(curl -s -H "X-Admin-Key: $CHATD_ADMIN_KEY" "$url/metrics" |
            awk '/^chatd_group_commits / { c = $2 } /^chatd_group_commit_sends / { s = $2 } END { print c + 0, s + 0 }')
        commits=$((commits + c)); sends=$((sends + s))
    done
    awk -v c="$commits" -v s="$sends" 'BEGIN { if (c > 0) printf "  group commit: %d sends in %d transactions (%.2f a transaction)\n", s, c, s / c }'
}

echo "== single node, embedded SQLite"
bench_users --data "$dir/single"
start_chatd "$dir/single.log" --data "$dir/single" --write-rate 0
measure single-sqlite "http://127.0.0.1:$port"
batching "http://127.0.0.1:$port"
stop_process "$chatd_pid"

echo "== three nodes on PostgreSQL + NATS behind HAProxy"
start_bench_cluster
bench_users
measure cluster-haproxy "$front"
batching "${node_urls[@]}"
awk -v cluster="$(cat "$dir/cluster-haproxy.sends")" -v single="$(cat "$dir/single-sqlite.sends")" \
    'BEGIN { printf "cluster sends / single-node SQLite sends: %.2f\n", cluster / single }'
