# Sourced by the demos, schemathesis.sh and the bench scripts: a scratch directory whose
# processes and PostgreSQL cluster go when the script exits, free loopback ports, waits, a
# chatd on an ephemeral port, nats-server, HAProxy in front of chatd nodes (the configuration
# docs/DEPLOY.md describes), and the benches' release chatd and users.

release_chatd_and_chat() {  # builds chatd and the chat client (release); sets $chatd and $chat
    (cd Server && swift build -c release --product chatd 2>&1 | tail -1)
    swift build --package-path Tools -c release --product chat 2>&1 | tail -1
    chatd=$PWD/Server/.build/release/chatd
    chat=$PWD/Tools/.build/release/chat
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_for() {  # wait_for SECONDS COMMAND...: retries COMMAND every 0.1 s
    local tries=$(( $1 * 10 )); shift
    for _ in $(seq "$tries"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    return 1
}

scratch() {  # scratch NAME: sets $dir (reachable by the postgres account) and $pids, cleaned on exit
    dir=$(mktemp -d "/tmp/$1.XXXXXX")
    chmod 755 "$dir"
    pids=()
    trap cleanup EXIT
}

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ -d "$dir/postgres" ]; then scripts/postgres.sh stop "$dir/postgres"; fi
    rm -rf "$dir"
}

stop_process() {  # stop_process PID: SIGTERM, waits, and drops it from $pids (cleanup must not signal a reused pid)
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    local kept=() pid
    for pid in "${pids[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
    pids=("${kept[@]}")
}

