#!/usr/bin/env bash
# Runs schemathesis (PyPI) against a live chatd with docs/openapi.yaml: fails on any 5xx,
# an undocumented status, a wrong content type or a response that breaks its schema. On
# SQLite, or on PostgreSQL when CHATD_TEST_POSTGRES names a server.
# One worker: with two, Hypothesis (6.155) raced on a shared cache and failed a run by
# itself (FlakyFailure in lambda_sources), and two took no less time. `revokeOwnToken` is left
# out: it would revoke the run's own token (the live tests cover it).
set -euo pipefail
cd "$(dirname "$0")/.."
chatd=Server/.build/debug/chatd
[ -x "$chatd" ] || { echo "build chatd first (make build)"; exit 1; }

source scripts/cluster-lib.sh
scratch chatd-schemathesis
# Next to scripts/with-postgres.sh, chatd runs on a database of its own there.
if [ -n "${CHATD_TEST_POSTGRES:-}" ]; then
    database="chatd_schemathesis_$$"
    psql -q "$CHATD_TEST_POSTGRES/postgres" -c "CREATE DATABASE $database"
    export CHATD_DATABASE="$CHATD_TEST_POSTGRES/$database"
fi
start_chatd "$dir/chatd.log" --data "$dir/data" --admin-key schemathesis-admin-key-of-32-bytes
base="http://127.0.0.1:$port"

admin=(-H "X-Admin-Key: schemathesis-admin-key-of-32-bytes" -H "Content-Type: application/json")
curl -sf "${admin[@]}" -d '{"uid":"alice"}' "$base/v1/admin/users" >/dev/null
curl -sf "${admin[@]}" -d '{"uid":"bob"}' "$base/v1/admin/users" >/dev/null
token=$(curl -sf "${admin[@]}" -d '{"ttlSeconds":86400}' "$base/v1/admin/users/alice/tokens" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["authToken"])')
curl -sf -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
     -d '{"muid":"seed","receiver":"bob","receiverType":"user","category":"message","type":"text","text":"hi"}' \
     "$base/v1/messages" >/dev/null
curl -sf -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
     -d '{"guid":"g","name":"Team","type":"public"}' "$base/v1/groups" >/dev/null
curl -sf -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
     -d '{"uid":"bob"}' "$base/v1/groups/g/members" >/dev/null

schemathesis run docs/openapi.yaml --url "$base" \
    -H "Authorization: Bearer $token" -H "X-Admin-Key: schemathesis-admin-key-of-32-bytes" \
    --generation-with-security-parameters false \
    --exclude-operation-id revokeOwnToken \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "${SCHEMATHESIS_EXAMPLES:-60}" --seed 1 --workers 1 --phases examples,coverage,fuzzing
kill -0 "$chatd_pid" || { echo "chatd died during the run"; cat "$dir/chatd.log"; exit 1; }
