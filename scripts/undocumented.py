#!/usr/bin/env python3
"""Lists the public symbols of a Swift symbol graph that have no doc comment, and fails if
there are any (several graphs may be given). Members the compiler writes itself (an enum's `hashValue`, `hash(into:)`) have
no source location and are left out.

    scripts/undocumented.py .build/docs/sdk/OfflineChat.symbols.json [MORE.symbols.json …]
"""
import json
import sys

missing = []
for graph_path in sys.argv[1:]:
    graph = json.load(open(graph_path))
    for symbol in graph["symbols"]:
        location = symbol.get("location")
        if "docComment" in symbol or location is None:
            continue
        path = location["uri"].split("/Sources/")[-1]
        line = location["position"]["line"] + 1
        missing.append(f"{path}:{line}: {'.'.join(symbol['pathComponents'])} has no doc comment")
for line in sorted(missing):
    print(line)
if missing:
    print(f"{len(missing)} public symbols undocumented", file=sys.stderr)
    sys.exit(1)
