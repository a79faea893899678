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
python3 scripts/test-summary.py "$build/meson-logs/testlog.json"
exit $rc
