#!/usr/bin/env bash
# Runs a command next to a throwaway PostgreSQL (scripts/postgres.sh, fsync off) on a free
# loopback port, exported as CHATD_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT with its
# password file as PGPASSFILE; the tests make one database per chatd in it. The cluster is
# removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/chatd-postgres.XXXXXX)
chmod 755 "$dir"  # the postgres account must reach its data directory inside
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trap 'scripts/postgres.sh stop "$dir/data"; rm -rf "$dir"' EXIT
export CHATD_TEST_POSTGRES PGPASSFILE=$dir/data.pgpass
CHATD_TEST_POSTGRES=$(scripts/postgres.sh start "$dir/data" "$port" fast)
"$@"
