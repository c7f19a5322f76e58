#!/usr/bin/env bash
# The instructions a release chatd (embedded SQLite) spends on one request of each hot path,
# counted by valgrind's callgrind: a measure this host's noise does not move (its request
# rates drift by a fifth within minutes; two builds' counts differ by their code alone).
# One client sends REQUESTS of each path in turn, one at a time on one connection
# (scripts/instructions_client.py): GET /v1/health, a conversation's newest 30 messages, the
# conversation list, and sends (each its own group commit, so a send here carries a whole
# commit; under load a batch shares one). chatd runs under callgrind with counting off until
# every path has run once; each path's count is then dumped on its own (with whatever chatd's
# other threads did meanwhile, little next to the requests).
# Only user space is counted: the kernel's share of a request (its socket calls, the WAL's
# writes) is not. memset is listed apart: valgrind counts `rep stosb` a byte an instruction,
# so libmicrohttpd's clearing of a connection's 32 KB memory pool for each request looks far
# costlier than it is.
#   scripts/bench-instructions.sh [REQUESTS]        (CHATD_BINARY=… to count another build)
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-2000}
command -v valgrind > /dev/null || { echo "needs valgrind (apt-get install -y valgrind)" >&2; exit 1; }
source scripts/cluster-lib.sh
bench_start chatd-instructions
bench_users --data "$dir/data"
client() { python3 scripts/instructions_client.py "$port" "$dir/tokens" "$@"; }

start_chatd "$dir/seed.log" --data "$dir/data" --write-rate 0
client seed 600  # 40 messages to each of u1…u15
stop_process "$chatd_pid"

valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$dir/counts" \
    "$chatd" --port 0 --data "$dir/data" --write-rate 0 > "$dir/chatd.log" 2>&1 &
chatd_pid=$!
pids+=("$chatd_pid")
wait_for 120 grep -q "listening on" "$dir/chatd.log" || { cat "$dir/chatd.log"; exit 1; }
port=$(grep -o '127.0.0.1:[0-9]*' "$dir/chatd.log" | head -1 | cut -d: -f2)
paths=(health history list send)
for path in "${paths[@]}"; do client "$path" 20; done
dumped() { grep -qs "^totals:" "$dir/counts.$1"; }  # a dump's file ends with its totals
dumps=0
dump() {  # dump NAME: the counts since the last dump, which it zeroes, into counts.N
    callgrind_control --dump="$1" "$chatd_pid" > /dev/null 2>&1
    dumps=$((dumps + 1))
    # chatd takes the command at its next poll: the next requests wait until the file is whole.
    wait_for 60 dumped "$dumps" || { echo "callgrind did not dump $1" >&2; exit 1; }
}
callgrind_control --instr=on "$chatd_pid" > /dev/null 2>&1
dump start
for path in "${paths[@]}"; do
    client "$path" "$requests"
    dump "$path"
done

count() {  # count PATH: "total memset" instructions of the path's dump
    local file
    file=$(grep -l "^desc: Trigger: dump $1\$" "$dir"/counts.* | head -1)
    callgrind_annotate "$file" 2> /dev/null | awk '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
        /:__memset/ && !/</ { gsub(",", "", $1); memset += $1 }
        END { print total + 0, memset + 0 }'
}
read -r health health_memset < <(count health)
echo
echo "chatd instructions a request (callgrind, release, SQLite; $requests requests of each, one at a time)"
printf '  %-34s %9s  %-16s %s\n' "" "a request" "ratio to health" "(memset apart)"
for path in "${paths[@]}"; do
    read -r total memset < <(count "$path")
    case $path in
        health) label="GET /v1/health" ;;
        history) label="GET a conversation's newest 30" ;;
        list) label="GET the conversation list (30)" ;;
        send) label="POST /v1/messages (own commit)" ;;
    esac
    awk -v l="$label" -v t="$total" -v m="$memset" -v h="$health" -v hm="$health_memset" -v n="$requests" 'BEGIN {
        printf "  %-34s %9.0f  %.3f ×           (+ %.0f)\n", l, (t - m) / n, (h - hm) / (t - m), m / n }'
done
