#!/usr/bin/env bash
# chatd's hot paths driven by wrk (a load generator nobody here wrote) against one release chatd
# on embedded SQLite, or with `cluster` against the PostgreSQL cluster (three nodes, NATS and
# HAProxy, as scripts/bench-cluster.sh starts it) through its front, each as a ratio to a
# GET /v1/health baseline taken in the same run on the same front:
# sends (scripts/wrk/send.lua: 16 users, each to the next), a conversation's newest 30 messages
# and the conversation list (scripts/wrk/read.lua), 16 connections for SECONDS each.
# The runs go in ROUNDS of health, send, history, list, with one more health at the end: each
# path is measured against the mean of the health run that opens its round and the next one
# (this host's speed drifts by a fifth within minutes), and its line gives the median over the
# rounds (rate, latency, ratio; the lower middle one for an even count) with the rounds' ratios.
# Each line also gives the CPU an answered request in its median round (scripts/process-cpu.py:
# chatd's, every node's in a cluster, and the whole machine's: wrk's, the kernel's, every other
# process's on the host, these scripts' own few milliseconds a run), the cores busy on average,
# and the ratio that CPU allows: the machine's CPU a health check (the two health runs around
# that round) over the path's, the ratio the path would reach keeping the cores as busy as
# health does.
#   scripts/bench-wrk.sh [SECONDS] [ROUNDS] [cluster]
#       (CHATD_ARGS="--threads 4" passes options to the single chatd)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
rounds=${2:-3}
case "${3:-}" in "" | cluster) ;; *) echo "usage: scripts/bench-wrk.sh [SECONDS] [ROUNDS] [cluster]" >&2; exit 2 ;; esac
source scripts/cluster-lib.sh
bench_start chatd-bench-wrk
if [ "${3:-}" = cluster ]; then
    start_bench_cluster
    bench_users
    url=$front
    chatd_pids=$(IFS=,; echo "${node_pids[*]}")
    echo "three chatd nodes on PostgreSQL + NATS behind HAProxy"
else
    bench_users --data "$dir/data"
    # shellcheck disable=SC2086  # CHATD_ARGS is split on purpose
    start_chatd "$dir/chatd.log" --data "$dir/data" --write-rate 0 ${CHATD_ARGS:-}
    url="http://127.0.0.1:$port"
    chatd_pids=$chatd_pid
    echo "one chatd on embedded SQLite"
fi
export BENCH_TOKENS="$dir/tokens"

rate() {  # rate NAME PATH [WRK ARGS...]: one wrk run, its rate, latency and CPU an answered request kept in $dir/rates
    scripts/process-cpu.py snap "$dir/cpu.json"
    wrk -t16 -c16 -d"${seconds}s" --latency "${@:3}" "$url$2" > "$dir/$1.wrk"
    wrk_refused "$dir/$1.wrk" "$1"
    local answered cpu
    answered=$(wrk_answered "$dir/$1.wrk")
    # chatd's CPU (every node's in a cluster), the machine's, and how many cores were busy.
    cpu=$(scripts/process-cpu.py per "$dir/cpu.json" "$answered" "$chatd_pids" --machine --cores) || cpu="nan nan nan"
    awk -v name="$1" -v cpu="$cpu" '/Requests\/sec/ { rate = $2 } /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 }
        END { printf "%s %s %s %s %s\n", name, rate, p50, p99, cpu }' "$dir/$1.wrk" >> "$dir/rates"
}
: > "$dir/rates"
for round in $(seq "$rounds"); do
    rate health /v1/health
    rate send / -s scripts/wrk/send.lua  # also the history the reads find
    BENCH_READ=history rate history / -s scripts/wrk/read.lua
    BENCH_READ=list rate list / -s scripts/wrk/read.lua
done
rate health /v1/health
# Each path's ratio against the mean of the health runs around its round; the median round per path.
python3 - "$dir/rates" <<'SUMMARY'
import statistics, sys
runs = [line.split() for line in open(sys.argv[1])]
healths = [run for run in runs if run[0] == "health"]
print("%-8s %9.0f req/s  (median of %d runs: %s)" % (
    "health", statistics.median(float(run[1]) for run in healths), len(healths),
    " ".join("%.0f" % float(run[1]) for run in healths)))
print("%-8s CPU a request: chatd %.1f µs, the machine %.1f µs (medians); cores busy %s" % (
    "", statistics.median(float(run[4]) for run in healths), statistics.median(float(run[5]) for run in healths),
    " ".join(run[6] for run in healths)))
rounds, before = {}, 0
for index, (name, rate, p50, p99, chatd, machine, cores) in enumerate(runs):
    if name == "health":
        before = index
        continue
    after = next(i for i in range(index, len(runs)) if runs[i][0] == "health")
    baseline, baseline_cpu = ((float(runs[before][k]) + float(runs[after][k])) / 2 for k in (1, 5))
    rounds.setdefault(name, []).append(
        (float(rate) / baseline, float(rate), p50, p99, float(chatd), float(machine), cores,
         baseline_cpu / float(machine)))
for name, measured in rounds.items():
    ratio, rate, p50, p99, chatd, machine, cores, allowed = sorted(measured)[(len(measured) - 1) // 2]
    print("%-8s %9.0f req/s  p50 %-8s p99 %-8s = %.3f x GET /v1/health (median round; rounds %s)" % (
        name, rate, p50, p99, ratio, " ".join("%.3f" % m[0] for m in measured)))
    # A path's ratio is health's CPU a request over the path's, times how busy the path keeps
    # the cores over how busy health keeps them: the first factor alone is the ratio the path
    # would reach keeping the cores as busy as health does (both against the same health runs).
    print("%-8s that round's CPU a request: chatd %.1f µs, the machine %.1f µs (cores busy %s):"
          " %.3f x with the cores as busy as health keeps them" % ("", chatd, machine, cores, allowed))
SUMMARY
