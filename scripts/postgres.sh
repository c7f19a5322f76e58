#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for tests, demos and benchmarks, on loopback only.
#   scripts/postgres.sh start DIR PORT [fast]   initdb DIR if new, start it, print its url
#   scripts/postgres.sh stop DIR                 stop it (fast shutdown)
# initdb refuses root, so the cluster belongs to the postgres account (runuser when root).
# Every connection needs the postgres account's password (scram-sha-256, generated at initdb):
# it is in DIR.pgpass (0600, libpq's password file), which callers export as PGPASSFILE, so
# the url holds none (docs/DEPLOY.md).
# `fast` turns fsync and synchronous commit off: for tests only, never for data you keep.
set -euo pipefail
bin=/usr/lib/postgresql/15/bin
command=${1:?start or stop}
dir=${2:?data directory}
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "$command" in
start)
    port=${3:?port}
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    chmod 700 "$dir"
    if [ ! -f "$dir/PG_VERSION" ]; then
        password=$(openssl rand -hex 24)
        (umask 077; echo "*:*:*:postgres:$password" > "$dir.pgpass")
        (umask 077; printf '%s\n' "$password" > "$dir.initdb-password")
        if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir.initdb-password"; fi
        as_postgres "$bin/initdb" -D "$dir" -A scram-sha-256 --pwfile="$dir.initdb-password" -U postgres \
            -E UTF8 --locale=C >/dev/null
        rm -f "$dir.initdb-password"
    fi
    options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=128MB"
    if [ "${4:-}" = fast ]; then options="$options -c fsync=off -c synchronous_commit=off -c full_page_writes=off"; fi
    as_postgres "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -o "$options" -w -t 30 start >/dev/null
    echo "postgres://postgres@127.0.0.1:$port"
    ;;
stop)
    as_postgres "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: $0 start DIR PORT [fast] | stop DIR" >&2
    exit 2
    ;;
esac
