#!/usr/bin/env bash
# `make bench`: release builds, then
#   1. chatd-bench against a real chatd process (HTTP, realtime, changelog replay);
#      then chatd-bench --groups: what a group's size costs (docs/GROUPS.md), and --fanout:
#      one group message to 10,000 connected members' sockets;
#   2. cache-bench: the SDK cache's cached phase (message pages and the conversation list)
#      against the raw SQLite C API on the same file, plain, SQLCipher-keyed and populated
#      through catch-up sync pages, and the peak memory of a query-only process;
#   3. outbox-bench: queue-to-pending latency and the flush of a 5,000-message backlog on
#      reconnect, each against a baseline taken in the same run;
#   4. sync-bench: the catch-up of a 100,000-change backlog against a raw SQLite bulk insert
#      of the same rows, and the peak memory of the client process during it;
#   5. bench-cluster.sh: sends through a three-node cluster behind HAProxy against one
#      SQLite node, with wrk;
#   6. cluster-bench: on a three-node cluster, cross-node send → delivery with 300 sockets,
#      changelog replay, and the time from a node's kill until SDK clients have caught up;
#   7. bench-reads-postgres.sh: the conversation list and a history page on one PostgreSQL
#      node, with wrk;
#   8. bench-wrk.sh: sends, a history page and the conversation list on one SQLite node, with
#      wrk, against the same-run health baseline (with each path's CPU a request, chatd's and
#      the machine's, and the ratio that CPU allows), and the same through the PostgreSQL
#      cluster's HAProxy front;
#   9. lock-bench: `Locked` against `Synchronization.Mutex` with 1 to 64 threads;
#  10. json-bench: a 30-message history page written by chatd's `CompactJSONEncoder` against
#      Foundation's `JSONEncoder` in the same run;
#  11. bench-instructions.sh: the instructions chatd spends on one request of each hot path
#      (callgrind), a measure this host's noise does not move;
#  12. bench-postgres-sends.sh: sends on one PostgreSQL node in random pairs, with the WAL a
#      send writes and the share of members' rows PostgreSQL rewrote in place;
#   plus the cost of encryption: cache-bench --compare-encryption and sync-bench's encrypted
#   ingest put a plain and an SQLCipher cache side by side in one run.
# Figures and the commands behind them are recorded in docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
(cd Server && swift build -c release 2>&1 | tail -1)
swift build --package-path Tools -c release --product cache-bench 2>&1 | tail -1
Server/.build/release/chatd-bench Server/.build/release/chatd "$@"
echo
# 1b. what a group's size costs (issue #42): groups of 1,000, 10,000 and 100,000 on one SQLite
#     node, each build capped at two minutes (today's joins cost O(members) each).
Server/.build/release/chatd-bench Server/.build/release/chatd --groups 1000,10000,100000 --group-budget 120
# 1c. one group message to 10,000 connected members: delivery latency and chatd's memory a socket.
Server/.build/release/chatd-bench Server/.build/release/chatd --fanout 10000 --fanout-sends 50
echo
# 1d. the same group sizes on the three-node PostgreSQL cluster behind HAProxy, and
# 1e. the fan-out to 10,000 members' sockets spread over its three nodes.
scripts/bench-groups-cluster.sh
echo
scripts/bench-fanout-cluster.sh
echo
Tools/.build/release/cache-bench
echo
Tools/.build/release/cache-bench --encrypted
echo
Tools/.build/release/cache-bench --synced
echo
Tools/.build/release/cache-bench --compare-encryption --messages 200000 --conversations 200
echo
swift build --package-path Tools -c release --product outbox-bench 2>&1 | tail -1
CHATD_BINARY=Server/.build/release/chatd Tools/.build/release/outbox-bench
echo
swift build --package-path Tools -c release --product sync-bench 2>&1 | tail -1
CHATD_BINARY=Server/.build/release/chatd Tools/.build/release/sync-bench
echo
# 5. the cluster: sends through HAProxy to three nodes on PostgreSQL + NATS against a single
#    SQLite node, both driven by wrk in this run.
scripts/bench-cluster.sh
echo
# 6. the cluster's delivery, replay and failover figures (next to a throwaway PostgreSQL).
swift build --package-path Tools -c release --product cluster-bench 2>&1 | tail -1
scripts/with-postgres.sh env CHATD_BINARY=Server/.build/release/chatd Tools/.build/release/cluster-bench
echo
# 7. reads on PostgreSQL, where every query is a round trip.
scripts/bench-reads-postgres.sh
echo
# 8. chatd's hot paths on SQLite, driven by wrk, then the same through the cluster.
scripts/bench-wrk.sh
echo
scripts/bench-wrk.sh 5 3 cluster
echo
# 9. the lock both packages use against Synchronization.Mutex, with more threads than cores.
swift build --package-path Tools -c release --product lock-bench 2>&1 | tail -1
Tools/.build/release/lock-bench
echo
# 10. what a history page's answer costs to write.
swift build --package-path Tools -c release --product json-bench 2>&1 | tail -1
Tools/.build/release/json-bench
echo
# 11. the same hot paths counted in instructions, which no neighbour on this host can slow.
CHATD_BINARY=Server/.build/release/chatd scripts/bench-instructions.sh
echo
# 12. sends on PostgreSQL in what the host's noise does not move: WAL bytes, in-place updates.
CHATD_BINARY=Server/.build/release/chatd scripts/bench-postgres-sends.sh
