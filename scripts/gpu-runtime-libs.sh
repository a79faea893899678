#!/bin/sh
# Adds to a GStreamer runtime gathered by ../shared/gpu/gst-runtime.sh the
# shared libraries this build's plugin, tests and examples link that the
# runtime lacks (json-glib, libsoup 3 and theirs), so that the plugin loads
# on a GPU host with no GLib; glibc's and the compiler's own stay out.
#
#   scripts/gpu-runtime-libs.sh [BUILD_DIR] [RUNTIME]   (build, .gpu/gst)
set -eu
build=${1:-build}
runtime=${2:-.gpu/gst}
[ -d "$runtime/lib" ] || { echo "no $runtime/lib: run ../shared/gpu/gst-runtime.sh $runtime first" >&2; exit 1; }
for f in "$build"/plugin/*.so "$build"/tests/test-* "$build"/examples/*; do
  [ -f "$f" ] && [ -x "$f" ] || continue
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  name=$(basename "$lib")
  case $name in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libstdc++.so*|libgcc_s.so*) continue ;;
  esac
  if [ ! -e "$runtime/lib/$name" ]; then
    cp -L "$lib" "$runtime/lib/"
    echo "added $name"
  fi
done
