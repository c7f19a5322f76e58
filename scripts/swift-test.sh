#!/usr/bin/env bash
# `swift test ARGS` with a time limit. Output is line-buffered, so a hung run still shows
# every line up to the hang, and on a timeout the tests that started but never finished are
# named: a hang fails CI with the test to look at, instead of a silent stall.
set -uo pipefail
limit="${TEST_TIME_LIMIT:-900}"
log="$(mktemp)"
# The tests' servers, caches and key stores go to a temporary folder of this run's own.
export TMPDIR="$(mktemp -d)"
trap 'rm -rf "$log" "$TMPDIR"' EXIT
stdbuf -oL -eL timeout --kill-after=20 "$limit" "${SWIFT:-swift}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "swift test $* did not finish in ${limit} s. Started, never finished:" >&2
    awk '/^◇ Test .* started\.$/ { name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); open[name] = 1 }
         / Test .* (passed|failed|skipped)/ { for (name in open) if (index($0, " Test " name " ")) delete open[name] }
         END { for (name in open) print "  " name }' "$log" >&2
fi
exit "$status"
