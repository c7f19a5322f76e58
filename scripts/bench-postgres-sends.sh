#!/usr/bin/env bash
# Sends on PostgreSQL, measured also in what this host's noise does not move: the WAL a send
# writes, and how many of conversation_members' updates PostgreSQL made in place (heap-only:
# no index entry, no dead one), next to sends/s and the CPU a send (which drift with the
# host). One release chatd on a throwaway PostgreSQL 15 (fsync on, its Unix socket); USERS
# users send to each other in random pairs (scripts/wrk/send-pairs.lua), 16 connections for
# SECONDS. In a short run each conversation's first message and first of each new minute move
# its members in the list's index (docs/ARCHITECTURE.md); a longer run has fewer of those.
#   scripts/bench-postgres-sends.sh [SECONDS] [USERS]     (CHATD_BINARY=… to measure another build)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
export BENCH_USERS=${2:-64}
source scripts/cluster-lib.sh
bench_start chatd-bench-postgres-sends
pg_port=$(free_port)
scripts/postgres.sh start "$dir/postgres" "$pg_port" > /dev/null
export CHATD_DATABASE="postgresql:///postgres?host=$dir/postgres&port=$pg_port&user=postgres"
"$chatd" migrate > /dev/null
bench_users
start_chatd "$dir/chatd.log" --write-rate 0 --data "$dir/node"
sql() { psql "$CHATD_DATABASE" -Atc "$1"; }
members() { sql "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'conversation_members'"; }
start_lsn=$(sql "SELECT pg_current_wal_lsn()")
IFS='|' read -r start_updates start_hot < <(members)
scripts/process-cpu.py snap "$dir/cpu.json"
BENCH_TOKENS="$dir/tokens" wrk -t8 -c16 -d"${seconds}s" --latency -s scripts/wrk/send-pairs.lua \
    "http://127.0.0.1:$port" > "$dir/wrk"
sends=$(awk '/requests in/ { print $1 }' "$dir/wrk")
scripts/process-cpu.py report "$dir/cpu.json" "$sends"
if grep -q "Non-2xx" "$dir/wrk"; then echo "  refused: $(grep Non-2xx "$dir/wrk")"; fi
wal=$(sql "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$start_lsn')")
# chatd's connections report their counts as they end: stop it, wait until they are gone.
stop_process "$chatd_pid"
others() { [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ]; }
wait_for 10 others
IFS='|' read -r updates hot < <(members)
awk -v sends="$sends" -v seconds="$seconds" -v users="$BENCH_USERS" -v wal="$wal" \
    -v updates="$((updates - start_updates))" -v hot="$((hot - start_hot))" 'BEGIN {
    printf "PostgreSQL sends: %d users in random pairs, %d s: %.0f sends/s\n", users, seconds, sends / seconds
    printf "  WAL a send: %.0f bytes\n", wal / sends
    printf "  conversation_members updates: %d, in place (heap-only) %d = %.1f%%\n", updates, hot, updates ? 100 * hot / updates : 0 }'
echo "  send latency: $(awk '/^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 } END { print "p50 " p50 ", p99 " p99 }' "$dir/wrk")"
