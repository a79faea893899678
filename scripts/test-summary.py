#!/usr/bin/env python3
"""Prints "N passed, N failed, N skipped" from a meson testlog.json."""
import json
import sys

counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    result = json.loads(line)["result"]
    if result in ("OK", "EXPECTEDFAIL"):
        counts["OK"] += 1
    elif result == "SKIP":
        counts["SKIP"] += 1
    else:
        counts["FAIL"] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
