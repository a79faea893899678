#!/bin/sh
# Builds the plugin and runs every test suite: `cpu` (runs anywhere) and
# `gpu` (skips, saying why, where no CUDA device is usable). Ends with a line
# "N passed, N failed, N skipped".
#
#   scripts/test.sh [BUILD_DIR]        (default: build)
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
sh scripts/deps.sh --tests || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" || exit 1
fi
ninja -C "$build" || exit 1
meson test -C "$build" --print-errorlogs --suite cpu --suite gpu
rc=$?
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
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
PY
exit $rc
