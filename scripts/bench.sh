#!/usr/bin/env bash
# `make bench`: release builds, then chatd-bench against a real chatd process.
# Figures and the commands behind them are recorded in docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
(cd Server && swift build -c release 2>&1 | tail -1)
Server/.build/release/chatd-bench Server/.build/release/chatd "$@"
