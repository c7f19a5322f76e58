#!/usr/bin/env bash
# The operator console (/admin) in a real browser: Debian's chromium, headless, driven by
# Selenium, against a real chatd on a loopback port, with the `chat` CLI as the SDK client
# that sees what the operator does. A screenshot of each screen lands in
# .build/console-screenshots (not committed) for a person to look at.
set -euo pipefail
cd "$(dirname "$0")/.."
(cd Server && ${SWIFT:-swift} build -Xswiftc -warnings-as-errors --product chatd)
(cd Tools && ${SWIFT:-swift} build -Xswiftc -warnings-as-errors --product chat)
python3 Server/Tests/Console/console_test.py Server/.build/debug/chatd Tools/.build/debug/chat \
    "$PWD/.build/console-screenshots"
echo "console screenshots: $PWD/.build/console-screenshots"
