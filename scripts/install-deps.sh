#!/usr/bin/env bash
# Installs what the build and the tests need and this machine lacks: Debian -dev packages
# for the C libraries, the sqlcipher and sqlite3 shells (the encryption tests open the
# cache with them), openssl (the TLS tests make their certificate), tmux for terminal tests,
# PostgreSQL (chatd's second engine: libpq to link, the server for its tests), NATS (the bus
# between chatd nodes: libnats to link, nats-server for the cluster tests), HAProxy (in front
# of the nodes in the cluster demo and tests), wrk (a load generator for benchmarks), valgrind
# (callgrind counts a request's instructions for scripts/bench-instructions.sh) and Python test
# tools from PyPI (prometheus-client's parser reads chatd's /metrics in the tests), and Debian's
# chromium with its driver and PyPI's selenium for the operator console's browser tests.
set -euo pipefail

debs=(libsqlcipher-dev libsqlite3-dev libmicrohttpd-dev libssl-dev libpq-dev postgresql libnats-dev nats-server haproxy wrk valgrind openssl pkg-config tmux curl sqlcipher sqlite3 chromium chromium-driver)
missing=()
for deb in "${debs[@]}"; do
    dpkg -s "$deb" >/dev/null 2>&1 || missing+=("$deb")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing Debian packages: ${missing[*]}"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c 'import websockets, schemathesis, prometheus_client, selenium' >/dev/null 2>&1; then
    echo "installing Python test tools: websockets schemathesis prometheus-client selenium"
    python3 -m pip install -q --disable-pip-version-check websockets schemathesis prometheus-client selenium
fi
