#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (Swift's -sanitize=fuzzer,address, each compiled with
# the sources of the module it drives) and runs each for SECONDS (default 180) from the seed
# corpus in Fuzz/corpus/<target>. New inputs go to a scratch copy, so a run changes no
# tracked file. Any crash, leak-free memory error or hang fails the run and leaves the input
# in .build/fuzz/<target>/ (replay it with: .build/fuzz/<target>/fuzz <input>).
#   scripts/fuzz.sh            a few minutes each (make fuzz)
#   scripts/fuzz.sh 15         a short bounded run (make test)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-180}
flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -Onone -g)

build() {  # target, module name, module sources...
    local target=$1 module=$2
    shift 2
    mkdir -p ".build/fuzz/$target"
    swiftc "${flags[@]}" -module-name "$module" "$@" -o ".build/fuzz/$target/fuzz" 2>&1 \
        | grep -v "warning: Cannot export local symbol" || true
    [ -x ".build/fuzz/$target/fuzz" ] || { echo "fuzz: building $target failed"; exit 1; }
}

run() {  # target
    local target=$1 scratch
    scratch=$(mktemp -d)
    echo "fuzz: $target for ${seconds}s"
    ( cd ".build/fuzz/$target" && ./fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "$scratch" "$OLDPWD/Fuzz/corpus/$target" > log.txt 2>&1 ) || {
        tail -40 ".build/fuzz/$target/log.txt"
        rm -rf "$scratch"
        echo "fuzz: $target FOUND A CRASH (input saved in .build/fuzz/$target/)"
        exit 1
    }
    grep -E "stat::number_of_executed_units|cov:" ".build/fuzz/$target/log.txt" | tail -2
    rm -rf "$scratch"
}

library() {  # module: an instrumented static library of Sources/<module>, for targets importing it
    swiftc "${flags[@]}" -emit-library -static -emit-module -module-name "$1" "Sources/$1"/*.swift \
        -emit-module-path ".build/fuzz/lib/$1.swiftmodule" -o ".build/fuzz/lib/lib$1.a"
}

rm -f .build/fuzz/*/fuzz
mkdir -p .build/fuzz/lib
# The WebSocket client imports the locks; chatd's HTTP layer imports the wire types (and its log, the locks).
library OfflineChatLocking
library OfflineChatProtocol
build websocket OfflineChatWebSocket -I .build/fuzz/lib -L .build/fuzz/lib -lOfflineChatLocking \
    Sources/OfflineChatWebSocket/*.swift Fuzz/WebSocketFrames.swift
build protocol OfflineChatProtocol Sources/OfflineChatProtocol/*.swift Fuzz/ProtocolJSON.swift
build http ChatServer -I .build/fuzz/lib -L .build/fuzz/lib -lOfflineChatProtocol -lOfflineChatLocking \
    Server/Sources/ChatServer/HTTP/{HTTPRequest,HTTPResponse,Router,EncodedJSON,QueryArguments}.swift Server/Sources/ChatServer/API/Validation.swift \
    Server/Sources/ChatServer/Log.swift \
    Server/Sources/ChatServer/Store/StoreError.swift \
    Fuzz/HTTPRequests.swift
run websocket
run protocol
run http
