#!/usr/bin/env bash
# Sends on PostgreSQL, measured also in what this host's noise does not move: the WAL a send
# writes, and how many of conversation_members' updates PostgreSQL made in place (heap-only:
# no index entry, no dead one), next to sends/s and the CPU a send (which drift with the
# host). One release chatd on a throwaway PostgreSQL 15 (fsync on, its Unix socket); USERS
# users send to each other in random pairs (scripts/wrk/send.lua, BENCH_PAIRS=random), 16
# connections for SECONDS. A conversation's first message of each minute moves its members in
# the list's index (docs/ARCHITECTURE.md); every other update is made in place unless its page
# is full.
#   scripts/bench-postgres-sends.sh [SECONDS] [USERS]     (CHATD_BINARY=… to measure another build)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
bench_user_count=${2:-64}
[ "$bench_user_count" -ge 2 ] || { echo "USERS: at least 2 (they send to each other)" >&2; exit 2; }
source scripts/cluster-lib.sh
bench_start chatd-bench-postgres-sends
start_bench_postgres
bench_users
start_chatd "$dir/chatd.log" --write-rate 0 --data "$dir/node"
sql() { psql "$CHATD_DATABASE" -Atc "$1"; }
members() { sql "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'conversation_members'"; }
start_lsn=$(sql "SELECT pg_current_wal_lsn()")
IFS='|' read -r start_updates start_hot < <(members)
scripts/process-cpu.py snap "$dir/cpu.json"
started=$(date +%s%3N)
BENCH_TOKENS="$dir/tokens" BENCH_PAIRS=random wrk -t8 -c16 -d"${seconds}s" --latency -s scripts/wrk/send.lua \
    "http://127.0.0.1:$port" > "$dir/wrk"
ended=$(date +%s%3N)
# Sends that were answered 201 (or 200 for a repeat): what the WAL and CPU are shared among.
sends=$(wrk_answered "$dir/wrk")
wrk_refused "$dir/wrk"
[ "$sends" -gt 0 ] || { echo "no send was answered:"; cat "$dir/wrk" "$dir/chatd.log"; exit 1; }
scripts/process-cpu.py report "$dir/cpu.json" "$sends"
wal=$(sql "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$start_lsn')")
# chatd's connections report their counts as they end: stop it, wait until they are gone.
stop_process "$chatd_pid"
others() { [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ]; }
wait_for 10 others || { echo "chatd's connections to PostgreSQL did not end" >&2; exit 1; }
IFS='|' read -r updates hot < <(members)
awk -v sends="$sends" -v ms="$((ended - started))" -v users="$bench_user_count" -v wal="$wal" \
    -v updates="$((updates - start_updates))" -v hot="$((hot - start_hot))" \
    -v minutes="$((ended / 60000 - started / 60000))" 'BEGIN {
    seconds = ms / 1000
    printf "PostgreSQL sends: %d users in random pairs, %.1f s: %.0f sends/s answered\n", users, seconds, sends / seconds
    printf "  WAL a send: %.0f bytes\n", wal / sends
    printf "  conversation_members updates: %d, in place (heap-only) %d = %.1f%%\n", updates, hot, updates ? 100 * hot / updates : 0
    printf "  minutes begun during the run: %d (each moves its first updated rows in the index)\n", minutes }'
echo "  send latency: $(wrk_latency "$dir/wrk")"
