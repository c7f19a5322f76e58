#!/usr/bin/env python3
"""Checks that every Swift code block of the DocC articles is a test's code.

A block preceded by `<!-- The code below is <path>'s example ... -->` must equal, line by line
(indentation and the block's `import` lines aside), the lines between
`// The article's example begins.` and `// The article's example ends.` in <path>; with a name,
`<path>'s example "log in"` pairs with `// The article's example "log in" begins.` and
`... "log in" ends.`. The tests run in `make test`; this keeps the articles from drifting away
from them. A block that is not Swift an app compiles (a fragment of a Package.swift manifest)
says so with `<!-- Not compiled: <why> -->` right above it; any other block fails the check.
"""
import pathlib
import re
import sys

MARK = re.compile(r"<!-- The code below is (\S+?)'s example(?: \"([^\"]+)\")?")
EXEMPT = "<!-- Not compiled:"
FENCE = "```swift\n"


def lines(text):
    kept = "\n".join(line for line in text.split("\n") if not line.startswith("import "))
    return [line.strip() for line in kept.strip().split("\n")]


def region(source, name):
    label = f' "{name}"' if name else ""
    begin_marker = f"// The article's example{label} begins.\n"
    end_marker = f"// The article's example{label} ends."
    if begin_marker not in source or end_marker not in source:
        return None
    begin = source.index(begin_marker) + len(begin_marker)
    return source[begin: source.index(end_marker, begin)]


def main(articles):
    failures = checked = 0
    for article in articles:
        text = pathlib.Path(article).read_text()
        start = 0
        while (fence := text.find(FENCE, start)) >= 0:
            start = fence + len(FENCE)
            block = text[start: text.index("```", start)]
            above = text[:fence].rstrip().rsplit("\n", 1)[-1]
            if above.startswith(EXEMPT):
                continue
            match = MARK.match(above)
            if not match:
                print(f"{article}: a Swift block no test holds: {block.strip().splitlines()[0]}")
                failures += 1
                continue
            path, name = match.group(1), match.group(2)
            code = region(pathlib.Path(path).read_text(), name)
            checked += 1
            if code is None:
                print(f"{article}: {path} has no example {name or ''}")
                failures += 1
            elif lines(block) != lines(code):
                print(f"{article}: its example {name or ''} differs from {path}'s")
                failures += 1
    print(f"doc examples checked against their tests: {checked}, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
