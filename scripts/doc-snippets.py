#!/usr/bin/env python3
"""Checks that each DocC code block marked as a test's example is that test's code.

A block preceded by `<!-- The code below is <path>'s example ... -->` must equal, line by line
(indentation removed), the lines between `// The article's example begins.` and
`// The article's example ends.` in <path>. The test runs in `make test`; this keeps the
article from drifting away from it.
"""
import pathlib
import re
import sys

MARK = re.compile(r"<!-- The code below is (\S+?)'s example")


def lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def main(articles):
    failures = 0
    for article in articles:
        text = pathlib.Path(article).read_text()
        for match in MARK.finditer(text):
            path = match.group(1)
            block = text[text.index("```swift\n", match.end()) + len("```swift\n"):]
            block = block[: block.index("```")]
            source = pathlib.Path(path).read_text()
            begin = source.index("// The article's example begins.\n") + len("// The article's example begins.\n")
            end = source.index("// The article's example ends.")
            if lines(block) != lines(source[begin:end]):
                print(f"{article}: its example differs from {path}'s")
                failures += 1
    print(f"doc examples checked against their tests: {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
