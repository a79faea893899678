#!/bin/sh
# Builds the plugin with AddressSanitizer and UndefinedBehaviorSanitizer
# and runs the cpu test suite under them. Ends with a line
# "N passed, N failed, N skipped". Slower than scripts/test.sh (about ten
# minutes on two cores); not part of CI.
#
#   scripts/test-sanitized.sh [BUILD_DIR]      (default: build-asan)
#
# The scripted tests run programs that are not built with the sanitizers
# (python3, gst-launch-1.0) and load the plugin into them, so the
# sanitizers' runtimes are preloaded. A test that asks for an impossible
# allocation expects NULL, not an abort (allocator_may_return_null).
set -u
cd "$(dirname "$0")/.."
build=${1:-build-asan}
sh scripts/deps.sh --tests || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dbuildtype=debugoptimized \
      -Db_sanitize=address,undefined -Db_lundef=false || exit 1
fi
ninja -C "$build" || exit 1
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
LD_PRELOAD="$asan:$ubsan" \
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=0:verify_asan_link_order=0 \
UBSAN_OPTIONS="suppressions=$PWD/tests/ubsan.supp:print_stacktrace=1:halt_on_error=1" \
GST_REGISTRY_FORK=no \
  meson test -C "$build" --no-rebuild --print-errorlogs --suite cpu -t 4
rc=$?
python3 scripts/test-summary.py "$build/meson-logs/testlog.json"
exit $rc
