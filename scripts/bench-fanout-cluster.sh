#!/usr/bin/env bash
# One group message to 10,000 connected members on the three-node cluster (issue #42), beside
# chatd-bench --fanout on one SQLite node: a throwaway PostgreSQL (fsync on), nats-server and
# three chatd nodes (4,000 sockets each at most), all on this machine's cores. chatd-bench
# builds the group in the cluster's database, opens the members' sockets on the nodes in turn
# (as HAProxy's round robin would spread them), and sends through the first node: the other
# nodes' members get each message over the bus.
#   scripts/bench-fanout-cluster.sh [MEMBERS]   (default 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
members=${1:-10000}
source scripts/cluster-lib.sh
bench_start chatd-bench-fanout-cluster
(cd Server && swift build -c release --product chatd-bench 2>&1 | tail -1)
bench_node_args=(--max-connections 4000)
start_bench_cluster
ports=$(printf '%s\n' "${node_urls[@]}" | sed 's/.*://' | paste -sd,)
Server/.build/release/chatd-bench "$chatd" --fanout "$members" --fanout-sends 50 \
    --cluster "$ports" --pids "$(IFS=,; echo "${node_pids[*]}")" --database "$CHATD_DATABASE"
