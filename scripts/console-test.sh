#!/usr/bin/env bash
# The operator console (/admin) in a real browser: Debian's chromium, headless, driven by
# Selenium, with the `chat` CLI as the SDK client that sees what the operator does. Twice:
# against one chatd on embedded SQLite, then against three nodes (PostgreSQL, NATS) behind
# HAProxy. A screenshot of each screen lands in .build/console-screenshots (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
(cd Server && ${SWIFT:-swift} build -Xswiftc -warnings-as-errors --product chatd)
(cd Tools && ${SWIFT:-swift} build -Xswiftc -warnings-as-errors --product chat)
chatd=$PWD/Server/.build/debug/chatd
chat=$PWD/Tools/.build/debug/chat
shots=$PWD/.build/console-screenshots
rm -rf "$shots"

echo "== one chatd (SQLite)"
python3 Server/Tests/Console/console_test.py "$chatd" "$chat" "$shots"

echo "== three chatd nodes (PostgreSQL, NATS) behind HAProxy"
source scripts/cluster-lib.sh
scratch console-cluster
export CHATD_ADMIN_KEY=console-test-cluster-admin-key-of-32-bytes
start_bench_cluster
python3 Server/Tests/Console/console_test.py "$front" "$chat" "$shots" 3
echo "console screenshots: $shots"