start_chatd() {  # start_chatd LOG ARGS...: $chatd with ARGS on an ephemeral port; sets $chatd_pid and $port
    local log=$1
    shift
    "$chatd" --port 0 "$@" > "$log" 2>&1 &
    chatd_pid=$!
    pids+=("$chatd_pid")
    wait_for 10 grep -q "listening on" "$log" || { echo "chatd did not start:"; cat "$log"; return 1; }
    port=$(grep -o '127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
}

start_nats() {  # nats-server as scripts/nats.conf (chatd's own account, no anonymous clients); sets $nats_url and $nats_args
    # Fresh secrets in $dir (0600): the NATS password and the bus key every node seals frames with.
    local port cfg
    port=$(free_port)
    openssl rand -hex 32 > "$dir/nats.password"
    openssl rand -hex 32 > "$dir/bus.key"
    chmod 600 "$dir/nats.password" "$dir/bus.key"
    cfg=$(< "$(dirname "${BASH_SOURCE[0]}")/nats.conf")
    cfg=${cfg//@PORT@/$port}; cfg=${cfg//@TLS@/}
    cfg=${cfg//@PASSWORD@/$(< "$dir/nats.password")}; cfg=${cfg//@OTHER_PASSWORD@/$(openssl rand -hex 32)}
    (umask 077; printf '%s\n' "$cfg" > "$dir/nats.conf")
    /usr/sbin/nats-server -c "$dir/nats.conf" > "$dir/nats.log" 2>&1 &
    pids+=($!)
    wait_for 10 grep -q "Server is ready" "$dir/nats.log"
    nats_url="nats://127.0.0.1:$port"
    nats_args=(--nats "$nats_url" --nats-user chatd --nats-password-file "$dir/nats.password" --bus-key-file "$dir/bus.key")
}

nats_greeting() {  # nats_greeting PORT: what nats-server answers a client that brings no credentials
    python3 - "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.recv(4096)  # INFO
s.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
print(s.recv(4096).decode().strip())
PY
}

start_haproxy() {  # start_haproxy PORT BALANCE NAME=PORT...: scripts/haproxy.cfg, health-checked every 0.5 s
    local port=$1 balance=$2 servers="" node cfg
    shift 2
    for node in "$@"; do servers+="    server ${node%%=*} 127.0.0.1:${node#*=} check"$'\n'; done
    cfg=$(< "$(dirname "${BASH_SOURCE[0]}")/haproxy.cfg")
    cfg=${cfg//@PORT@/$port}; cfg=${cfg//@BALANCE@/$balance}; cfg=${cfg//@CHECK_INTERVAL@/500ms}; cfg=${cfg//@RISE@/2}
    printf '%s\n' "${cfg//@SERVERS@/$servers}" > "$dir/haproxy.cfg"
    haproxy -f "$dir/haproxy.cfg" -db > "$dir/haproxy.log" 2>&1 &
    pids+=($!)
    wait_for 20 curl -sf "http://127.0.0.1:$port/v1/health"
}

start_bench_postgres() {  # start_bench_postgres: a throwaway PostgreSQL (fsync on), migrated; exports CHATD_DATABASE
    # Reached over its Unix socket: on the benches' shared cores loopback TCP cost the
    # cluster 30% of its sends (docs/DEPLOY.md).
    local pg_port
    pg_port=$(free_port)
    scripts/postgres.sh start "$dir/postgres" "$pg_port" >/dev/null
    export PGPASSFILE=$dir/postgres.pgpass
    export CHATD_DATABASE="postgresql:///postgres?host=$dir/postgres&port=$pg_port&user=postgres"
    "$chatd" migrate >/dev/null
}

wrk_answered() {  # wrk_answered FILE: the requests wrk's report FILE counts, less those answered outside 2xx/3xx
    awk '/requests in/ { total = $1 } /Non-2xx/ { refused = $NF } END { print total - refused }' "$1"
}

wrk_refused() {  # wrk_refused FILE [NAME]: says how many requests of wrk's report FILE were refused, if any
    if grep -q "Non-2xx" "$1"; then echo "  ${2:+$2 }refused: $(grep Non-2xx "$1")"; fi
}

wrk_latency() {  # wrk_latency FILE: "p50 …, p99 …" from wrk's --latency report FILE
    awk '/^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 } END { print "p50 " p50 ", p99 " p99 }' "$1"
}

start_bench_cluster() {  # start_bench_cluster: the benches' cluster; sets $front, $node_urls, $node_pids and exports CHATD_DATABASE
    # A throwaway PostgreSQL (start_bench_postgres), nats-server, three chatd nodes (no write
    # rate limit; $bench_node_args, an array, adds to their options) and HAProxy (round robin)
    # in front, all on this machine's cores.
    local node node_port proxy_port servers=()
    start_bench_postgres
    start_nats
    node_urls=()
    node_pids=()
    for node in one two three; do
        node_port=$(free_port)
        "$chatd" --listen "127.0.0.1:$node_port" "${nats_args[@]}" --node-id "$node" --write-rate 0 \
            --data "$dir/node-$node" --media "$dir/media" ${bench_node_args[@]+"${bench_node_args[@]}"} \
            > "$dir/$node.log" 2>&1 &
        pids+=($!)
        node_pids+=($!)
        wait_for 20 curl -sf "http://127.0.0.1:$node_port/v1/health" ||
            { echo "chatd node $node did not start:"; cat "$dir/$node.log"; return 1; }
        servers+=("$node=$node_port")
        node_urls+=("http://127.0.0.1:$node_port")
    done
    proxy_port=$(free_port)
    start_haproxy "$proxy_port" roundrobin "${servers[@]}"
    front="http://127.0.0.1:$proxy_port"
}

bench_start() {  # bench_start NAME: a release chatd in $chatd ($CHATD_BINARY, or built), a scratch directory, the benches' admin key
    export PATH="/opt/swift/usr/bin:$PATH"
    if [ -n "${CHATD_BINARY:-}" ]; then
        chatd=$(realpath "$CHATD_BINARY")
    else
        (cd Server && swift build -c release --product chatd 2>&1 | tail -1)
        chatd=$PWD/Server/.build/release/chatd
    fi
    scratch "$1"
    export CHATD_ADMIN_KEY=bench-admin-key-of-32-bytes-or-more
    unset CHATD_DATABASE  # it would override --data: a bench's single node is embedded SQLite
}

bench_users() {  # bench_users ARGS...: users u0…u15 (or u0…u(N-1) when $bench_user_count is N) and a token each, one a line, into $dir/tokens
    : > "$dir/tokens"
    for index in $(seq 0 $(( ${bench_user_count:-16} - 1 ))); do
        "$chatd" user add "u$index" "$@" >/dev/null
        "$chatd" token "u$index" "$@" >> "$dir/tokens"
    done
}
