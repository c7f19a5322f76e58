#!/usr/bin/env bash
# What a group's size costs on the three-node cluster (issue #42), beside the single SQLite
# node's figures (chatd-bench --groups): a throwaway PostgreSQL (fsync on), nats-server,
# three chatd nodes and HAProxy in front, all on this machine's cores. chatd-bench builds each
# group in the cluster's database (in-process, 1,000 members a call) and measures sends and
# catch-ups through the front, against one-to-one sends through the same front.
#   scripts/bench-groups-cluster.sh [SIZES]   (default 1000,10000,100000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-1000,10000,100000}
source scripts/cluster-lib.sh
bench_start chatd-bench-groups-cluster
(cd Server && swift build -c release --product chatd-bench 2>&1 | tail -1)
start_bench_cluster
Server/.build/release/chatd-bench "$chatd" --groups "$sizes" --group-budget 120 \
    --cluster "${front##*:}" --database "$CHATD_DATABASE"
