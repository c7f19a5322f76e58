#!/usr/bin/env bash
# chatd's hot paths driven by wrk (a load generator nobody here wrote) against one release chatd
# on embedded SQLite, each as a ratio to a GET /v1/health baseline taken in the same run:
# sends (scripts/wrk/send.lua: 16 users, each to the next), a conversation's newest 30 messages
# and the conversation list (scripts/wrk/read.lua), 16 connections for SECONDS each.
#   scripts/bench-wrk.sh [SECONDS]      (CHATD_ARGS="--threads 4" passes options to chatd)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
source scripts/cluster-lib.sh
bench_start chatd-bench-wrk
bench_users --data "$dir/data"
# shellcheck disable=SC2086  # CHATD_ARGS is split on purpose
start_chatd "$dir/chatd.log" --data "$dir/data" --write-rate 0 ${CHATD_ARGS:-}
url="http://127.0.0.1:$port"
export BENCH_TOKENS="$dir/tokens"

rate() {  # rate NAME PATH [WRK ARGS...]: one wrk run, its rate and latency kept in $dir/rates
    wrk -t16 -c16 -d"${seconds}s" --latency "${@:3}" "$url$2" > "$dir/$1.wrk"
    if grep -q "Non-2xx" "$dir/$1.wrk"; then echo "  $1 refused: $(grep Non-2xx "$dir/$1.wrk")"; fi
    awk -v name="$1" '/Requests\/sec/ { rate = $2 } /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 }
        END { printf "%s %s %s %s\n", name, rate, p50, p99 }' "$dir/$1.wrk" >> "$dir/rates"
}
: > "$dir/rates"
rate send / -s scripts/wrk/send.lua  # also the history the reads find
rate health /v1/health
BENCH_READ=history rate history / -s scripts/wrk/read.lua
BENCH_READ=list rate list / -s scripts/wrk/read.lua
awk 'NR == FNR && $1 == "health" { health = $2 } NR == FNR { next }
     { printf "%-8s %9.0f req/s  p50 %-8s p99 %-8s = %.3f x GET /v1/health (%.0f req/s)\n", $1, $2, $3, $4, $2 / health, health }' \
    "$dir/rates" "$dir/rates"
